package attention

import (
	"fmt"

	"github.com/attnbook/attnbook/pkg/torchrand"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// CausalAttention is the CausalAttention class of seeds 000 and 001: Linear query, key and value
// projections, a causal mask (triu(ones, diagonal=1) filled with -Inf), scaling by
// sqrt(d_out), softmax, and dropout on the attention weights.
//
// Input `[B, T, d_in]` with T <= context_length; output `[B, T, d_out]`; weights `[B, T, T]`.
// Parameters: "W_query.weight", ("W_query.bias"), "W_key.weight", …, "W_value.weight", ….
type CausalAttention struct {
	Module
	dIn, dOut, contextLength int
}

// NewCausalAttention draws W_query, W_key and W_value (nn.Linear(d_in, d_out, qkv_bias), in
// this order) from g, as CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) does.
// In training mode (the default) each call draws a `[B, T, T]` dropout mask from g.
func NewCausalAttention(g *torchrand.Generator, dIn, dOut, contextLength int, dropout float64, qkvBias bool) *CausalAttention {
	checkPositive("NewCausalAttention", []string{"dIn", "dOut", "contextLength"}, dIn, dOut, contextLength)
	m := &CausalAttention{Module: newModule("CausalAttention", g, dropout), dIn: dIn, dOut: dOut, contextLength: contextLength}
	m.addHeadParams("", dIn, dOut, qkvBias)
	m.maskDims = func(d [][]int) [][]int { return [][]int{{d[0][0], d[0][1], d[0][1]}} }
	m.build = func(scope *model.Scope, in []*Node, _ int) (out, w, d *Node) {
		data, masks := m.splitInputs(in)
		return m.ApplyWithMasks(scope, data[0], masks...)
	}
	return m
}

// Apply builds the forward pass on x `[B, T, d_in]` into x's graph and returns `[B, T, d_out]`.
// Variables are read under scope (nil: the root scope of the module's own store, see
// [Module.Store]) and created there from the module's values if missing. Dropout follows
// GoMLX's convention: it is applied when scope.IsTraining(g), with masks from GoMLX's random
// generator (not PyTorch's).
func (m *CausalAttention) Apply(scope *model.Scope, x *Node) *Node {
	out, _, _ := m.ApplyWithMasks(scope, x, m.rngMasks(scope, []*Node{x})...)
	return out
}

// ApplyWithMasks is Apply with the dropout mask given (none: no dropout): one Float32
// `[B, T, T]` mask of 0 and 1/(1-p), as torchrand.Generator.DropoutMask draws it. It returns
// the output `[B, T, d_out]` and the weights `[B, T, T]` before and after dropout.
func (m *CausalAttention) ApplyWithMasks(scope *model.Scope, x *Node, masks ...*Node) (output, weights, dropped *Node) {
	const fn = "CausalAttention.Apply"
	checkRank(fn, "x", x, 3)
	checkTokens(fn, x.Shape().Dimensions, m.dIn, m.contextLength, 3)
	m.checkMasks(fn, []*Node{x}, masks)
	var mask *Node
	if len(masks) > 0 {
		mask = masks[0]
	}
	return m.causalHead(scope, "", x, mask)
}

// Forward runs the module on x `[B, T, d_in]` as one compiled graph, drawing the dropout mask
// from the generator in training mode, and returns `[B, T, d_out]`; it panics with the error
// Call returns.
func (m *CausalAttention) Forward(x *tensors.Tensor) *tensors.Tensor { return mustCall(m.Call(x)) }

// Call is Forward returning bad input (rank, d_in, more tokens than context_length) as an error.
func (m *CausalAttention) Call(x *tensors.Tensor) (*tensors.Tensor, error) {
	return m.call(0, func(d [][]int) { checkTokens("CausalAttention.Call", d[0], m.dIn, m.contextLength, 3) }, x)
}

// MultiHeadAttentionWrapper is the MultiHeadAttentionWrapper of seeds 000 and 001: num_heads
// independent CausalAttention heads whose outputs are concatenated, torch.cat([head(x) for
// head in heads], dim=-1).
//
// Input `[B, T, d_in]`; output `[B, T, num_heads·d_out]`; weights `[B, H, T, T]` (heads
// stacked). Parameters "heads.0.W_query.weight", …, "heads.1.W_query.weight", ….
type MultiHeadAttentionWrapper struct {
	Module
	dIn, dOut, contextLength, numHeads int
}

// NewMultiHeadAttentionWrapper draws num_heads CausalAttention heads from g, one after the
// other, as MultiHeadAttentionWrapper(d_in, d_out, context_length, dropout, num_heads,
// qkv_bias) does. In training mode a call draws one `[B, T, T]` mask per head, head by head.
func NewMultiHeadAttentionWrapper(g *torchrand.Generator, dIn, dOut, contextLength int, dropout float64, numHeads int, qkvBias bool) *MultiHeadAttentionWrapper {
	checkPositive("NewMultiHeadAttentionWrapper", []string{"dIn", "dOut", "contextLength", "numHeads"}, dIn, dOut, contextLength, numHeads)
	m := &MultiHeadAttentionWrapper{Module: newModule("MultiHeadAttentionWrapper", g, dropout),
		dIn: dIn, dOut: dOut, contextLength: contextLength, numHeads: numHeads}
	for h := range numHeads {
		m.addHeadParams(fmt.Sprintf("heads.%d.", h), dIn, dOut, qkvBias)
	}
	m.maskDims = func(d [][]int) [][]int {
		dims := make([][]int, numHeads)
		for h := range dims {
			dims[h] = []int{d[0][0], d[0][1], d[0][1]}
		}
		return dims
	}
	m.build = func(scope *model.Scope, in []*Node, _ int) (out, w, d *Node) {
		data, masks := m.splitInputs(in)
		return m.ApplyWithMasks(scope, data[0], masks...)
	}
	return m
}

// Apply builds the forward pass on x `[B, T, d_in]` and returns `[B, T, H·d_out]`; variables
// and dropout as in [CausalAttention.Apply].
func (m *MultiHeadAttentionWrapper) Apply(scope *model.Scope, x *Node) *Node {
	out, _, _ := m.ApplyWithMasks(scope, x, m.rngMasks(scope, []*Node{x})...)
	return out
}

// ApplyWithMasks is Apply with one `[B, T, T]` dropout mask per head (or none). It returns the
// output `[B, T, H·d_out]` and the heads' weights `[B, H, T, T]` before and after dropout.
func (m *MultiHeadAttentionWrapper) ApplyWithMasks(scope *model.Scope, x *Node, masks ...*Node) (output, weights, dropped *Node) {
	const fn = "MultiHeadAttentionWrapper.Apply"
	checkRank(fn, "x", x, 3)
	checkTokens(fn, x.Shape().Dimensions, m.dIn, m.contextLength, 3)
	m.checkMasks(fn, []*Node{x}, masks)
	outs := make([]*Node, m.numHeads)
	ws := make([]*Node, m.numHeads)
	ds := make([]*Node, m.numHeads)
	for h := range m.numHeads {
		var mask *Node
		if len(masks) > 0 {
			mask = masks[h]
		}
		outs[h], ws[h], ds[h] = m.causalHead(scope, fmt.Sprintf("heads.%d.", h), x, mask) // [B, T, d_out], [B, T, T]
	}
	weights = Stack(ws, 1) // [B, H, T, T]
	dropped = weights
	if len(masks) > 0 {
		dropped = Stack(ds, 1) // [B, H, T, T]
	}
	return Concatenate(outs, -1), weights, dropped // [B, T, H·d_out]
}

// Forward runs the module on x `[B, T, d_in]` as one compiled graph and returns
// `[B, T, H·d_out]`; it panics with the error Call returns.
func (m *MultiHeadAttentionWrapper) Forward(x *tensors.Tensor) *tensors.Tensor {
	return mustCall(m.Call(x))
}

// Call is Forward returning bad input as an error.
func (m *MultiHeadAttentionWrapper) Call(x *tensors.Tensor) (*tensors.Tensor, error) {
	return m.call(0, func(d [][]int) {
		checkTokens("MultiHeadAttentionWrapper.Call", d[0], m.dIn, m.contextLength, 3)
	}, x)
}

// addHeadParams registers the W_query, W_key and W_value Linear layers of one causal head,
// keys prefixed by prefix ("" or "heads.0.").
func (m *Module) addHeadParams(prefix string, dIn, dOut int, bias bool) {
	for _, k := range []string{"W_query", "W_key", "W_value"} {
		m.addLinear(prefix+k, dIn, dOut, bias)
	}
}

// causalHead is the forward pass of one CausalAttention head with parameters under prefix:
// `[B, T, d_in]` → `[B, T, d_out]`, weights `[B, T, T]`.
func (m *Module) causalHead(scope *model.Scope, prefix string, x, mask *Node) (output, weights, dropped *Node) {
	keys := m.linear(scope, prefix+"W_key", x)      // [B, T, d_out]
	queries := m.linear(scope, prefix+"W_query", x) // [B, T, d_out]
	values := m.linear(scope, prefix+"W_value", x)  // [B, T, d_out]
	return ScaledDotProduct(queries, keys, values).Causal(true).DropoutMask(mask).DoneWithDropped()
}
