package mhabench

import (
	"fmt"
	"math"

	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/layers"
	"github.com/gomlx/gomlx/ml/model"
)

// LayersQueryCompensation is what loadLayers multiplies W_query by so that GoMLX v0.26.0's
// layers.MultiHeadAttention computes the chapter's function: √hd. Its DoneWithCoefficients
// multiplies the projected query by 1/√hd and then divides the logits by √hd again, so its
// logits are q·k/hd instead of q·k/√hd; scaling the query weights by √hd undoes one of the two.
// [MeasureLayersLogitScale] measures the factor instead of trusting this reading of the code.
func LayersQueryCompensation(headDim int) float64 { return math.Sqrt(float64(headDim)) }

// Layers is GoMLX's layers.MultiHeadAttention(ctx, x, x, x, heads, hd) with UseCausalMask():
// self attention, variables under ctx.In("MultiHeadAttention"): query/key/value dense weights
// `[d, H, hd]` and biases `[H, hd]` (always present), output dense weights `[H·hd, d]` and biases
// `[d]`. x `[B, T, d]`; `[B, T, d]`.
func Layers(scope *model.Scope, x *Node, heads int) *Node {
	hd := x.Shape().Dim(2) / heads
	return layers.MultiHeadAttention(scope, x, x, x, heads, hd).UseCausalMask().Done() // [B, T, d]
}

// loadLayersScaled loads the chapter's weights into layers.MultiHeadAttention's variables, the
// query weights multiplied by queryScale, q/k/v biases 0.
func loadLayersScaled(scope *model.Scope, w Weights, s Size, queryScale float64) {
	h, hd, d := s.Heads, s.HeadDim(), s.Dim
	mha := scope.In("MultiHeadAttention")
	zeros := tensors.FromFlatDataAndDimensions(make([]float32, d), h, hd)
	for _, p := range []struct {
		scope string
		w     *tensors.Tensor
	}{{"query", scaled(w.Query, queryScale)}, {"key", w.Key}, {"value", w.Value}} {
		dense := mha.In(p.scope).In("dense")
		dense.VariableWithValue("weights", reshaped(transposed(p.w), d, h, hd)) // [d_in, H, hd]
		dense.VariableWithValue("biases", zeros)
	}
	out := mha.In("output").In("dense")
	out.VariableWithValue("weights", transposed(w.Out)) // [H·hd, d]
	out.VariableWithValue("biases", w.OutBias)
}

func loadLayers(scope *model.Scope, w Weights, s Size) {
	loadLayersScaled(scope, w, s, LayersQueryCompensation(s.HeadDim()))
}

func buildLayers(scope *model.Scope, x *Node, heads int) *Node {
	return Layers(scope.Reuse(), x, heads)
}

// MeasureLayersLogitScale measures the factor layers.MultiHeadAttention applies to q·k before
// its softmax, rather than trusting a reading of its code: it runs the layer with the chapter's
// weights uncompensated (one head of width headDim, 2 tokens, causal, 4 sequences) and, for the
// second query of each sequence, solves log(w₁/w₀) = scale·(q·k₁ − q·k₀) with q, k computed
// here from the same weights. want is the chapter's 1/√headDim; v0.26.0 gives 1/headDim.
func MeasureLayersLogitScale(b compute.Backend, headDim int) (got, want float64, err error) {
	defer catch(&err, "MeasureLayersLogitScale")
	s := Size{Batch: 4, Tokens: 2, Dim: headDim, Heads: 1}
	x, w := NewInputs(7, s)
	scope := model.New()
	loadLayersScaled(scope, w, s, 1)
	exec, err := model.NewExecAny(b, scope, func(scope *model.Scope, x *Node) []*Node {
		// Both outputs: returning only the coefficients, simplego (v0.26.0) panics on this graph
		// (index out of range while executing).
		out, coef := layers.MultiHeadAttention(scope.Reuse(), x, x, x, 1, headDim).UseCausalMask().DoneWithCoefficients()
		return []*Node{coef, out} // [B, T, H, T], [B, T, d]
	})
	if err != nil {
		return 0, 0, err
	}
	defer exec.Finalize()
	outs, err := exec.Exec(x)
	if err != nil {
		return 0, 0, err
	}
	defer release(outs)
	coef := tensors.MustCopyFlatData[float32](outs[0]) // [B, 2, 1, 2]
	xs, wq, wk := flat(x), flat(w.Query), flat(w.Key)
	d := headDim
	proj := func(w []float32, seq, tok int) []float64 { // row tok of x[seq] @ wᵀ
		out := make([]float64, d)
		for o := range d {
			for i := range d {
				out[o] += float64(xs[(seq*2+tok)*d+i]) * float64(w[o*d+i])
			}
		}
		return out
	}
	dot := func(a, b []float64) (s float64) {
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	best := 0.0
	for seq := range s.Batch {
		q := proj(wq, seq, 1)
		diff := dot(q, proj(wk, seq, 1)) - dot(q, proj(wk, seq, 0))
		w0, w1 := float64(coef[seq*4+2]), float64(coef[seq*4+3]) // query 1: keys 0 and 1
		if math.Abs(diff) > math.Abs(best) && w0 > 0 && w1 > 0 {
			best, got = diff, math.Log(w1/w0)/diff
		}
	}
	if best == 0 {
		return 0, 0, fmt.Errorf("no usable query: all score differences are 0")
	}
	return got, 1 / math.Sqrt(float64(headDim)), nil
}
