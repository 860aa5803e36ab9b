package gpt

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"sync/atomic"
	"time"

	"github.com/attnbook/attnbook/pkg/display"
	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train"
	"github.com/gomlx/gomlx/ml/train/metric"
)

// ErrInterrupted is matched (errors.Is) by Trainer.Run's error when an interrupt (SIGINT, the
// notebook's stop button) ended the run early; the weights of the last finished step are kept.
var ErrInterrupted = errors.New("training interrupted")

// Trainer trains a Model with GoMLX's train.Trainer and train.Loop: AdamW (see AdamW), the
// cross-entropy loss, random batches from the training split, loss estimates on both splits.
type Trainer struct {
	m       *Model
	tc      TrainConfig
	trainer *train.Trainer
	loop    *train.Loop

	trainBatches, trainEval, valEval *Batches
	trainPrint, valPrint             dataPrint // of the ids it was made with, for Resume

	// History of this trainer's runs.
	Losses []float64    // batch loss of every step, in order
	Evals  []EvalPoint  // loss estimates, in order
	start  time.Time    // of the current run
	stepT  atomic.Int64 // steps finished in the current run
}

// EvalPoint is one estimate of the losses: the mean over TrainConfig.EvalIters fixed batches of
// each split, after Step steps.
type EvalPoint struct {
	Step            int
	Train, Validate float64
}

// NewTrainer prepares training m on trainIDs with loss estimates on trainIDs and valIDs. Training
// batches come from a generator seeded with tc.BatchSeed; the estimates use seeds BatchSeed+1000
// (validation) and BatchSeed+2000 (training), so they neither disturb the training stream nor
// change between estimates. With tc.NanoGPTDraws every batch comes from the generator that
// initialized m (gpt.New's g; for a loaded model, a generator seeded with tc.Seed, as nanoGPT
// reseeds when it resumes), in nanoGPT's order.
//
// A loaded model's trainer starts a new batch stream; Resume continues the one of the run that
// saved the checkpoint.
func (m *Model) NewTrainer(tc TrainConfig, trainIDs, valIDs []int32) (*Trainer, error) {
	const fn = "Model.NewTrainer"
	if err := checkModel(m, fn); err != nil {
		return nil, err
	}
	if err := tc.check(fn, "tc."); err != nil {
		return nil, err
	}
	T := m.cfg.BlockSize
	for _, d := range []struct {
		name string
		ids  []int32
	}{{"trainIDs", trainIDs}, {"valIDs", valIDs}} {
		if len(d.ids) <= T {
			return nil, argErr(fn, d.name, "has %d ids, need more than block_size %d (one window and its targets)", len(d.ids), T)
		}
		if err := m.checkIDs(fn, d.name, d.ids); err != nil {
			return nil, err
		}
	}
	t := &Trainer{m: m, tc: tc, trainPrint: fingerprint(trainIDs), valPrint: fingerprint(valIDs)}
	var err error
	if tc.NanoGPTDraws {
		g := m.gen
		if g == nil {
			g = torchrand.New(tc.Seed)
		}
		if t.trainBatches, err = newBatches("train", trainIDs, T, tc.BatchSize, g, 0); err != nil {
			return nil, err
		}
		t.trainBatches.prime() // train.py's first get_batch comes before the first estimate
		if t.trainEval, err = newBatches("train", trainIDs, T, tc.BatchSize, g, tc.EvalIters); err != nil {
			return nil, err
		}
		if t.valEval, err = newBatches("val", valIDs, T, tc.BatchSize, g, tc.EvalIters); err != nil {
			return nil, err
		}
	} else {
		if t.trainBatches, err = NewBatches("train", trainIDs, T, tc.BatchSize, tc.BatchSeed, 0); err != nil {
			return nil, err
		}
		if t.valEval, err = NewBatches("val", valIDs, T, tc.BatchSize, tc.BatchSeed+1000, tc.EvalIters); err != nil {
			return nil, err
		}
		if t.trainEval, err = NewBatches("train", trainIDs, T, tc.BatchSize, tc.BatchSeed+2000, tc.EvalIters); err != nil {
			return nil, err
		}
	}
	modelFn := func(scope *model.Scope, inputs []*Node) []*Node {
		logits, _ := m.Forward(scope, inputs[0])
		return []*Node{logits}
	}
	lossFn := func(labels, predictions []*Node) *Node { return crossEntropy(predictions[0], labels[0]) }
	tokensPerSec := metric.NewBaseMetric("Tokens per second", "tok/s", "throughput",
		func(_ *model.Scope, _, predictions []*Node) *Node {
			return ScalarZero(predictions[0].Graph(), dtypes.Float32)
		},
		func(*tensors.Tensor) string { return fmt.Sprintf("%.0f", t.TokensPerSecond()) })
	t.trainer = train.NewTrainer(m.backend, m.store, modelFn, lossFn, AdamW(tc), []metric.Interface{tokensPerSec}, nil)
	t.loop = train.NewLoop(t.trainer)
	return t, nil
}

