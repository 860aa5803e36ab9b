package gpt

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"reflect"

	"github.com/attnbook/attnbook/pkg/torchrand"
)

// trainState is what a checkpoint needs besides the store (weights, AdamW's moments, the global
// step) to continue a run exactly: the training batch stream and the run's history. It is
// stored as the checkpoint's gpt_training parameter (JSON).
type trainState struct {
	Step      int         `json:"step"`      // global step when saved
	Train     TrainConfig `json:"train"`     // the settings of the run
	Generator []byte      `json:"generator"` // torchrand state of the training stream (shared with the estimates under NanoGPTDraws)
	Ahead     []int64     `json:"ahead"`     // offsets of the next training batch, already drawn (nil: none yet)
	TrainIDs  dataPrint   `json:"train_ids"` // what the run trained on
	ValIDs    dataPrint   `json:"val_ids"`
	Losses    []uint64    `json:"losses"` // float64 bits of Trainer.Losses (NaN survives)
	Evals     []evalBits  `json:"evals"`
}

type evalBits struct {
	Step            int
	Train, Validate uint64
}

// dataPrint identifies a token sequence: its length and FNV-1a hash.
type dataPrint struct {
	Len  int    `json:"len"`
	Hash uint64 `json:"fnv64a"`
}

func fingerprint(ids []int32) dataPrint {
	h := fnv.New64a()
	buf := make([]byte, 0, 4096)
	for i, id := range ids {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(id))
		if len(buf) == cap(buf) || i == len(ids)-1 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	return dataPrint{Len: len(ids), Hash: h.Sum64()}
}

// Save writes the model with everything a later Resume needs to continue this run exactly: the
// weights, AdamW's moments and step (the store, as Model.Save), the state of the training batch
// stream, and the history (Losses, Evals). Like Model.Save it replaces dir as a whole.
func (t *Trainer) Save(dir string) error {
	if err := checkTrainer(t, "Trainer.Save"); err != nil {
		return err
	}
	s := trainState{Step: t.Step(), Train: t.tc, Generator: t.trainBatches.gen.State(),
		TrainIDs: t.trainPrint, ValIDs: t.valPrint}
	if t.trainBatches.ahead != nil {
		s.Ahead = t.trainBatches.ahead.offsets
	}
	for _, l := range t.Losses {
		s.Losses = append(s.Losses, math.Float64bits(l))
	}
	for _, e := range t.Evals {
		s.Evals = append(s.Evals, evalBits{e.Step, math.Float64bits(e.Train), math.Float64bits(e.Validate)})
	}
	js, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("gpt.Trainer.Save: %w", err)
	}
	return t.m.save("Trainer.Save", dir, string(js))
}

// decodeTrainState parses and checks a checkpoint's training state for a model of cfg. Its
// errors read as the rest of a sentence that starts "checkpoint in DIR ".
func decodeTrainState(js string, cfg Config) (*trainState, error) {
	var s trainState
	if err := strictJSON(js, &s); err != nil {
		return nil, fmt.Errorf("has a corrupt training state: %w", err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("has a corrupt training state: "+format, args...)
	}
	if err := s.Train.check("Load", "training state's TrainConfig."); err != nil {
		return nil, bad("%v", err)
	}
	if err := torchrand.New(0).SetState(s.Generator); err != nil {
		return nil, bad("%v", err)
	}
	switch {
	case s.Step < 0 || len(s.Losses) > s.Step:
		return nil, bad("step %d with %d losses", s.Step, len(s.Losses))
	case s.Ahead != nil && len(s.Ahead) != s.Train.BatchSize:
		return nil, bad("next batch has %d offsets, want BatchSize %d", len(s.Ahead), s.Train.BatchSize)
	case s.TrainIDs.Len <= cfg.BlockSize || s.ValIDs.Len <= cfg.BlockSize:
		return nil, bad("data of %d and %d ids, want more than block_size %d", s.TrainIDs.Len, s.ValIDs.Len, cfg.BlockSize)
	}
	for _, o := range s.Ahead {
		if o < 0 || o >= int64(s.TrainIDs.Len-cfg.BlockSize) {
			return nil, bad("next batch offset %d outside [0, %d)", o, s.TrainIDs.Len-cfg.BlockSize)
		}
	}
	last := -1
	for _, e := range s.Evals {
		if e.Step < last || e.Step > s.Step {
			return nil, bad("estimate at step %d out of order (step %d)", e.Step, s.Step)
		}
		last = e.Step
	}
	return &s, nil
}

// Resume continues the run that Trainer.Run (or Trainer.Save) saved in dir: it loads the model
// (Load(dir, cfg)) with AdamW's moments and step, and returns a trainer that goes on exactly
// where that run stopped — the same next batches, the same history (Losses, Evals) — so that a
// run stopped at step 150 and resumed to 300 gives the same losses and weights as 300 steps in
// one go. tc must be the run's TrainConfig (MaxIters and LRDecayIters may differ, to train
// longer), trainIDs and valIDs the same ids: anything else is an *ArgumentError naming what
// differs. A checkpoint written by Model.Save holds no training state and is an error too.
func Resume(dir string, cfg Config, tc TrainConfig, trainIDs, valIDs []int32) (*Trainer, error) {
	const fn = "Resume"
	if err := tc.check(fn, "tc."); err != nil {
		return nil, err
	}
	m, err := Load(dir, cfg)
	if err != nil {
		return nil, err
	}
	s := m.saved
	if s == nil {
		return nil, argErr(fn, "dir", "%s holds a model without training state (written by Model.Save): load it with gpt.Load, or train it with Model.NewTrainer", dir)
	}
	want, got := reflect.ValueOf(s.Train), reflect.ValueOf(tc)
	for i := range want.NumField() {
		name := want.Type().Field(i).Name
		if name == "MaxIters" || name == "LRDecayIters" {
			continue
		}
		if !want.Field(i).Equal(got.Field(i)) {
			return nil, argErr(fn, "tc."+name, "is %v, but the run saved in %s used %v: resuming needs the same settings (delete the folder to start over)",
				got.Field(i), dir, want.Field(i))
		}
	}
	for _, d := range []struct {
		name  string
		saved dataPrint
		ids   []int32
	}{{"trainIDs", s.TrainIDs, trainIDs}, {"valIDs", s.ValIDs, valIDs}} {
		if p := fingerprint(d.ids); p != d.saved {
			return nil, argErr(fn, d.name, "(%d ids, FNV-1a %016x) are not the ids the run saved in %s trained on (%d ids, %016x)",
				p.Len, p.Hash, dir, d.saved.Len, d.saved.Hash)
		}
	}
	t, err := m.NewTrainer(tc, trainIDs, valIDs)
	if err != nil {
		return nil, err
	}
	if t.Step() != s.Step {
		return nil, fmt.Errorf("gpt.Resume: checkpoint in %s is at step %d, its training state at step %d: the state is stale", dir, t.Step(), s.Step)
	}
	if err := t.trainBatches.gen.SetState(s.Generator); err != nil {
		return nil, fmt.Errorf("gpt.Resume: %w", err)
	}
	t.trainBatches.ahead = nil
	if s.Ahead != nil {
		t.trainBatches.ahead = t.trainBatches.batchAt(s.Ahead)
	}
	for _, l := range s.Losses {
		t.Losses = append(t.Losses, math.Float64frombits(l))
	}
	for _, e := range s.Evals {
		t.Evals = append(t.Evals, EvalPoint{Step: e.Step, Train: math.Float64frombits(e.Train), Validate: math.Float64frombits(e.Validate)})
	}
	return t, nil
}
