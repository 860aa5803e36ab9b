package mhabench

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// testBackend is the pure-Go backend as the bench starts it (see GoBackendConfig).
func testBackend(t testing.TB) compute.Backend {
	t.Helper()
	b, err := newBackend(GoBackendConfig)
	if err != nil {
		t.Fatalf("pure-Go backend: %v", err)
	}
	return b
}

// reference is causal multi-head attention written as loops in float64, straight from the
// chapter's math: for each sequence and head, q = x·W_qᵀ, k, v likewise, w = softmax over j <= i
// of q_i·k_j/√hd, context_i = Σ_j w_ij v_j; heads concatenated; out = context·W_oᵀ + b_o.
func reference(x *tensors.Tensor, w Weights, s Size) []float64 {
	xs, wq, wk, wv, wo, bo := flat(x), flat(w.Query), flat(w.Key), flat(w.Value), flat(w.Out), flat(w.OutBias)
	B, T, D, H, hd := s.Batch, s.Tokens, s.Dim, s.Heads, s.HeadDim()
	out := make([]float64, B*T*D)
	proj := func(wt []float32, b, t, o int) float64 {
		sum := 0.0
		for i := range D {
			sum += float64(xs[(b*T+t)*D+i]) * float64(wt[o*D+i])
		}
		return sum
	}
	for b := range B {
		scope := make([]float64, T*D)
		for h := range H {
			q, k, v := make([][]float64, T), make([][]float64, T), make([][]float64, T)
			for t := range T {
				q[t], k[t], v[t] = make([]float64, hd), make([]float64, hd), make([]float64, hd)
				for j := range hd {
					q[t][j], k[t][j], v[t][j] = proj(wq, b, t, h*hd+j), proj(wk, b, t, h*hd+j), proj(wv, b, t, h*hd+j)
				}
			}
			for i := range T {
				scores := make([]float64, i+1)
				mx := math.Inf(-1)
				for j := 0; j <= i; j++ {
					for e := range hd {
						scores[j] += q[i][e] * k[j][e]
					}
					scores[j] /= math.Sqrt(float64(hd))
					mx = max(mx, scores[j])
				}
				sum := 0.0
				for j := range scores {
					scores[j] = math.Exp(scores[j] - mx)
					sum += scores[j]
				}
				for j := range scores {
					for e := range hd {
						scope[i*D+h*hd+e] += scores[j] / sum * v[j][e]
					}
				}
			}
		}
		for t := range T {
			for o := range D {
				sum := float64(bo[o])
				for i := range D {
					sum += scope[t*D+i] * float64(wo[o*D+i])
				}
				out[(b*T+t)*D+o] = sum
			}
		}
	}
	return out
}

func toFloat32(xs []float64) []float32 {
	out := make([]float32, len(xs))
	for i, x := range xs {
		out[i] = float32(x)
	}
	return out
}

// TestImplsAgree checks every formulation against the loop reference, forward, and against the
// chapter's input gradient, backward, at sizes where Fast uses 1, 2 and 4 query blocks.
func TestImplsAgree(t *testing.T) {
	b := testBackend(t)
	for _, s := range []Size{
		{Batch: 2, Tokens: 8, Dim: 12, Heads: 3},
		{Batch: 2, Tokens: 128, Dim: 16, Heads: 2},
		{Batch: 1, Tokens: 256, Dim: 8, Heads: 2},
	} {
		t.Run(s.String(), func(t *testing.T) {
			x, w := NewInputs(123, s)
			want := toFloat32(reference(x, w, s))
			var gradRef []float32
			for _, im := range Impls() {
				out := runOnce(t, b, im, Forward, w, s, x)
				if e := RelErr(out, want); !(e <= Tolerance) {
					t.Errorf("%s forward: relative error %.3g vs the loop reference (got %v…, want %v…)", im.Name, e, out[:3], want[:3])
				}
				grad, err := tryRunOnce(b, im, Backward, w, s, x)
				if err != nil {
					if im.Name == "combined_qkv" && strings.Contains(err.Error(), `"Pad" not implemented`) {
						continue // Slice's gradient is Pad, which GoMLX v0.26.0's simplego lacks.
					}
					t.Errorf("%s backward: %v", im.Name, err)
					continue
				}
				if gradRef == nil {
					gradRef = grad
					continue
				}
				if e := RelErr(grad, gradRef); !(e <= Tolerance) {
					t.Errorf("%s backward: input gradient differs from wrapper's: relative error %.3g", im.Name, e)
				}
			}
		})
	}
}

func runOnce(t *testing.T, b compute.Backend, im Impl, mode Mode, w Weights, s Size, x *tensors.Tensor) []float32 {
	t.Helper()
	out, err := tryRunOnce(b, im, mode, w, s, x)
	if err != nil {
		t.Fatalf("%s %s: %v", im.Name, mode, err)
	}
	return out
}

