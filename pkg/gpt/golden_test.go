package gpt

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/gomlx/core/tensors"
)

var update = flag.Bool("update", false, "regenerate testdata/goldens.json with /usr/bin/python3 testdata/reference.py first")

type goldenParam struct {
	Shape  []int     `json:"shape"`
	Head   []float64 `json:"head"`
	Sum    float64   `json:"sum"`
	AbsSum float64   `json:"abs_sum"`
}

type goldenCase struct {
	Name   string `json:"name"`
	Config struct {
		VocabSize int     `json:"vocab_size"`
		BlockSize int     `json:"block_size"`
		NLayer    int     `json:"n_layer"`
		NHead     int     `json:"n_head"`
		NEmbd     int     `json:"n_embd"`
		Dropout   float64 `json:"dropout"`
		Bias      bool    `json:"bias"`
	} `json:"config"`
	Train struct {
		Seed         int64   `json:"seed"`
		BatchSeed    int64   `json:"batch_seed"`
		BatchSize    int     `json:"batch_size"`
		LearningRate float64 `json:"learning_rate"`
		MinLR        float64 `json:"min_lr"`
		WarmupIters  int     `json:"warmup_iters"`
		LRDecayIters int     `json:"lr_decay_iters"`
		WeightDecay  float64 `json:"weight_decay"`
		Beta1        float64 `json:"beta1"`
		Beta2        float64 `json:"beta2"`
		GradClip     float64 `json:"grad_clip"`
		Steps        int     `json:"steps"`
	} `json:"train"`
	Params      map[string]goldenParam `json:"params"`
	FinalParams map[string]goldenParam `json:"final_params"`
	FirstLoss   float64                `json:"first_loss"`
	FirstLogits []float64              `json:"first_logits"`
	Offsets     [][]int64              `json:"offsets"`
	Losses      []float64              `json:"losses"`
}

func loadGoldens(t *testing.T) goldenFile {
	t.Helper()
	if *update {
		out, err := exec.Command("/usr/bin/python3", "testdata/reference.py", "goldens").CombinedOutput()
		if err != nil {
			t.Fatalf("reference.py: %v\n%s", err, out)
		}
	}
	data, err := os.ReadFile("testdata/goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var f goldenFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) != 2 || len(f.NanoGPTDraws.Losses) == 0 {
		t.Fatalf("goldens.json has %d cases and %d nanoGPT-draws losses, want 2 and some", len(f.Cases), len(f.NanoGPTDraws.Losses))
	}
	return f
}

type goldenFile struct {
	Cases        []goldenCase `json:"cases"`
	NanoGPTDraws struct {
		Train struct {
			EvalInterval int `json:"eval_interval"`
			EvalIters    int `json:"eval_iters"`
		} `json:"train"`
		Losses    []float64 `json:"losses"`
		Estimates []struct {
			Step  int     `json:"step"`
			Train float64 `json:"train"`
			Val   float64 `json:"val"`
		} `json:"estimates"`
	} `json:"nanogpt_draws"`
}

// syntheticData is reference.py's synthetic_data(n).
func syntheticData(n int) []int32 {
	d := make([]int32, n)
	for i := range d {
		d[i] = int32((3*i + i/5 + (i/11)%7) % 65)
	}
	return d
}

func (c goldenCase) configs() (Config, TrainConfig) {
	cc, tr := c.Config, c.Train
	return Config{VocabSize: cc.VocabSize, BlockSize: cc.BlockSize, NLayer: cc.NLayer, NHead: cc.NHead, NEmbd: cc.NEmbd, Dropout: cc.Dropout, Bias: cc.Bias},
		TrainConfig{Seed: tr.Seed, BatchSeed: tr.BatchSeed, BatchSize: tr.BatchSize, MaxIters: tr.Steps,
			LearningRate: tr.LearningRate, MinLR: tr.MinLR, WarmupIters: tr.WarmupIters, LRDecayIters: tr.LRDecayIters,
			WeightDecay: tr.WeightDecay, Beta1: tr.Beta1, Beta2: tr.Beta2, GradClip: tr.GradClip, EvalIters: 1}
}

