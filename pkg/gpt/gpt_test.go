package gpt

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/gomlx/core/tensors"
)

// tinyModel trains the Tiny config on the synthetic sequence for steps steps.
func tinyModel(t *testing.T, steps int) (*Model, *Trainer) {
	t.Helper()
	cfg, tc := Tiny(65)
	m, err := New(cfg, torchrand.New(tc.Seed))
	if err != nil {
		t.Fatal(err)
	}
	data := syntheticData(6000)
	train, val := SplitTrainVal(data)
	tr, err := m.NewTrainer(tc, train, val)
	if err != nil {
		t.Fatal(err)
	}
	if steps > 0 {
		if _, err := tr.Run(RunOptions{Steps: steps}); err != nil {
			t.Fatal(err)
		}
	}
	return m, tr
}

// TestShortRun: 60 steps of the Tiny config take the validation loss from ln 65 ≈ 4.17 to below
// 1.5 on the synthetic sequence (it is periodic, so the model can learn it almost perfectly).
func TestShortRun(t *testing.T) {
	m, tr := tinyModel(t, 0)
	trainLoss0, valLoss0, err := tr.Estimate()
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(valLoss0-math.Log(65)) > 0.1 || math.Abs(trainLoss0-math.Log(65)) > 0.1 {
		t.Errorf("losses before training %.3f / %.3f, want ≈ ln 65 = %.3f", trainLoss0, valLoss0, math.Log(65))
	}
	res, err := tr.Run(RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	last := tr.Evals[len(tr.Evals)-1]
	t.Logf("%d steps: validation loss %.3f → %.3f, train %.3f, %.0f tokens/s", res.Steps, valLoss0, last.Validate, last.Train, res.TokensPerSec)
	if res.Steps != 60 || tr.Step() != 60 || len(tr.Losses) != 60 {
		t.Errorf("steps %d, global step %d, %d losses; want 60 each", res.Steps, tr.Step(), len(tr.Losses))
	}
	if last.Validate > 1.5 {
		t.Errorf("validation loss after 60 steps %.3f, want < 1.5", last.Validate)
	}
	if m.Config().NLayer != 2 {
		t.Errorf("Tiny has %d layers", m.Config().NLayer)
	}
}

// TestCheckpointRoundTrip: Load(Save(m)) has the same weights bit for bit, the same logits and the
// same step, and training goes on from there exactly as it would have.
func TestCheckpointRoundTrip(t *testing.T) {
	m, tr := tinyModel(t, 3)
	dir := filepath.Join(t.TempDir(), "ckpt")
	if err := m.Save(dir); err != nil {
		t.Fatal(err)
	}
	if err := m.Save(dir); err != nil { // replacing an existing checkpoint
		t.Fatal(err)
	}
	loaded, err := Load(dir, Config{VocabSize: 65})
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Config() != m.Config() {
		t.Errorf("config %+v, want %+v", loaded.Config(), m.Config())
	}
	a, b := m.StateDict(), loaded.StateDict()
	for _, k := range m.ParamNames() {
		if !slices.Equal(tensors.MustCopyFlatData[float32](a[k]), tensors.MustCopyFlatData[float32](b[k])) {
			t.Errorf("%s differs after the round trip", k)
		}
	}
	x := tensors.FromFlatDataAndDimensions(syntheticData(32), 1, 32)
	la, _ := m.Logits(x)
	lb, _ := loaded.Logits(x)
	if !slices.Equal(tensors.MustCopyFlatData[float32](la), tensors.MustCopyFlatData[float32](lb)) {
		t.Error("logits differ after the round trip")
	}
	_, tc := Tiny(65)
	data := syntheticData(6000)
	train, val := SplitTrainVal(data)
	tr2, err := loaded.NewTrainer(tc, train, val)
	if err != nil {
		t.Fatal(err)
	}
	if tr2.Step() != 3 {
		t.Fatalf("loaded step %d, want 3", tr2.Step())
	}
	// The same next batches for both: skip the 3 the original drew.
	for range 3 {
		tr2.trainBatches.Next()
	}
	if _, err := tr.Run(RunOptions{Steps: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := tr2.Run(RunOptions{Steps: 2}); err != nil {
		t.Fatal(err)
	}
	got, want := tr2.Losses, tr.Losses[3:]
	if !slices.Equal(got, want) {
		t.Errorf("losses after resuming %v, without the round trip %v", got, want)
	}
}

// TestGenerate: the same seed gives the same text, another seed other text; temperature 0 and
// top-k 1 are both greedy.
func TestGenerate(t *testing.T) {
	m, _ := tinyModel(t, 20)
	prompt := syntheticData(10)
	gen := func(o SampleOptions) []int32 {
		out, err := m.Generate(prompt, 40, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 40 {
			t.Fatalf("%d tokens, want 40", len(out))
		}
		return out
	}
	a := gen(SampleOptions{Temperature: 1, Seed: 5})
	b := gen(SampleOptions{Temperature: 1, Seed: 5})
	c := gen(SampleOptions{Temperature: 1, Seed: 6})
	if !slices.Equal(a, b) {
		t.Errorf("seed 5 twice: %v and %v", a, b)
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 5 and 6 gave the same 40 tokens %v", a)
	}
	greedy := gen(SampleOptions{Temperature: 0, Seed: 1})
	top1 := gen(SampleOptions{Temperature: 0.8, TopK: 1, Seed: 2})
	if !slices.Equal(greedy, top1) {
		t.Errorf("greedy %v, top-k 1 %v", greedy, top1)
	}
	long := syntheticData(100) // longer than block_size 32: cropped like nanoGPT
	if _, err := m.Generate(long, 3, SampleOptions{Temperature: 1}); err != nil {
		t.Errorf("a prompt longer than block_size should be cropped, got %v", err)
	}
}

// TestAttentionWeights: one `[H, T, T]` tensor per layer, causal rows that sum to 1.
func TestAttentionWeights(t *testing.T) {
	m, _ := tinyModel(t, 0)
	ws, err := m.AttentionWeights(syntheticData(12))
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 {
		t.Fatalf("%d layers of weights, want 2", len(ws))
	}
	for l, w := range ws {
		if !slices.Equal(w.Shape().Dimensions, []int{4, 12, 12}) {
			t.Fatalf("layer %d: shape %v, want [4 12 12]", l, w.Shape().Dimensions)
		}
		flat := tensors.MustCopyFlatData[float32](w)
		for h := range 4 {
			for i := range 12 {
				sum := 0.0
				for j := range 12 {
					v := float64(flat[(h*12+i)*12+j])
					if j > i && v != 0 {
						t.Fatalf("layer %d head %d: token %d attends to future token %d (%g)", l, h, i, j, v)
					}
					sum += v
				}
				if math.Abs(sum-1) > 1e-5 {
					t.Fatalf("layer %d head %d row %d sums to %g", l, h, i, sum)
				}
			}
		}
	}
}

func TestTokenizer(t *testing.T) {
	tok, err := NewTokenizer("hello world\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Vocabulary(); got != "\n dehlorw" {
		t.Errorf("vocabulary %q", got)
	}
	ids, err := tok.Encode("hold")
	if err != nil {
		t.Fatal(err)
	}
	if text, err := tok.Decode(ids); !slices.Equal(ids, []int32{4, 6, 5, 2}) || text != "hold" || err != nil {
		t.Errorf("Encode(hold) = %v, Decode = %q, %v", ids, text, err)
	}
	if _, err := tok.Encode("hex"); err == nil || !strings.Contains(err.Error(), `character 'x' at position 2`) {
		t.Errorf("Encode(hex) error %v", err)
	}
}

func ExampleConfig_NumParams() {
	cfg, _ := NanoGPTCPU(65)
	fmt.Println(cfg.NumParams())
	// Output: 804096
}

// TestParamTensors: the count Load checks before listing a checkpoint's weights.
func TestParamTensors(t *testing.T) {
	for _, bias := range []bool{false, true} {
		cfg, _ := Tiny(65)
		cfg.Bias = bias
		if got, want := cfg.paramTensors(), len(cfg.params()); got != want {
			t.Errorf("bias %v: paramTensors %d, params %d", bias, got, want)
		}
	}
}
