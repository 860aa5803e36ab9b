package attention

import (
	"math"
	"testing"

	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
)

// gomlxMHA loads the weights of m (PyTorch layout) into a fresh context for GoMLX's
// layers.MultiHeadAttention, with the query weights multiplied by qScale, and runs it causally
// on x. It returns the output `[B, T, D]` and the coefficients transposed to `[B, H, T, T]`.
func gomlxMHA(t *testing.T, m *MultiHeadAttention, x *tensors.Tensor, qScale float64, keyQueryMask *tensors.Tensor) (out, weights *tensors.Tensor, err error) {
	t.Helper()
	h, hd, d := m.numHeads, m.HeadDim(), m.dOut
	scope := model.New()
	mctx := scope.In("MultiHeadAttention")
	// Linear weight [out, in] → Dense weights [in, H, hd]; no qkv bias → zero biases.
	for _, p := range []struct {
		scope, key string
		scale      float64
	}{{"query", "W_query", qScale}, {"key", "W_key", 1}, {"value", "W_value", 1}} {
		w := flat(m.Weight(p.key + ".weight"))
		din := len(w) / d
		dense := make([]float32, len(w))
		for o := range d {
			for i := range din {
				dense[i*d+o] = float32(float64(w[o*din+i]) * p.scale)
			}
		}
		dc := mctx.In(p.scope).In("dense")
		dc.VariableWithValue("weights", tensors.FromFlatDataAndDimensions(dense, din, h, hd))
		dc.VariableWithValue("biases", tensors.FromShape(shapes.Make(dtypes.Float32, h, hd)))
	}
	w := flat(m.Weight("out_proj.weight"))
	dense := make([]float32, len(w))
	for o := range d {
		for i := range d {
			dense[i*d+o] = w[o*d+i]
		}
	}
	oc := mctx.In("output").In("dense")
	oc.VariableWithValue("weights", tensors.FromFlatDataAndDimensions(dense, d, d))
	oc.VariableWithValue("biases", m.Weight("out_proj.bias"))
	exec, err := model.NewExec(testBackend(t), scope, func(scope *model.Scope, in []*Node) []*Node {
		b := layers.MultiHeadAttention(scope.Reuse(), in[0], in[0], in[0], h, hd).SetOutputDim(d).UseCausalMask()
		if len(in) > 1 {
			b.SetQueryKeyMatrixMask(in[1])
		}
		o, coef := b.DoneWithCoefficients()
		return []*Node{o, TransposeAllAxes(coef, 0, 2, 1, 3)} // [B, Tq, H, Tk] → [B, H, Tq, Tk]
	})
	if err != nil {
		t.Fatal(err)
	}
	args := []any{x}
	if keyQueryMask != nil {
		args = append(args, keyQueryMask)
	}
	outs, err := exec.Exec(args...)
	if err != nil {
		return nil, nil, err
	}
	return outs[0], outs[1], nil
}