// checkParams compares a model's weights with reference.py's summaries: the first values exactly
// (bit for bit after initialization) or within tol, sums within tol·abs_sum.
func checkParams(t *testing.T, m *Model, want map[string]goldenParam, tol float64) {
	t.Helper()
	sd := m.StateDict()
	if len(sd) != len(want) {
		t.Errorf("%d parameters, PyTorch has %d", len(sd), len(want))
	}
	for pyKey, w := range want {
		key := strings.TrimPrefix(pyKey, "transformer.")
		got, ok := sd[key]
		if !ok {
			t.Errorf("parameter %s missing", key)
			continue
		}
		if !slices.Equal(got.Shape().Dimensions, w.Shape) {
			t.Errorf("%s: shape %v, want %v", key, got.Shape().Dimensions, w.Shape)
			continue
		}
		flat := tensors.MustCopyFlatData[float32](got)
		for i, hv := range w.Head {
			if d := math.Abs(float64(flat[i]) - hv); d > tol*math.Max(1, math.Abs(hv)) || (tol == 0 && d != 0) {
				t.Errorf("%s[%d] = %.9g, want %.9g", key, i, flat[i], hv)
			}
		}
		sum := 0.0
		for _, v := range flat {
			sum += float64(v)
		}
		if d := math.Abs(sum - w.Sum); d > math.Max(tol, 1e-6)*w.AbsSum+tol*0.05 {
			t.Errorf("%s: sum %.9g, want %.9g", key, sum, w.Sum)
		}
	}
}

// TestPyTorchGoldens: the weights after New equal nanoGPT-style PyTorch init bit for bit, the
// batches equal torch.randint's, the first loss is within 1e-5 of PyTorch's and the losses of the
// first 10 AdamW steps within 1e-3.
func TestPyTorchGoldens(t *testing.T) {
	for _, c := range loadGoldens(t).Cases {
		t.Run(c.Name, func(t *testing.T) {
			cfg, tc := c.configs()
			m, err := New(cfg, torchrand.New(tc.Seed))
			if err != nil {
				t.Fatal(err)
			}
			checkParams(t, m, c.Params, 0)
			data := syntheticData(4000)
			b, err := NewBatches("train", data, cfg.BlockSize, tc.BatchSize, tc.BatchSeed, 0)
			if err != nil {
				t.Fatal(err)
			}
			x, y, offsets := b.Next()
			if !slices.Equal(offsets, c.Offsets[0]) {
				t.Fatalf("first batch offsets %v, PyTorch %v", offsets, c.Offsets[0])
			}
			loss, err := m.BatchLoss(x, y)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("first loss %.7f, PyTorch %.7f (diff %.2g)", loss, c.FirstLoss, loss-c.FirstLoss)
			if math.Abs(loss-c.FirstLoss) > 1e-5 {
				t.Errorf("first loss %.7f, PyTorch %.7f: differ by more than 1e-5", loss, c.FirstLoss)
			}
			logits, err := m.Logits(x)
			if err != nil {
				t.Fatal(err)
			}
			lf := tensors.MustCopyFlatData[float32](logits)
			V := cfg.VocabSize
			for i, want := range c.FirstLogits { // logits[0, :3, :5]
				got := lf[(i/5)*V+i%5]
				if math.Abs(float64(got)-want) > 1e-5 {
					t.Errorf("logits[0, %d, %d] = %.7g, PyTorch %.7g", i/5, i%5, got, want)
				}
			}

			tr, err := m.NewTrainer(tc, data, data)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Run(RunOptions{}); err != nil {
				t.Fatal(err)
			}
			if len(tr.Losses) != len(c.Losses) {
				t.Fatalf("%d losses, want %d", len(tr.Losses), len(c.Losses))
			}
			worst := 0.0
			for i, want := range c.Losses {
				d := math.Abs(tr.Losses[i] - want)
				worst = max(worst, d)
				if d > 1e-3 {
					t.Errorf("step %d: loss %.6f, PyTorch %.6f", i, tr.Losses[i], want)
				}
			}
			t.Logf("10 AdamW steps: losses %.5f … %.5f, largest difference from PyTorch %.2g", tr.Losses[0], tr.Losses[len(tr.Losses)-1], worst)
			if tr.Step() != tc.MaxIters {
				t.Errorf("global step %d after training, want %d", tr.Step(), tc.MaxIters)
			}
			checkParams(t, m, c.FinalParams, 2e-3)
		})
	}
}

