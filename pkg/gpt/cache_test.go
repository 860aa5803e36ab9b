package gpt

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
)

// TestKVCacheSameTokens: generation with the cache draws the same tokens as the full-context path
// for the same seed — greedy, sampled at several temperatures, with and without top-k, from
// prompts of 1 token up to and past the block size (32), and generating past the block.
func TestKVCacheSameTokens(t *testing.T) {
	m, _ := tinyModel(t, 20)
	T := m.Config().BlockSize
	data := syntheticData(200)
	for _, tc := range []struct {
		prompt int
		n      int
		opts   SampleOptions
	}{
		{1, T, SampleOptions{Temperature: 1, Seed: 1}},                // a full block from one token
		{1, T, SampleOptions{Temperature: 0}},                         // greedy
		{1, T, SampleOptions{Temperature: 0.8, TopK: 10, Seed: 2}},    // notebook 10's settings
		{1, T, SampleOptions{Temperature: 1.5, TopK: 3, Seed: 3}},     // hot, few candidates
		{5, 20, SampleOptions{Temperature: 0.7, Seed: 4}},             // a short prompt
		{T - 1, 1, SampleOptions{Temperature: 1, Seed: 5}},            // prefill only
		{T - 1, 3, SampleOptions{Temperature: 1, Seed: 6}},            // one step in the block, then past it
		{T, 5, SampleOptions{Temperature: 1, Seed: 7}},                // a full-block prompt: past at once
		{T + 17, 10, SampleOptions{Temperature: 1, TopK: 5, Seed: 8}}, // a prompt longer than the block
		{3, 3 * T, SampleOptions{Temperature: 0.9, Seed: 9}},          // three blocks of text
		{1, 0, SampleOptions{Temperature: 1, Seed: 10}},               // nothing to generate
	} {
		name := fmt.Sprintf("prompt=%d,n=%d,temp=%g,topk=%d,seed=%d", tc.prompt, tc.n, tc.opts.Temperature, tc.opts.TopK, tc.opts.Seed)
		t.Run(name, func(t *testing.T) {
			prompt := data[:tc.prompt]
			want, err := m.Generate(prompt, tc.n, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			cached := tc.opts
			cached.KVCache = true
			got, err := m.Generate(prompt, tc.n, cached)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.n || !slices.Equal(got, want) {
				t.Errorf("with the cache %v\nwithout       %v", got, want)
			}
		})
	}
}

// TestKVCacheFused: with Fused the full path's attention is GoMLX's fused op, the cached path the
// course's functions: the tokens are still the same.
func TestKVCacheFused(t *testing.T) {
	m, _ := tinyModel(t, 20)
	m.Fused = true
	prompt := syntheticData(3)
	for seed := range int64(3) {
		opts := SampleOptions{Temperature: 1, Seed: seed}
		want, err := m.Generate(prompt, 40, opts)
		if err != nil {
			t.Fatal(err)
		}
		opts.KVCache = true
		got, err := m.Generate(prompt, 40, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("seed %d, fused: with the cache %v\nwithout       %v", seed, got, want)
		}
	}
}

// TestKVCacheLogits: the logits of every cached step equal the full-context path's logits at the
// same position within 1e-5 (float32 rounding of products of other shapes), and the prefill's
// equal them exactly on the pure-Go backend (the same graph functions on the same shapes, run op
// by op). XLA compiles the prefill, which also returns the cache, as another program and may fuse
// it otherwise: there the prefill is held to 1e-5 too (on an H200 it differed by 4.8e-7).
func TestKVCacheLogits(t *testing.T) {
	m, _ := tinyModel(t, 20)
	T, V := m.Config().BlockSize, m.Config().VocabSize
	ids := syntheticData(T)
	full, err := m.Logits(tensors.FromFlatDataAndDimensions(slices.Clone(ids), 1, T))
	if err != nil {
		t.Fatal(err)
	}
	want := tensors.MustCopyFlatData[float32](full) // [T·V]
	prefill, _, err := m.decode("kv prefill", ids, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := tensors.MustCopyFlatData[float32](prefill)
	if exact := backend.IsGo(m.backend); exact && !slices.Equal(got, want) {
		t.Errorf("prefill of the whole block: max difference %g from the full path, want 0", maxAbsDiff(got, want))
	} else if d := maxAbsDiff(got, want); !exact && d > 1e-5 {
		t.Errorf("prefill of the whole block on %s: max difference %g from the full path, want <= 1e-5", m.backend, d)
	}
	var cache []*tensors.Tensor // empty: the steps start at position 0
	worst := 0.0
	for pos := range T {
		var logits *tensors.Tensor
		logits, cache, err = m.decode("kv step", ids[pos:pos+1], pos, cache)
		if err != nil {
			t.Fatal(err)
		}
		worst = max(worst, maxAbsDiff(tensors.MustCopyFlatData[float32](logits), want[pos*V:(pos+1)*V]))
	}
	t.Logf("largest difference of a cached step's logits from the full path: %g", worst)
	if worst > 1e-5 {
		t.Errorf("cached steps differ from the full path by up to %g, want <= 1e-5", worst)
	}
	if len(cache) != 4 || !slices.Equal(cache[0].Shape().Dimensions, []int{1, 4, T, 16}) {
		t.Errorf("cache: %d tensors of %v, want 2·L = 4 of [B=1 H=4 T=%d hs=16]", len(cache), cache[0].Shape(), T)
	}
}

// TestKVCacheStepOneSequence: a step carries one sequence's token as padded rows, so tokens of
// two sequences are refused with the shape named, not computed wrong.
func TestKVCacheStepOneSequence(t *testing.T) {
	m, _ := tinyModel(t, 0)
	cfg := m.Config()
	g := NewGraph(m.backend, "two sequences")
	var cache []*Node
	for range 2 * cfg.NLayer {
		cache = append(cache, Zeros(g, shapes.Make(dtypes.Float32, 2, cfg.NHead, cfg.BlockSize, cfg.HeadSize())))
	}
	defer func() {
		err, _ := recover().(error)
		if err == nil || !strings.Contains(err.Error(), "one sequence, got tokens of B = 2") {
			t.Errorf("a step of two sequences: got %v, want an error naming B = 2", err)
		}
	}()
	m.cachedForward(nil, Zeros(g, shapes.Make(dtypes.Int32, 2, 1)), Const(g, int32(0)), cache)
}

func maxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}

// TestCacheBytes: GPT-2 small keeps 2·12·12·64·4 bytes = 73,728 bytes (72 KiB) per token.
func TestCacheBytes(t *testing.T) {
	gpt2 := Config{VocabSize: 50257, BlockSize: 1024, NLayer: 12, NHead: 12, NEmbd: 768}
	if got := gpt2.CacheBytes(); got != 73728 {
		t.Errorf("GPT-2 small: %d bytes per token, want 73728", got)
	}
}

// BenchmarkGenerateBlock times generating a full block (BlockSize new tokens from a one-token
// prompt) with notebook 10's model (nanoGPT's CPU recipe: 4 blocks of 4 heads, C = 128, block
// 64), without and with the KV cache; the target is a cache at least 5× faster. Weights are the
// untrained ones: the work per token does not depend on them.
//
//	GOEXPERIMENT=simd GODEBUG=cpu.fma=off go test ./pkg/gpt/ -run '^$' -bench GenerateBlock -benchtime 10x
func BenchmarkGenerateBlock(b *testing.B) {
	cfg, tc := NanoGPTCPU(65)
	m, err := New(cfg, torchrand.New(tc.Seed))
	if err != nil {
		b.Fatal(err)
	}
	prompt := []int32{0}
	var want []int32
	for _, cache := range []bool{false, true} {
		b.Run(fmt.Sprintf("cache=%v", cache), func(b *testing.B) {
			opts := SampleOptions{Temperature: 0.8, TopK: 10, Seed: 1, KVCache: cache}
			out, err := m.Generate(prompt, cfg.BlockSize, opts) // compiles the graphs
			if err != nil {
				b.Fatal(err)
			}
			if want == nil {
				want = out
			} else if !slices.Equal(out, want) {
				b.Fatalf("the cache changed the text: %v, without %v", out, want)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := m.Generate(prompt, cfg.BlockSize, opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/block")
		})
	}
}

// TestRowsTimesT: one row (a step's product) and several rows (four, and three and six, which
// the AVX-512 path pads to a multiple of four) give x·wᵀ, within float32 rounding
// of the backend's DotGeneral.
func TestRowsTimesT(t *testing.T) {
	m, _ := tinyModel(t, 20)
	w := tensors.FromValue([][]float32{{1, -2, 0.5}, {0.25, 3, -1}, {2, 2, 2}, {-0.5, 0, 1.5}}) // [out=4, in=3]
	for _, x := range []*tensors.Tensor{
		tensors.FromValue([][][]float32{{{0.1, -0.7, 2}}}),                                                            // [1, 1, 3]: one row
		tensors.FromValue([][][]float32{{{0.1, -0.7, 2}, {1, 1, 1}}, {{-3, 0.5, 0}, {2, -1, 0.25}}}),                  // [2, 2, 3]
		tensors.FromValue([][][]float32{{{0.1, -0.7, 2}, {1, 1, 1}, {4, 0, -2}}}),                                     // [1, 3, 3]
		tensors.FromValue([][][]float32{{{1, 2, 3}, {0, 1, 0}, {5, -5, 1}}, {{-1, 0, 1}, {2, 2, 2}, {0.5, 0.5, -4}}}), // [2, 3, 3]: six rows
	} {
		exec := MustNewExec(m.backend, func(x, w *Node) []*Node {
			return []*Node{rowsTimesT(x, w), DotGeneral(x, []int{2}, nil, w, []int{1}, nil)}
		})
		out := exec.MustExec(x, w)
		got, want := out[0], out[1]
		if !slices.Equal(got.Shape().Dimensions, want.Shape().Dimensions) {
			t.Fatalf("x %s: rowsTimesT is %s, want %s", x.Shape(), got.Shape(), want.Shape())
		}
		g, wf := tensors.MustCopyFlatData[float32](got), tensors.MustCopyFlatData[float32](want)
		for i := range wf {
			if math.Abs(float64(g[i]-wf[i])) > 1e-6*math.Max(1, math.Abs(float64(wf[i]))) {
				t.Errorf("x %s: element %d is %g, want %g", x.Shape(), i, g[i], wf[i])
			}
		}
	}
}

// TestGenerateOnSerialBackend: Generate runs on backend.Serial's backend; its greedy text is
// the argmax of Logits computed on the model's own backend, token after token, with and without
// the cache.
func TestGenerateOnSerialBackend(t *testing.T) {
	m, _ := tinyModel(t, 20)
	T, V := m.Config().BlockSize, m.Config().VocabSize
	ids := syntheticData(3)
	var want []int32
	for range 20 {
		window := make([]int32, T)
		copy(window, ids)
		logits, err := m.Logits(tensors.FromFlatDataAndDimensions(window, 1, T))
		if err != nil {
			t.Fatal(err)
		}
		next := int32(argmax(tensors.MustCopyFlatData[float32](logits)[(len(ids)-1)*V : len(ids)*V]))
		ids = append(ids, next)
		want = append(want, next)
	}
	for _, cache := range []bool{false, true} {
		got, err := m.Generate(syntheticData(3), 20, SampleOptions{KVCache: cache})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("KVCache %v: Generate %v\nLogits' argmax %v", cache, got, want)
		}
	}
	if b, _ := m.generationBackend(); backend.IsGo(m.backend) && b == m.backend {
		t.Errorf("Generate runs on the model's own backend, want backend.Serial's")
	}
}

// TestKVCacheAfterMoreTraining: the cached graphs are compiled again after the weights change, as
// the other inference graphs are: generating, training on, and generating again gives the text of
// the new weights with and without the cache.
func TestKVCacheAfterMoreTraining(t *testing.T) {
	m, tr := tinyModel(t, 5)
	opts := SampleOptions{Temperature: 0, KVCache: true}
	prompt := syntheticData(1)
	before, err := m.Generate(prompt, 20, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Run(RunOptions{Steps: 30}); err != nil {
		t.Fatal(err)
	}
	got, err := m.Generate(prompt, 20, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.KVCache = false
	want, err := m.Generate(prompt, 20, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("after more training, with the cache %v\nwithout       %v", got, want)
	}
	if slices.Equal(want, before) {
		t.Fatalf("30 more steps left the greedy text as it was (%v): the test shows nothing", want)
	}
}
