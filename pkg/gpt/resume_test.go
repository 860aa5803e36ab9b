package gpt

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/gomlx/core/tensors"
)

// microRun is a small model and schedule for resume tests: 300 steps in a few seconds.
func microRun(nanoGPTDraws bool) (Config, TrainConfig) {
	cfg := Config{VocabSize: 65, BlockSize: 16, NLayer: 1, NHead: 2, NEmbd: 16}
	_, tc := Tiny(65)
	tc.BatchSize, tc.MaxIters, tc.LRDecayIters, tc.EvalInterval, tc.EvalIters = 4, 300, 300, 50, 2
	if nanoGPTDraws {
		tc.NanoGPTDraws, tc.EvalInterval = true, 40 // 150 is no multiple of 40: the stop's estimate is one nanoGPT would not make
	}
	return cfg, tc
}

// TestResume: 150 steps, a checkpoint, Resume, and on to 300 give the same batch losses, the
// same estimates and the same weights and AdamW moments, bit for bit, as 300 steps in one go —
// with the course's fixed estimate batches, and with nanoGPT's single stream.
func TestResume(t *testing.T) {
	for _, nanoGPT := range []bool{false, true} {
		name := "fixed-estimates"
		if nanoGPT {
			name = "nanoGPT-draws"
		}
		t.Run(name, func(t *testing.T) {
			cfg, tc := microRun(nanoGPT)
			data := syntheticData(4000)
			trainIDs, valIDs := SplitTrainVal(data)
			newTrainer := func() *Trainer {
				m, err := New(cfg, torchrand.New(tc.Seed))
				if err != nil {
					t.Fatal(err)
				}
				tr, err := m.NewTrainer(tc, trainIDs, valIDs)
				if err != nil {
					t.Fatal(err)
				}
				return tr
			}
			whole := newTrainer()
			if _, err := whole.Run(RunOptions{}); err != nil {
				t.Fatal(err)
			}

			dir := filepath.Join(t.TempDir(), "ckpt")
			first := newTrainer()
			if res, err := first.Run(RunOptions{Steps: 150, CheckpointDir: dir}); err != nil || res.TotalSteps != 150 || res.Saved != dir {
				t.Fatalf("first half: %+v, %v", res, err)
			}
			resumed, err := Resume(dir, cfg, tc, trainIDs, valIDs)
			if err != nil {
				t.Fatal(err)
			}
			if resumed.Step() != 150 || len(resumed.Losses) != 150 {
				t.Fatalf("resumed at step %d with %d losses, want 150 and 150", resumed.Step(), len(resumed.Losses))
			}
			res, err := resumed.Run(RunOptions{CheckpointDir: dir})
			if err != nil || res.Steps != 150 || res.TotalSteps != 300 {
				t.Fatalf("second half: %+v, %v", res, err)
			}

			if !slices.Equal(bits(resumed.Losses), bits(whole.Losses)) {
				i := firstDiff(resumed.Losses, whole.Losses)
				t.Errorf("losses differ from step %d: resumed %v, in one go %v", i+1, at(resumed.Losses, i), at(whole.Losses, i))
			}
			evals := slices.DeleteFunc(slices.Clone(resumed.Evals), func(e EvalPoint) bool { return !whole.nanoGPTEstimates(e.Step) && e.Step != 0 })
			if !slices.Equal(evals, whole.Evals) {
				t.Errorf("estimates differ:\nresumed   %v\nin one go %v", evals, whole.Evals)
			}
			a, b := resumed.m.store, whole.m.store
			compared := 0
			for v := range b.IterVariables() {
				if v.Shape().DType.String() != "Float32" || len(v.Path()) > 8 && v.Path()[:8] == "/metrics" {
					continue
				}
				w := a.GetVariable(v.Path())
				if w == nil {
					t.Errorf("%s missing after resuming", v.Path())
					continue
				}
				x, y := tensors.MustCopyFlatData[float32](w.MustValue()), tensors.MustCopyFlatData[float32](v.MustValue())
				if !slices.Equal(x, y) {
					t.Errorf("%s differs after resuming (max |Δ| %g)", v.Path(), maxAbsDiff(x, y))
				}
				compared++
			}
			if want := 3 * len(cfg.params()); compared != want {
				t.Errorf("compared %d float variables, want %d (weights and two moments each)", compared, want)
			}

			// Resuming the finished run trains nothing, keeps the history, and still saves.
			done, err := Resume(dir, cfg, tc, trainIDs, valIDs)
			if err != nil {
				t.Fatal(err)
			}
			res, err = done.Run(RunOptions{CheckpointDir: dir})
			if err != nil || res.Steps != 0 || res.Saved != dir || len(done.Evals) != len(resumed.Evals) || done.Evals[len(done.Evals)-1].Step != 300 {
				t.Errorf("resuming a finished run: %+v, %v, %d estimates", res, err, len(done.Evals))
			}
		})
	}
}

// TestRunZeroSteps: a trainer with nothing left to train still makes the closing estimate (so
// Evals ends at its step) and saves, as notebook 10's next cells need.
func TestRunZeroSteps(t *testing.T) {
	cfg, tc := microRun(false)
	tc.MaxIters, tc.LRDecayIters, tc.WarmupIters = 0, 0, 0
	m, err := New(cfg, torchrand.New(1))
	if err != nil {
		t.Fatal(err)
	}
	data := syntheticData(2000)
	tr, err := m.NewTrainer(tc, data, data)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ckpt")
	res, err := tr.Run(RunOptions{CheckpointDir: dir})
	if err != nil || res.Steps != 0 || res.Saved != dir || !HasCheckpoint(dir) {
		t.Fatalf("Run with 0 steps: %+v, %v", res, err)
	}
	if len(tr.Evals) != 1 || tr.Evals[0].Step != 0 || math.Abs(tr.Evals[0].Validate-math.Log(65)) > 0.1 {
		t.Errorf("estimates %+v, want one at step 0 near ln 65", tr.Evals)
	}
}

func bits(xs []float64) []uint64 {
	out := make([]uint64, len(xs))
	for i, x := range xs {
		out[i] = math.Float64bits(x)
	}
	return out
}

func firstDiff(a, b []float64) int {
	for i := range min(len(a), len(b)) {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i
		}
	}
	return min(len(a), len(b))
}

func at(xs []float64, i int) any {
	if i < len(xs) {
		return xs[i]
	}
	return "none"
}