// TestNanoGPTDrawsGolden: with NanoGPTDraws the trainer takes nanoGPT train.py's batches — the
// model's generator continued, the next training batch drawn before each estimate, estimates on
// the training split then the validation split — so its losses and estimates follow
// reference.py's nanogpt_draws() (Tiny's model, 10 steps, estimates every 3 steps of 2 batches).
// Another order of draws gives other batches and losses that differ from the first step on.
func TestNanoGPTDrawsGolden(t *testing.T) {
	want := loadGoldens(t).NanoGPTDraws
	cfg, tc := Tiny(65)
	tc.MaxIters, tc.LRDecayIters, tc.WarmupIters = len(want.Losses), len(want.Losses), 3
	tc.EvalInterval, tc.EvalIters, tc.NanoGPTDraws = want.Train.EvalInterval, want.Train.EvalIters, true
	m, err := New(cfg, torchrand.New(tc.Seed))
	if err != nil {
		t.Fatal(err)
	}
	train, val := SplitTrainVal(syntheticData(4000))
	tr, err := m.NewTrainer(tc, train, val)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(tr.Losses) != len(want.Losses) || len(tr.Evals) != len(want.Estimates) {
		t.Fatalf("%d losses and %d estimates, PyTorch %d and %d", len(tr.Losses), len(tr.Evals), len(want.Losses), len(want.Estimates))
	}
	worst := 0.0
	for i, w := range want.Losses {
		worst = max(worst, math.Abs(tr.Losses[i]-w))
	}
	for i, w := range want.Estimates {
		got := tr.Evals[i]
		if got.Step != w.Step {
			t.Errorf("estimate %d at step %d, PyTorch at step %d", i, got.Step, w.Step)
		}
		worst = max(worst, math.Abs(got.Train-w.Train), math.Abs(got.Validate-w.Val))
	}
	t.Logf("%d losses and %d estimates: largest difference from PyTorch %.2g", len(tr.Losses), len(tr.Evals), worst)
	if worst > 1e-3 {
		t.Errorf("losses %v, estimates %+v; PyTorch %v, %+v: differ by %.2g > 1e-3", tr.Losses, tr.Evals, want.Losses, want.Estimates, worst)
	}
}

// TestSplitLoss: SplitLoss is the mean of BatchLoss over the split's consecutive windows.
func TestSplitLoss(t *testing.T) {
	cfg, tc := Tiny(65)
	m, err := New(cfg, torchrand.New(tc.Seed))
	if err != nil {
		t.Fatal(err)
	}
	T := cfg.BlockSize
	ids := syntheticData(70*T + 5) // 70 windows: batches of 64 and 6
	got, err := m.SplitLoss(ids)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for w := range 70 {
		x := tensors.FromFlatDataAndDimensions(slices.Clone(ids[w*T:(w+1)*T]), 1, T)
		y := tensors.FromFlatDataAndDimensions(slices.Clone(ids[w*T+1:(w+1)*T+1]), 1, T)
		l, err := m.BatchLoss(x, y)
		if err != nil {
			t.Fatal(err)
		}
		sum += l
	}
	if want := sum / 70; math.Abs(got-want) > 1e-5 {
		t.Errorf("SplitLoss %.7f, mean of the 70 windows' losses %.7f", got, want)
	}
	if _, err := m.SplitLoss(ids[:T]); err == nil || !strings.Contains(err.Error(), "no window") {
		t.Errorf("SplitLoss of %d ids: error %v, want one saying there is no window", T, err)
	}
}