// Step is the number of training steps taken so far (GoMLX's global step; it survives a
// checkpoint).
func (t *Trainer) Step() int {
	if t == nil {
		return 0
	}
	return int(t.trainer.GlobalStep())
}

// TokensPerSecond is the training throughput of the current (or last) run so far: B·T tokens per
// step, over the run's wall time (compilation and loss estimates included).
func (t *Trainer) TokensPerSecond() float64 {
	if t == nil {
		return 0
	}
	s := time.Since(t.start).Seconds()
	if s <= 0 {
		return 0
	}
	return float64(t.stepT.Load()*int64(t.tc.BatchSize*t.m.cfg.BlockSize)) / s
}

// checkTrainer returns an *ArgumentError for a nil Trainer.
func checkTrainer(t *Trainer, fn string) error {
	if t == nil {
		return argErr(fn, "t", "is nil: make the trainer with Model.NewTrainer or gpt.Resume (and check their error)")
	}
	return nil
}

// Estimate returns the mean loss over TrainConfig.EvalIters batches of the training and then of
// the validation split (evaluation mode: no dropout): fixed batches, or with NanoGPTDraws the next
// ones of the stream.
func (t *Trainer) Estimate() (trainLoss, valLoss float64, err error) {
	if err := checkTrainer(t, "Trainer.Estimate"); err != nil {
		return 0, 0, err
	}
	if trainLoss, err = t.eval(t.trainEval); err != nil {
		return 0, 0, err
	}
	if valLoss, err = t.eval(t.valEval); err != nil {
		return 0, 0, err
	}
	return trainLoss, valLoss, nil
}