// TestGoMLXMultiHeadAttention cross-checks with GoMLX v0.26.0's layers.MultiHeadAttention,
// whose math is the same up to one thing: it scales the attention logits by 1/sqrt(head_dim)
// twice — once on the projected queries ("LearnedScale attentionLogits by 1/sqrt(keyQueryDim)")
// and once more on the logits (DivScalar(attentionLogits, sqrt(keyQueryDim))) — so it computes
// softmax(q·k / head_dim), not softmax(q·k / sqrt(head_dim)). The test shows both halves:
//
//   - with the same weights, its output is our graph with the logits divided by head_dim, and
//     differs from PyTorch;
//   - with its query weights multiplied by sqrt(head_dim) (undoing one scaling), it gives
//     PyTorch's numbers (seed 000's and seed 001's MultiHeadAttention).
//
// It also shows that SetQueryKeyMatrixMask ignores a mask given without the heads axis
// (`[B, Tq, Tk]`): the method broadcasts it but never stores it.
func TestGoMLXMultiHeadAttention(t *testing.T) {
	for _, c := range []struct {
		golden string
		input  string
		m      *MultiHeadAttention
	}{
		{"s000/mha/eval_out", "s000/x", NewMultiHeadAttention(torchrand.New(123), 6, 6, 3, 0.1, 2, false)},
		{"s001/mha/out", "s001/batch", NewMultiHeadAttention(torchrand.New(123), 3, 2, 6, 0, 2, false)},
		{"", "s000/mha_b/x", NewMultiHeadAttention(torchrand.New(5), 5, 8, 7, 0, 4, false)},
	} {
		m, x := c.m, golden(t, c.input)
		m.Eval()
		hd := m.HeadDim()
		ours := m.Forward(x)
		oursW, _ := m.LastWeights()

		// Undo one of GoMLX's two scalings: PyTorch's numbers.
		fixed, fixedW, err := gomlxMHA(t, m, x, math.Sqrt(float64(hd)), nil)
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, c.input+": GoMLX with queries·sqrt(hd) vs ours", fixed, ours, 1e-5)
		assertClose(t, c.input+": GoMLX coefficients vs ours", fixedW, oursW, 1e-5)
		if c.golden != "" {
			assertClose(t, c.input+": GoMLX with queries·sqrt(hd) vs PyTorch", fixed, golden(t, c.golden), 1e-5)
		}

		// As is: logits divided by head_dim.
		asIs, _, err := gomlxMHA(t, m, x, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		doubled := runCtx(t, m.Context(), func(scope *model.Scope, in []*Node) *Node {
			x := in[0]
			q := SplitHeads(m.linear(scope, "W_query", x), m.numHeads) // [B, H, T, hs]
			k := SplitHeads(m.linear(scope, "W_key", x), m.numHeads)   // [B, H, T, hs]
			v := SplitHeads(m.linear(scope, "W_value", x), m.numHeads) // [B, H, T, hs]
			w := StableSoftmax(ScaleScores(ScaleScores(CausalMaskFill(Scores(q, k)), hd), hd))
			return m.linear(scope, "out_proj", MergeHeads(ContextVectors(w, v))) // [B, T, D]
		}, x)
		assertClose(t, c.input+": GoMLX as is vs logits/head_dim", asIs, doubled, 1e-5)
		if hd > 1 {
			diff := 0.0
			for i, v := range flat(asIs) {
				diff = math.Max(diff, math.Abs(float64(v-flat(ours)[i])))
			}
			if diff < 1e-3 {
				t.Errorf("%s: GoMLX as is differs from PyTorch's math by only %g; expected the double scaling to show", c.input, diff)
			}
		}
	}

	// SetQueryKeyMatrixMask compares the mask's shape, dtype included, with the Float32 shape of
	// the coefficients, so a boolean mask is always rejected; a Float32 mask without the heads
	// axis passes the check, is broadcast, and is then never stored: the mask is ignored.
	m := NewMultiHeadAttention(torchrand.New(123), 3, 2, 6, 0, 2, false)
	m.Eval()
	x := golden(t, "s001/batch")
	_, plain, err := gomlxMHA(t, m, x, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, dims := range [][]int{{2, 6, 6}, {2, 6, 2, 6}} { // [B, Tq, Tk] and [B, Tq, H, Tk]
		mask := tensors.FromShape(shapes.Make(dtypes.Bool, dims...))
		if _, _, err := gomlxMHA(t, m, x, 1, mask); err == nil {
			t.Errorf("GoMLX's SetQueryKeyMatrixMask accepted a boolean %v mask; the finding in the doc is out of date", dims)
		}
	}
	diagonal := make([]float32, 2*6*6) // query i may only see key i
	for i := range diagonal {
		if (i/6)%6 == i%6 {
			diagonal[i] = 1
		}
	}
	mask := tensors.FromFlatDataAndDimensions(diagonal, 2, 6, 6)
	_, ignored, err := gomlxMHA(t, m, x, 1, mask)
	if err != nil {
		t.Fatalf("GoMLX's SetQueryKeyMatrixMask rejected a Float32 [B, Tq, Tk] mask: %v", err)
	}
	assertClose(t, "GoMLX coefficients with an ignored mask", ignored, plain, 0)
}
