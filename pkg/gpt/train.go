package gpt

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"time"

	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute/dtypes"
	. "github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/train"
	"github.com/gomlx/gomlx/ml/train/metric"
	"github.com/gomlx/gomlx/ui/commandline"
	"github.com/gomlx/gomlx/ui/gonb/margaid"
	stdplots "github.com/gomlx/gomlx/ui/plot"
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
func (m *Model) NewTrainer(tc TrainConfig, trainIDs, valIDs []int32) (*Trainer, error) {
	if err := tc.Validate(); err != nil {
		return nil, err
	}
	if err := m.checkIDs("NewTrainer", "trainIDs", trainIDs); err != nil {
		return nil, err
	}
	if err := m.checkIDs("NewTrainer", "valIDs", valIDs); err != nil {
		return nil, err
	}
	T := m.cfg.BlockSize
	t := &Trainer{m: m, tc: tc}
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
func (t *Trainer) Step() int { return int(t.trainer.GlobalStep()) }

// TokensPerSecond is the training throughput of the current (or last) run so far: B·T tokens per
// step, over the run's wall time (compilation and loss estimates included).
func (t *Trainer) TokensPerSecond() float64 {
	s := time.Since(t.start).Seconds()
	if s <= 0 {
		return 0
	}
	return float64(t.stepT.Load()*int64(t.tc.BatchSize*t.m.cfg.BlockSize)) / s
}

// Estimate returns the mean loss over TrainConfig.EvalIters batches of the training and then of
// the validation split (evaluation mode: no dropout): fixed batches, or with NanoGPTDraws the next
// ones of the stream.
func (t *Trainer) Estimate() (trainLoss, valLoss float64, err error) {
	if trainLoss, err = t.eval(t.trainEval); err != nil {
		return 0, 0, err
	}
	if valLoss, err = t.eval(t.valEval); err != nil {
		return 0, 0, err
	}
	return trainLoss, valLoss, nil
}

func (t *Trainer) eval(ds *Batches) (float64, error) {
	metrics, err := t.trainer.Eval(ds)
	if err != nil {
		return 0, fmt.Errorf("gpt.Trainer: evaluating on %s: %w", ds.Name(), err)
	}
	return float64(tensors.ToScalar[float32](metrics[0])), nil
}

// RunOptions selects what a run shows and where it saves.
type RunOptions struct {
	Progress      bool   // GoMLX's progress bar: step, loss, tokens/s, steps/s and time left
	Plot          bool   // a live loss plot (train and validation estimates), SVG via GoMLX's margaid: offline
	CheckpointDir string // if set, Save here at the end of the run, also when it is interrupted
	Interruptible bool   // stop cleanly on SIGINT (the notebook's interrupt) after the current step
	Steps         int    // steps to run (0: up to TrainConfig.MaxIters in all)
}

// RunResult summarizes a run.
type RunResult struct {
	Steps        int     // steps taken in this run
	TotalSteps   int     // global step at the end
	Seconds      float64 // wall time of the run, compilation and estimates included
	TokensPerSec float64 // B·T·Steps / Seconds
	LastLoss     float64 // batch loss of the last step
	Interrupted  bool
	Saved        string // checkpoint directory written, if any
}

// Run trains until TrainConfig.MaxIters steps were taken in all (or opts.Steps more), estimating
// the losses every EvalInterval steps and at the end. On an interrupt (opts.Interruptible) it
// stops after the step under way, saves if asked, and returns the result with an error matching
// ErrInterrupted.
func (t *Trainer) Run(opts RunOptions) (RunResult, error) {
	target := t.tc.MaxIters
	if opts.Steps > 0 {
		target = t.Step() + opts.Steps
	}
	startStep := t.Step()
	res := RunResult{TotalSteps: startStep}
	if target <= startStep {
		return res, nil
	}
	t.loop = train.NewLoop(t.trainer)
	var plots *margaid.Plots
	if opts.Plot {
		plots = margaid.New(720, 320).DynamicUpdates()
	}
	if opts.Progress {
		commandline.AttachProgressBar(t.loop, func() (string, string) {
			return "Tokens per second", fmt.Sprintf("%.0f", t.TokensPerSecond())
		})
	}
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
	estimate := func(step int) error {
		tr, va, err := t.Estimate()
		if err != nil {
			return err
		}
		t.Evals = append(t.Evals, EvalPoint{Step: step, Train: tr, Validate: va})
		if plots != nil {
			plots.AddPoint(stdplots.Point{MetricName: "train", MetricType: "loss", Step: float64(step), Value: tr})
			plots.AddPoint(stdplots.Point{MetricName: "validation", MetricType: "loss", Step: float64(step), Value: va})
			plots.DynamicSampleDone(false)
		}
		return nil
	}
	if t.tc.EvalInterval > 0 && (len(t.Evals) == 0 || t.Evals[len(t.Evals)-1].Step != startStep) {
		if err := estimate(startStep); err != nil {
			return res, err
		}
	}
	t.start = time.Now()
	t.stepT.Store(0)
	t.loop.OnStep("gpt", 1000, func(loop *train.Loop, metrics []*tensors.Tensor) error {
		t.Losses = append(t.Losses, float64(tensors.ToScalar[float32](metrics[0])))
		t.stepT.Add(1)
		step := t.Step()
		if t.tc.EvalInterval > 0 && step%t.tc.EvalInterval == 0 && step < target {
			if err := estimate(step); err != nil {
				return err
			}
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
	res.TokensPerSec = float64(res.Steps*t.tc.BatchSize*t.m.cfg.BlockSize) / res.Seconds
	if len(t.Losses) > 0 {
		res.LastLoss = t.Losses[len(t.Losses)-1]
	}
	if err != nil && !errors.Is(err, ErrInterrupted) {
		return res, fmt.Errorf("gpt.Trainer.Run: %w", err)
	}
	res.Interrupted = err != nil
	if eerr := estimate(res.TotalSteps); eerr != nil {
		return res, eerr
	}
	if plots != nil {
		plots.DynamicPlot(true)
	}
	if opts.CheckpointDir != "" {
		if serr := t.m.Save(opts.CheckpointDir); serr != nil {
			return res, serr
		}
		res.Saved = opts.CheckpointDir
	}
	if res.Interrupted {
		return res, fmt.Errorf("gpt.Trainer.Run: %w after step %d of %d (weights kept)", ErrInterrupted, res.TotalSteps, target)
	}
	return res, nil
}
