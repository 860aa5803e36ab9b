package bench

import (
	"github.com/attnbook/attnbook/pkg/backend"
	"math"
	"testing"

	"github.com/gomlx/compute"
	"github.com/gomlx/gomlx/core/tensors"
)

// testBackend is the pure-Go backend as the bench starts it.
func testBackend(t testing.TB) compute.Backend {
	t.Helper()
	b, err := backend.New("go")
	if err != nil {
		t.Fatalf("pure-Go backend: %v", err)
	}
	return b
}

// reference is causal multi-head attention written as loops in float64, straight from the
// chapter's math: for each sequence and head, q = x·W_qᵀ, k, v likewise, w = softmax over j <= i
// of q_i·k_j/√hd, context_i = Σ_j w_ij v_j; heads concatenated; out = context·W_oᵀ + b_o.
func reference(x *tensors.Tensor, w Weights, s Size) []float32 {
	xs, wq, wk, wv, wo, bo := flat(x), flat(w.Query), flat(w.Key), flat(w.Value), flat(w.Out), flat(w.OutBias)
	B, T, D, H, hd := s.Batch, s.Tokens, s.Dim, s.Heads, s.HeadDim()
	out := make([]float32, B*T*D)
	proj := func(wt []float32, b, t, o int) float64 {
		sum := 0.0
		for i := range D {
			sum += float64(xs[(b*T+t)*D+i]) * float64(wt[o*D+i])
		}
		return sum
	}
	for b := range B {
		context := make([]float64, T*D)
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
						context[i*D+h*hd+e] += scores[j] / sum * v[j][e]
					}
				}
			}
		}
		for t := range T {
			for o := range D {
				sum := float64(bo[o])
				for i := range D {
					sum += context[t*D+i] * float64(wo[o*D+i])
				}
				out[(b*T+t)*D+o] = float32(sum)
			}
		}
	}
	return out
}

// runOnce runs im in mode once and returns its first output: the forward output, or the
// gradient with respect to the input.
func runOnce(b compute.Backend, im Impl, mode Mode, w Weights, s Size, x *tensors.Tensor) ([]float32, error) {
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

// TestImplsAgree checks every formulation against the float64 loop reference, forward, and
// against the chapter's input gradient, fwd+bwd, at sizes where the fast formulation uses one
// query block, a partial one, and three.
func TestImplsAgree(t *testing.T) {
	b := testBackend(t)
	for _, s := range []Size{
		{Batch: 2, Tokens: 8, Dim: 12, Heads: 3},
		{Batch: 2, Tokens: 160, Dim: 16, Heads: 2},
		{Batch: 1, Tokens: 384, Dim: 8, Heads: 2},
	} {
		t.Run(s.String(), func(t *testing.T) {
			x, w := NewInputs(123, s)
			want := reference(x, w, s)
			var gradRef []float32
			for _, im := range Impls() {
				out, err := runOnce(b, im, Forward, w, s, x)
				if err != nil {
					t.Errorf("%s forward: %v", im.Name, err)
					continue
				}
				if e := RelErr(out, want); !(e <= Tolerance) {
					t.Errorf("%s forward: relative error %.3g vs the loop reference (got %v…, want %v…)", im.Name, e, out[:3], want[:3])
				}
				grad, err := runOnce(b, im, Backward, w, s, x)
				if err != nil {
					t.Errorf("%s fwd+bwd: %v", im.Name, err)
					continue
				}
				if gradRef == nil { // the chapter's, Impls()[0]
					gradRef = grad
					continue
				}
				if e := RelErr(grad, gradRef); !(e <= Tolerance) {
					t.Errorf("%s fwd+bwd: input gradient differs from the chapter's: relative error %.3g", im.Name, e)
				}
			}
		})
	}
}

// TestNewInputsMatchesTorch: torch.manual_seed(123); torch.randn(1, 2, 4) starts with
// -0.1115, 0.1204, -0.3696, -0.2404, and the weights follow in the module's order.
func TestNewInputsMatchesTorch(t *testing.T) {
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

func TestRelErr(t *testing.T) {
	for _, tc := range []struct {
		a, b []float32
		want float64
	}{
		{[]float32{1, 2}, []float32{1, 2}, 0},
		{[]float32{1, 2.5}, []float32{1, 2}, 0.25},
		{[]float32{0, 0}, []float32{0, 0}, 0},
		{[]float32{1}, []float32{1, 2}, math.Inf(1)},
		{[]float32{1}, []float32{0}, math.Inf(1)},
	} {
		if got := RelErr(tc.a, tc.b); got != tc.want {
			t.Errorf("RelErr(%v, %v) = %g, want %g", tc.a, tc.b, got, tc.want)
		}
	}
	if e := RelErr([]float32{float32(math.NaN())}, []float32{1}); !math.IsNaN(e) {
		t.Errorf("NaN: %g", e)
	}
}
