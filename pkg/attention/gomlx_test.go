package attention

import (
	"testing"

	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	gomlxattention "github.com/gomlx/gomlx/ml/layers/attention"
	"github.com/gomlx/gomlx/ml/model"
)

// gomlxMHA loads the weights of m, as they are (PyTorch's `[out, in]` layout), into a fresh store
// for GoMLX's attention.MultiHeadAttention (UseTransposedWeights: the same layout) and runs it on
// x, causally when mask is nil, else with mask as its query-key matrix mask (boolean
// `[B, Tq, Tk]`, true where a query may see a key). With coefficients it returns them transposed
// to `[B, H, Tq, Tk]`; without, it calls Done, the path that tries GoMLX's fused attention.
func gomlxMHA(t *testing.T, m *MultiHeadAttention, x, mask *tensors.Tensor, coefficients bool) (out, weights *tensors.Tensor) {
	t.Helper()
	h, hd, d := m.numHeads, m.HeadDim(), m.dOut
	store := model.NewStore()
	for _, p := range []struct{ scope, key string }{
		{"query", "W_query"}, {"key", "W_key"}, {"value", "W_value"}, {"output", "out_proj"},
	} {
		bias := tensors.FromShape(shapes.Make(dtypes.Float32, d)) // GoMLX always has q/k/v biases: 0 when m has none
		if _, ok := m.shapes[p.key+".bias"]; ok {
			bias = m.Weight(p.key + ".bias")
		}
		for name, value := range map[string]*tensors.Tensor{"weights": m.Weight(p.key + ".weight"), "biases": bias} {
			if _, err := store.CreateVariable("/MultiHeadAttention/"+p.scope+"/dense/"+name, value); err != nil {
				t.Fatal(err)
			}
		}
	}
	exec, err := model.NewExec(testBackend(t), store, func(scope *model.Scope, in []*Node) []*Node {
		b := gomlxattention.MultiHeadAttention(scope, in[0], in[0], in[0], h, hd).
			WithOutputDim(d).UseTransposedWeights(true)
		if len(in) > 1 {
			b.WithQueryKeyMatrixMask(in[1])
		} else {
			b.WithCausalMask(true)
		}
		if !coefficients {
			return []*Node{b.Done()}
		}
		o, coef := b.DoneWithCoefficients()
		return []*Node{o, TransposeAllAxes(coef, 0, 2, 1, 3)} // [B, Tq, H, Tk] → [B, H, Tq, Tk]
	})
	if err != nil {
		t.Fatal(err)
	}
	args := []any{x}
	if mask != nil {
		args = append(args, mask)
	}
	outs, err := exec.Call(args...)
	if err != nil {
		t.Fatal(err)
	}
	if coefficients {
		weights = outs[1]
	}
	if n := store.NumVariables(); n != 8 {
		t.Errorf("GoMLX's MultiHeadAttention used %d variables, want the 8 loaded (it created some of its own)", n)
	}
	return outs[0], weights
}

// TestGoMLXMultiHeadAttention cross-checks with GoMLX v0.28's attention.MultiHeadAttention
// (ml/layers/attention), directly: the same weights in the same layout give our outputs and
// attention weights, and PyTorch's numbers for seeds 000 and 001. (GoMLX v0.26.0's
// layers.MultiHeadAttention divided the logits by sqrt(head_dim) twice; v0.27 fixed it, so
// nothing is compensated any more.) It also shows that a boolean query-key mask now works: the
// causal mask given as a `[B, T, T]` matrix equals WithCausalMask, and a diagonal mask gives
// weights of exactly 1 on the diagonal.
func TestGoMLXMultiHeadAttention(t *testing.T) {
	for _, c := range []struct {
		golden string
		input  string
		m      *MultiHeadAttention
	}{
		{"s000/mha/eval_out", "s000/x", NewMultiHeadAttention(torchrand.New(123), 6, 6, 3, 0.1, 2, false)},
		{"s001/mha/out", "s001/batch", NewMultiHeadAttention(torchrand.New(123), 3, 2, 6, 0, 2, false)},
		{"", "s000/mha_b/x", NewMultiHeadAttention(torchrand.New(5), 5, 8, 7, 0, 4, true)},
	} {
		m, x := c.m, golden(t, c.input)
		m.Eval()
		ours := m.Forward(x)
		oursW, _ := m.LastWeights()

		theirs, theirsW := gomlxMHA(t, m, x, nil, true)
		assertClose(t, c.input+": GoMLX vs ours", theirs, ours, relTol)
		assertClose(t, c.input+": GoMLX coefficients vs ours", theirsW, oursW, relTol)
		done, _ := gomlxMHA(t, m, x, nil, false)
		assertClose(t, c.input+": GoMLX Done (fused path) vs ours", done, ours, relTol)
		if c.golden != "" {
			assertClose(t, c.input+": GoMLX vs PyTorch", theirs, golden(t, c.golden), relTol)
		}

		b, tokens := x.Shape().Dim(0), x.Shape().Dim(1)
		causal := make([]bool, b*tokens*tokens)
		diagonal := make([]bool, b*tokens*tokens)
		for i := range causal {
			q, k := (i/tokens)%tokens, i%tokens
			causal[i], diagonal[i] = k <= q, k == q
		}
		masked, maskedW := gomlxMHA(t, m, x, tensors.FromFlatDataAndDimensions(causal, b, tokens, tokens), true)
		assertClose(t, c.input+": GoMLX with a boolean causal mask", masked, theirs, 0)
		assertClose(t, c.input+": GoMLX coefficients with a boolean causal mask", maskedW, theirsW, 0)
		_, diagW := gomlxMHA(t, m, x, tensors.FromFlatDataAndDimensions(diagonal, b, tokens, tokens), true)
		for i, v := range flat(diagW) {
			want := float32(0)
			if (i/tokens)%tokens == i%tokens {
				want = 1
			}
			if v != want {
				t.Fatalf("%s: GoMLX with a diagonal mask: coefficient [%d] = %v, want %v", c.input, i, v, want)
			}
		}
	}
}