// eval is the mean batch loss over ds, as nanoGPT's estimate_loss: Model.BatchLoss per batch.
// (GoMLX's Trainer.Eval is not used: on the pure-Go backend of compute v0.1.14 its running-mean
// metric lives in variables that an evaluation graph bakes in as constants (see backend.Weights),
// so it returns the last batch's loss instead of the mean.)
func (t *Trainer) eval(ds *Batches) (float64, error) {
	sum, n := 0.0, 0
	for batch, err := range ds.Iter() {
		if err == nil {
			var loss float64
			loss, err = t.m.BatchLoss(batch.Inputs[0], batch.Labels[0])
			sum, n = sum+loss, n+1
		}
		if err != nil {
			return 0, fmt.Errorf("gpt.Trainer: evaluating on %s: %w", ds.Name(), err)
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("gpt.Trainer: evaluating on %s: no batches", ds.Name())
	}
	return sum / float64(n), nil
}

// RunOptions selects what a run shows and where it saves.
type RunOptions struct {
	// Progress shows the run as one display updated in place (pkg/display's Progress): step,
	// batch loss, tokens/s, elapsed time, ETA, a bar and, with Plot, the loss plot. In a GoNB
	// notebook it is one HTML output (no terminal escapes); elsewhere a plain-text line every
	// 10 s and at the end.
	Progress bool
	// Plot adds the loss plot to the progress display (batch losses, and the train and
	// validation estimates); without Progress, the plot alone is shown once, at the end.
	Plot          bool
	CheckpointDir string // if set, Trainer.Save here at the end of the run, also when it is interrupted
	Interruptible bool   // stop cleanly on SIGINT (the notebook's interrupt) after the current step
	Steps         int    // steps to run (0: up to TrainConfig.MaxIters in all); < 0 is an error
	Note          string // a line shown under the progress bar, e.g. "resumed at step 150 of 300"
}

// RunResult summarizes a run.
type RunResult struct {
	Steps        int     // steps taken in this run
	TotalSteps   int     // global step at the end
	Seconds      float64 // wall time of the run, compilation and estimates included
	TokensPerSec float64 // B·T·Steps / Seconds (0 when no step was taken)
	LastLoss     float64 // batch loss of the last step (of the history, after Resume)
	Interrupted  bool
	Saved        string // checkpoint directory written, if any
}

// Run trains until TrainConfig.MaxIters steps were taken in all (or opts.Steps more), estimating
// the losses every EvalInterval steps and at the end, then saves to opts.CheckpointDir if set.
// When there is nothing left to train (the trainer is at MaxIters already, as after Resume of a
// finished run) it still makes the closing estimate (unless Evals already ends with one at this
// step) and saves, so that Evals always ends with the estimate at the current step. On an
// interrupt (opts.Interruptible) it stops after the step under way, estimates, saves if asked,
// and returns the result with an error matching ErrInterrupted. A negative opts.Steps is an
// *ArgumentError.
//
// With NanoGPTDraws, estimates that nanoGPT would not make (at a step that is neither a multiple
// of EvalInterval nor MaxIters: after an interrupt, or a run of opts.Steps) draw their batches
// from a copy of the stream, so that a run resumed from there continues with the batches an
// uninterrupted run would have drawn.
func (t *Trainer) Run(opts RunOptions) (RunResult, error) {
	if err := checkTrainer(t, "Trainer.Run"); err != nil {
		return RunResult{}, err
	}
	if opts.Steps < 0 {
		return RunResult{}, argErr("Trainer.Run", "opts.Steps", "must be >= 0 (0: up to TrainConfig.MaxIters = %d), got %d", t.tc.MaxIters, opts.Steps)
	}
	target := t.tc.MaxIters
	if opts.Steps > 0 {
		target = t.Step() + opts.Steps
	}
	startStep := t.Step()
	res := RunResult{TotalSteps: startStep, LastLoss: math.NaN()}
	if len(t.Losses) > 0 {
		res.LastLoss = t.Losses[len(t.Losses)-1]
	}
	var progress *display.Progress
	if opts.Progress {
		progress = display.NewProgress()
	}
	runStart := time.Now()
	state := func(step int, note string) display.TrainingState {
		s := display.TrainingState{Step: step, Total: max(target, step), Loss: math.NaN(), TokensPerSec: t.TokensPerSecond(),
			Elapsed: time.Since(runStart), ETA: -1, Note: note}
		if len(t.Losses) > 0 {
			s.Loss = t.Losses[len(t.Losses)-1]
		}
		if done := step - startStep; done > 0 && !t.start.IsZero() {
			perStep := time.Since(t.start) / time.Duration(done)
			s.ETA = perStep * time.Duration(max(0, target-step))
		}
		if opts.Plot {
			s.Losses = t.Losses
			for _, e := range t.Evals {
				s.Estimates = append(s.Estimates, display.LossEstimate{Step: e.Step, Train: e.Train, Validate: e.Validate})
			}
		}
		return s
	}
	finish := func(note string) {
		s := state(res.TotalSteps, note)
		s.TokensPerSec = res.TokensPerSec // the run's, as RunResult reports it
		switch {
		case progress != nil:
			progress.Finish(s)
		case opts.Plot:
			display.ShowSVG(display.LossPlotSVG(s.Losses, s.Estimates, s.Total), nil)
		}
	}
	estimate := func(step int) error {
		gen := t.trainBatches.gen
		if t.tc.NanoGPTDraws && !t.nanoGPTEstimates(step) {
			saved := gen.State()
			defer func() { _ = gen.SetState(saved) }()
		}
		tr, va, err := t.Estimate()
		if err != nil {
			return err
		}
		t.Evals = append(t.Evals, EvalPoint{Step: step, Train: tr, Validate: va})
		return nil
	}
	hasEstimate := func(step int) bool { return len(t.Evals) > 0 && t.Evals[len(t.Evals)-1].Step == step }
	t.start = time.Time{}
	t.stepT.Store(0)

	if target <= startStep { // nothing to train: the closing estimate and save only
		if !hasEstimate(startStep) {
			if err := estimate(startStep); err != nil {
				return res, err
			}
		}
		if err := t.saveTo(opts.CheckpointDir, &res); err != nil {
			return res, err
		}
		note := opts.Note
		if note == "" {
			note = fmt.Sprintf("nothing to train: at step %d of %d", startStep, target)
		}
		finish(note)
		return res, nil
	}

	t.loop = train.NewLoop(t.trainer)
	var interrupted atomic.Bool
	if opts.Interruptible {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt)
		done := make(chan struct{})
		defer func() { signal.Stop(ch); close(done) }()
		go func() {
			select {
			case <-ch:
				interrupted.Store(true)
			case <-done:
			}
		}()
	}
	if progress != nil {
		progress.Update(state(startStep, opts.Note))
	}
	if t.tc.EvalInterval > 0 && !hasEstimate(startStep) {
		if err := estimate(startStep); err != nil {
			return res, err
		}
	}
	t.start = time.Now()
	t.loop.OnStep("gpt", 1000, func(loop *train.Loop, metrics []*tensors.Tensor) error {
		t.Losses = append(t.Losses, float64(tensors.ToScalar[float32](metrics[0])))
		t.stepT.Add(1)
		step := t.Step()
		if t.tc.EvalInterval > 0 && step%t.tc.EvalInterval == 0 && step < target {
			if err := estimate(step); err != nil {
				return err
			}
		}
		if progress != nil {
			progress.Update(state(step, opts.Note))
		}
		if interrupted.Load() {
			return ErrInterrupted
		}
		return nil
	})
	_, err := t.loop.RunToGlobalStep(t.trainBatches, target)
	res.Seconds = time.Since(t.start).Seconds()
	res.TotalSteps = t.Step()
	res.Steps = res.TotalSteps - startStep
	if res.Steps > 0 && res.Seconds > 0 {
		res.TokensPerSec = float64(res.Steps*t.tc.BatchSize*t.m.cfg.BlockSize) / res.Seconds
	}
	if len(t.Losses) > 0 {
		res.LastLoss = t.Losses[len(t.Losses)-1]
	}
	if err != nil && !errors.Is(err, ErrInterrupted) {
		return res, fmt.Errorf("gpt.Trainer.Run: %w", err)
	}
	res.Interrupted = err != nil
	if !hasEstimate(res.TotalSteps) {
		if eerr := estimate(res.TotalSteps); eerr != nil {
			return res, eerr
		}
	}
	if serr := t.saveTo(opts.CheckpointDir, &res); serr != nil {
		return res, serr
	}
	note := opts.Note
	if res.Interrupted {
		note = fmt.Sprintf("interrupted after step %d of %d: run the cell again to resume", res.TotalSteps, target)
	}
	finish(note)
	if res.Interrupted {
		return res, fmt.Errorf("gpt.Trainer.Run: %w after step %d of %d (weights kept)", ErrInterrupted, res.TotalSteps, target)
	}
	return res, nil
}

// nanoGPTEstimates reports whether nanoGPT's train.py estimates the losses after step (at every
// multiple of eval_interval, and at max_iters).
func (t *Trainer) nanoGPTEstimates(step int) bool {
	return step == t.tc.MaxIters || (t.tc.EvalInterval > 0 && step%t.tc.EvalInterval == 0)
}

// saveTo saves to dir if it is set, recording it in res.
func (t *Trainer) saveTo(dir string, res *RunResult) error {
	if dir == "" {
		return nil
	}
	if err := t.Save(dir); err != nil {
		return err
	}
	res.Saved = dir
	return nil
}