func tryRunOnce(b compute.Backend, im Impl, mode Mode, w Weights, s Size, x *tensors.Tensor) ([]float32, error) {
	p, err := NewProgram(b, im, mode, w, s)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	outs, err := p.Run(x)
	if err != nil {
		return nil, err
	}
	defer release(outs)
	return tensors.MustCopyFlatData[float32](outs[0]), nil
}

// TestLayersScale pins what the bench works around: GoMLX v0.26.0's layers.MultiHeadAttention
// scales the logits by 1/hd. Measured, uncompensated it differs from the chapter, and with
// W_query·√hd it agrees (TestImplsAgree).
func TestLayersScale(t *testing.T) {
	b := testBackend(t)
	for _, hd := range []int{4, 64} {
		got, want, err := MeasureLayersLogitScale(b, hd)
		if err != nil {
			t.Fatal(err)
		}
		if want != 1/math.Sqrt(float64(hd)) || math.Abs(got*float64(hd)-1) > 1e-3 {
			t.Errorf("hd=%d: logit scale %g (want is %g): expected 1/hd = %g, GoMLX v0.26.0's double scaling", hd, got, want, 1/float64(hd))
		}
	}

	s := Size{Batch: 2, Tokens: 8, Dim: 16, Heads: 2}
	x, w := NewInputs(1, s)
	uncompensated := Impl{Name: "layers_uncompensated",
		Load:  func(scope *model.Scope, w Weights, s Size) { loadLayersScaled(scope, w, s, 1) },
		Build: buildLayers}
	got := runOnce(t, b, uncompensated, Forward, w, s, x)
	want := toFloat32(reference(x, w, s))
	if e := RelErr(got, want); e < 1e-3 {
		t.Errorf("uncompensated layers.MultiHeadAttention agrees with the chapter (relative error %g): has GoMLX fixed its scaling?", e)
	}
	// It is the chapter with the scores divided by hd: the chapter with W_query/√hd.
	wScaled := w
	wScaled.Query = scaled(w.Query, 1/math.Sqrt(float64(s.HeadDim())))
	if e := RelErr(got, toFloat32(reference(x, wScaled, s))); !(e <= Tolerance) {
		t.Errorf("uncompensated layers vs chapter with logits/hd: relative error %g", e)
	}
}

func TestNewInputsMatchesTorchOrder(t *testing.T) {
	// torch.manual_seed(123); torch.randn(1, 2, 4) starts with -0.1115, 0.1204, -0.3696, -0.2404.
	x, w := NewInputs(123, Size{Batch: 1, Tokens: 2, Dim: 4, Heads: 2})
	got := flat(x)[:4]
	want := []float32{-0.1115, 0.1204, -0.3696, -0.2404}
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-4 {
			t.Fatalf("randn = %v, want %v", got, want)
		}
	}
	if w.Query.Shape().Dim(0) != 4 || w.OutBias.Shape().Dim(0) != 4 {
		t.Errorf("weights shapes %s %s", w.Query.Shape(), w.OutBias.Shape())
	}
}

func TestSizeCheck(t *testing.T) {
	for _, tc := range []struct {
		s  Size
		ok bool
	}{{Full, true}, {Quick, true}, {Size{1, 1, 6, 4}, false}, {Size{0, 1, 4, 4}, false}} {
		if err := tc.s.Check(); (err == nil) != tc.ok {
			t.Errorf("%s: Check() = %v", tc.s, err)
		}
	}
	if got := Full.FLOPs(); math.Abs(got-64.4e9) > 0.1e9 {
		t.Errorf("Full.FLOPs() = %g, want 64.4e9", got)
	}
	if got, want := BackwardBytes(Full), int64(4*8*12*1024*1024*64); got != want { // the scores' gradient, 25.8 GB
		t.Errorf("BackwardBytes(Full) = %d, want %d", got, want)
	}
}

func TestFastBlocks(t *testing.T) {
	for _, tc := range []struct{ t, want int }{{8, 1}, {128, 2}, {256, 4}, {1024, 8}, {4096, 8}, {192, 3}, {200, 2}} {
		if got := FastBlocks(tc.t); got != tc.want || tc.t%got != 0 {
			t.Errorf("FastBlocks(%d) = %d, want %d", tc.t, got, tc.want)
		}
	}
}

func TestRelErr(t *testing.T) {
	if e := RelErr([]float32{1, 2}, []float32{1, 2}); e != 0 {
		t.Errorf("equal: %g", e)
	}
	if e := RelErr([]float32{1, 2.5}, []float32{1, 2}); e != 0.25 {
		t.Errorf("max|a-b|/max|b| = %g, want 0.25", e)
	}
	if e := RelErr([]float32{float32(math.NaN())}, []float32{1}); !math.IsNaN(e) {
		t.Errorf("NaN: %g", e)
	}
	if e := RelErr([]float32{1}, []float32{1, 2}); !math.IsInf(e, 1) {
		t.Errorf("lengths: %g", e)
	}
}
