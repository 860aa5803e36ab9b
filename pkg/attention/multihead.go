package attention

import (
	"math"

	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// MultiHeadAttention is the vectorized MultiHeadAttention of seeds 000, 001 and 004 (Vaswani
// et al. 2017, section 3.2.2, with a causal mask): one Linear projection each for queries,
// keys and values to d_out = num_heads·head_dim, split into heads (view + transpose), causal
// scaled dot-product attention per head, dropout on the weights, heads merged back (transpose +
// view) and mixed by the out_proj Linear layer.
//
// Input `[B, T, d_in]` with T <= context_length; output `[B, T, d_out]`; weights `[B, H, T, T]`.
// Parameters: "W_query.weight", ("W_query.bias"), "W_key.weight", …, "W_value.weight", …,
// "out_proj.weight", "out_proj.bias". MultiHeadAttention(768, 768, 1024, 0.0, 12), GPT-2's
// size, has 2,360,064.
type MultiHeadAttention struct {
	Module
	dIn, dOut, contextLength, numHeads int
	fast                               bool
}

// NewMultiHeadAttention draws W_query, W_key, W_value (nn.Linear(d_in, d_out, qkv_bias)) and
// out_proj (nn.Linear(d_out, d_out), with bias) from g in this order, as
// MultiHeadAttention(d_in, d_out, context_length, dropout, num_heads, qkv_bias) does. In
// training mode (the default) a call draws one `[B, H, T, T]` dropout mask from g. It panics
// with an *ArgumentError if d_out is not divisible by num_heads.
func NewMultiHeadAttention(g *torchrand.Generator, dIn, dOut, contextLength int, dropout float64, numHeads int, qkvBias bool) *MultiHeadAttention {
	const fn = "NewMultiHeadAttention"
	checkPositive(fn, []string{"dIn", "dOut", "contextLength", "numHeads"}, dIn, dOut, contextLength, numHeads)
	if dOut%numHeads != 0 {
		argPanic(fn, "dOut", "(%d) must be divisible by numHeads (%d)", dOut, numHeads)
	}
	m := &MultiHeadAttention{Module: newModule("MultiHeadAttention", g, dropout),
		dIn: dIn, dOut: dOut, contextLength: contextLength, numHeads: numHeads}
	m.addHeadParams("", dIn, dOut, qkvBias)
	m.addLinear("out_proj", dOut, dOut, true)
	m.maskDims = func(d [][]int) [][]int { return [][]int{{d[0][0], numHeads, d[0][1], d[0][1]}} }
	m.build = func(scope *model.Scope, in []*Node, variant int) (out, w, d *Node) {
		data, masks := m.splitInputs(in)
		return m.apply(scope, data[0], masks, variant == 1)
	}
	return m
}

// HeadDim is d_out / num_heads, the width of each head.
func (m *MultiHeadAttention) HeadDim() int { return m.dOut / m.numHeads }

// SetFast chooses the graph Forward, Call and Apply build. The default (false) follows
// PyTorch's float32 operations one by one, as the seed's forward writes them, and matches its
// numbers to the last bit or two. Fast (true) computes the same function in fewer passes over
// the `[B, H, T, T]` attention matrix and skips the masked blocks (docs/benchmarks.md times
// both). It:
//
//   - 1/sqrt(head_dim) is folded into the query weights (`[d_out, d_in]`) instead of dividing
//     the scores;
//   - queries go in blocks of 128 tokens, and a block only meets the keys it may see: the parts
//     of the `[B, H, T, T]` scores that the causal mask would zero entirely are never computed
//     (for T = 1024, 56% of the attention matrix and of its two products are left);
//   - the causal mask is added as a bias of 0 and -Inf (one pass) instead of filled through a
//     boolean mask;
//   - heads are split and merged inside the matrix products (DotGeneral contracts the
//     `[B, T, H, hs]` layout directly; out_proj contracts over H and hs);
//   - each block's softmax is [StableSoftmax], which is one fused op on the pure-Go backend at
//     these sizes.
//
// Fast results differ from PyTorch's by float32 rounding (about 1e-6 relative on small scores,
// more where large scores make the softmax sharp, as in seed 000). SetFast clears nothing:
// graphs of both kinds are cached.
func (m *MultiHeadAttention) SetFast(fast bool) { m.mu.Lock(); m.fast = fast; m.mu.Unlock() }

// Apply builds the forward pass on x `[B, T, d_in]` into x's graph and returns `[B, T, d_out]`.
// Variables are read under scope (nil: the root scope of the module's own store, see
// [Module.Store]) and created there from the module's values if missing. Dropout follows
// GoMLX's convention: it is applied when scope.IsTraining(g), with masks from GoMLX's random
// generator (not PyTorch's).
func (m *MultiHeadAttention) Apply(scope *model.Scope, x *Node) *Node {
	out, _, _ := m.ApplyWithMasks(scope, x, m.rngMasks(scope, []*Node{x})...)
	return out
}

// ApplyWithMasks is Apply with the dropout mask given (none: no dropout): one Float32
// `[B, H, T, T]` mask of 0 and 1/(1-p). It returns the output `[B, T, d_out]` and the weights
// `[B, H, T, T]` before and after dropout.
func (m *MultiHeadAttention) ApplyWithMasks(scope *model.Scope, x *Node, masks ...*Node) (output, weights, dropped *Node) {
	m.mu.Lock()
	fast := m.fast
	m.mu.Unlock()
	return m.apply(scope, x, masks, fast)
}

// apply is ApplyWithMasks with the kind of graph given (see SetFast).
func (m *MultiHeadAttention) apply(scope *model.Scope, x *Node, masks []*Node, fast bool) (output, weights, dropped *Node) {
	const fn = "MultiHeadAttention.Apply"
	checkRank(fn, "x", x, 3)
	checkTokens(fn, x.Shape().Dimensions, m.dIn, m.contextLength, 3)
	m.checkMasks(fn, []*Node{x}, masks)
	var mask *Node
	if len(masks) > 0 {
		mask = masks[0]
	}
	if fast {
		return m.applyFast(scope, x, mask)
	}
	keys := m.linear(scope, "W_key", x)       // [B, T, d_out]
	queries := m.linear(scope, "W_query", x)  // [B, T, d_out]
	values := m.linear(scope, "W_value", x)   // [B, T, d_out]
	keys = SplitHeads(keys, m.numHeads)       // [B, H, T, hs]
	queries = SplitHeads(queries, m.numHeads) // [B, H, T, hs]
	values = SplitHeads(values, m.numHeads)   // [B, H, T, hs]
	heads, weights, dropped := ScaledDotProduct(queries, keys, values).
		Causal(true).DropoutMask(mask).DoneWithDropped() // [B, H, T, hs]
	merged := MergeHeads(heads)                                  // [B, T, d_out]
	return m.linear(scope, "out_proj", merged), weights, dropped // [B, T, d_out]
}

// Forward runs the module on x `[B, T, d_in]` as one compiled graph, drawing the dropout mask
// from the generator in training mode, and returns `[B, T, d_out]`; it panics with the error
// Call returns.
func (m *MultiHeadAttention) Forward(x *tensors.Tensor) *tensors.Tensor { return mustCall(m.Call(x)) }

// Call is Forward returning bad input (rank, d_in, more tokens than context_length) as an error.
func (m *MultiHeadAttention) Call(x *tensors.Tensor) (*tensors.Tensor, error) {
	m.mu.Lock()
	variant := 0
	if m.fast {
		variant = 1
	}
	m.mu.Unlock()
	return m.call(variant, func(d [][]int) { checkTokens("MultiHeadAttention.Call", d[0], m.dIn, m.contextLength, 3) }, x)
}

// fastBlock is the query block of the fast graph (see SetFast).
const fastBlock = 128

// applyFast is the SetFast(true) graph of the forward pass: see SetFast.
func (m *MultiHeadAttention) applyFast(scope *model.Scope, x, mask *Node) (output, weights, dropped *Node) {
	g := x.Graph()
	p := func(key string) *Node { return m.optParam(scope, g, key) }
	return fastCausalMultiHead(x, m.numHeads, p("W_query.weight"), p("W_query.bias"), p("W_key.weight"), p("W_key.bias"),
		p("W_value.weight"), p("W_value.bias"), p("out_proj.weight"), p("out_proj.bias"), mask)
}

// FastCausalMultiHead is the fast formulation of a causal multi-head self-attention forward pass
// in evaluation mode — the graph of [MultiHeadAttention.SetFast](true), on explicit weights, for
// benchmarks and models that hold their own variables (see SetFast for what makes it fast).
//
// x is `[B, T, d_in]`; the weights are in PyTorch's nn.Linear layout: wq, wk, wv `[d_out, d_in]`
// with biases bq, bk, bv `[d_out]` or nil, and the output projection wo `[d_out, d_out]` with
// bias bo `[d_out]` or nil; numHeads must divide d_out. The result is `[B, T, d_out]`, equal to
// the seed's MultiHeadAttention (Linear, [SplitHeads], causal [ScaledDotProduct], [MergeHeads],
// Linear) up to float32 rounding. Bad shapes panic with an *ArgumentError naming them.
func FastCausalMultiHead(x *Node, numHeads int, wq, bq, wk, bk, wv, bv, wo, bo *Node) *Node {
	const fn = "FastCausalMultiHead"
	checkRank(fn, "x", x, 3)
	checkFloat(fn, "x", x)
	if numHeads <= 0 {
		argPanic(fn, "numHeads", "must be > 0, got %d", numHeads)
	}
	checkRank(fn, "wq", wq, 2)
	dOut, dIn := wq.Shape().Dim(0), x.Shape().Dim(2)
	if dOut%numHeads != 0 {
		argPanic(fn, "wq", "shape %s: d_out (%d) is not divisible by numHeads (%d)", wq.Shape(), dOut, numHeads)
	}
	for _, w := range []struct {
		name string
		node *Node
		dims []int
	}{{"wq", wq, []int{dOut, dIn}}, {"wk", wk, []int{dOut, dIn}}, {"wv", wv, []int{dOut, dIn}}, {"wo", wo, []int{dOut, dOut}},
		{"bq", bq, []int{dOut}}, {"bk", bk, []int{dOut}}, {"bv", bv, []int{dOut}}, {"bo", bo, []int{dOut}}} {
		if w.node == nil && w.name[0] == 'b' {
			continue
		}
		if w.node == nil || w.node.DType() != x.DType() || !dimsEqual(w.node.Shape().Dimensions, w.dims) {
			argPanic(fn, w.name, "shape %v does not match x shape %s: want %v of %s", shapeOf(w.node), x.Shape(), w.dims, x.DType())
		}
	}
	out, _, _ := fastCausalMultiHead(x, numHeads, wq, bq, wk, bk, wv, bv, wo, bo, nil)
	return out
}

// fastCausalMultiHead is FastCausalMultiHead with an optional dropout mask `[B, H, T, T]`; it also
// returns the attention weights `[B, H, T, T]` before and after dropout (pruned from the graph
// when unused).
func fastCausalMultiHead(x *Node, h int, wq, bq, wk, bk, wv, bv, wo, bo, mask *Node) (output, weights, dropped *Node) {
	g := x.Graph()
	dOut := wq.Shape().Dim(0)
	b, t, hs := x.Shape().Dim(0), x.Shape().Dim(1), dOut/h
	scale := 1 / math.Sqrt(float64(hs))
	wq = MulScalar(wq, scale) // [d_out, d_in]
	if bq != nil {
		bq = MulScalar(bq, scale) // [d_out]
	}
	queries := Reshape(Linear(x, wq, bq), b, t, h, hs) // [B, T, H, hs]
	keys := Reshape(Linear(x, wk, bk), b, t, h, hs)    // [B, T, H, hs]
	values := Reshape(Linear(x, wv, bv), b, t, h, hs)  // [B, T, H, hs]

	// Queries in blocks of fastBlock: block [start, end) only attends to keys [0, end), so the
	// `[B, H, Tq, Tk]` blocks that the causal mask zeroes entirely are never computed.
	var headBlocks, weightBlocks, droppedBlocks []*Node
	for start := 0; start < t; start += fastBlock {
		end := min(start+fastBlock, t)
		qb := Slice(queries, AxisRange(), AxisRange(start, end))                   // [B, Tb, H, hs]
		kb := Slice(keys, AxisRange(), AxisRange(0, end))                          // [B, Tk, H, hs]
		vb := Slice(values, AxisRange(), AxisRange(0, end))                        // [B, Tk, H, hs]
		scores := DotGeneral(qb, []int{3}, []int{0, 2}, kb, []int{3}, []int{0, 2}) // [B, H, Tb, Tk]
		s := shapes.Make(dtypes.Int32, end-start, end)
		future := GreaterThan(Iota(g, s, 1), AddScalar(Iota(g, s, 0), start))               // [Tb, Tk]: key > query
		bias := Where(future, Scalar(g, x.DType(), math.Inf(-1)), ScalarZero(g, x.DType())) // [Tb, Tk]: 0 or -Inf
		scores = Add(scores, ExpandLeftToRank(bias, 4))                                     // [B, H, Tb, Tk]
		w := StableSoftmax(scores)                                                          // [B, H, Tb, Tk]
		d := w
		if mask != nil {
			mb := Slice(mask, AxisRange(), AxisRange(), AxisRange(start, end), AxisRange(0, end)) // [B, H, Tb, Tk]
			d = Dropout(w, mb)
		}
		headBlocks = append(headBlocks, DotGeneral(d, []int{3}, []int{0, 1}, vb, []int{1}, []int{0, 2})) // [B, H, Tb, hs]

		// The weights, for LastWeights (pruned from the graph unless recorded): zeros for the
		// keys the block skipped.
		if end < t {
			pad := Zeros(g, shapes.Make(x.DType(), b, h, end-start, t-end)) // [B, H, Tb, T-Tk]
			w, d = Concatenate([]*Node{w, pad}, 3), Concatenate([]*Node{d, pad}, 3)
		}
		weightBlocks, droppedBlocks = append(weightBlocks, w), append(droppedBlocks, d)
	}
	heads := Concatenate(headBlocks, 2)    // [B, H, Tq, hs]
	weights = Concatenate(weightBlocks, 2) // [B, H, Tq, Tk]
	dropped = weights
	if mask != nil {
		dropped = Concatenate(droppedBlocks, 2) // [B, H, Tq, Tk]
	}

	wo = Reshape(wo, dOut, h, hs)                                      // [d_out, H, hs]
	output = DotGeneral(heads, []int{1, 3}, nil, wo, []int{1, 2}, nil) // [B, Tq, d_out]
	if bo != nil {
		output = Add(output, ExpandLeftToRank(bo, 3)) // [B, Tq, d_out]
	}
	return output, weights, dropped
}

// CrossAttention is seed 002's final MultiHeadAttention: queries from one sequence, keys and
// values from another (cross attention, Tq != Tk allowed), or all three from the same one
// (self attention), optionally causal; projections wq, wk, wv (nn.Linear(embed_dim,
// embed_dim, bias)) and output_projection (with bias); no dropout.
//
// Inputs: q `[B, Tq, E]`, k `[B, Tk, E]`, v `[B, Tk, E]`; output `[B, Tq, E]`; weights
// `[B, H, Tq, Tk]`. With causal set the mask is triu(ones(Tq, Tk), diagonal=1), as in the seed.
// Parameters: "wq.weight", ("wq.bias"), "wk.weight", …, "output_projection.weight",
// "output_projection.bias".
type CrossAttention struct {
	Module
	numHeads, embedDim int
}

// NewCrossAttention draws wq, wk, wv and output_projection from g in this order, as seed 002's
// MultiHeadAttention(num_heads, embed_dim, bias) does. It panics with an *ArgumentError if
// embed_dim is not divisible by num_heads.
func NewCrossAttention(g *torchrand.Generator, numHeads, embedDim int, bias bool) *CrossAttention {
	const fn = "NewCrossAttention"
	checkPositive(fn, []string{"numHeads", "embedDim"}, numHeads, embedDim)
	if embedDim%numHeads != 0 {
		argPanic(fn, "embedDim", "(%d) must be divisible by numHeads (%d)", embedDim, numHeads)
	}
	m := &CrossAttention{Module: newModule("CrossAttention", g, 0), numHeads: numHeads, embedDim: embedDim}
	for _, k := range []string{"wq", "wk", "wv"} {
		m.addLinear(k, embedDim, embedDim, bias)
	}
	m.addLinear("output_projection", embedDim, embedDim, true)
	m.nData = 3
	m.build = func(scope *model.Scope, in []*Node, variant int) (out, w, d *Node) {
		out, w = m.ApplyWithWeights(scope, in[0], in[1], in[2], variant == 1)
		return out, w, w
	}
	return m
}

// Apply builds the forward pass into q's graph and returns `[B, Tq, E]`; causal is the seed's
// mask=True. k and v may be nil: each defaults to q, as in the seed (k_input = q_input,
// v_input = q_input when None).
// Variables as in [MultiHeadAttention.Apply].
func (m *CrossAttention) Apply(scope *model.Scope, q, k, v *Node, causal bool) *Node {
	out, _ := m.ApplyWithWeights(scope, q, k, v, causal)
	return out
}

// ApplyWithWeights is Apply that also returns the attention weights `[B, H, Tq, Tk]`.
func (m *CrossAttention) ApplyWithWeights(scope *model.Scope, q, k, v *Node, causal bool) (output, weights *Node) {
	const fn = "CrossAttention.Apply"
	checkRank(fn, "q", q, 3)
	if k == nil {
		k = q
	}
	if v == nil {
		v = q
	}
	checkRank(fn, "k", k, 3)
	checkRank(fn, "v", v, 3)
	m.checkQKV(fn, q.Shape().Dimensions, k.Shape().Dimensions, v.Shape().Dimensions)
	queries := m.linear(scope, "wq", q)                                             // [B, Tq, E]
	keys := m.linear(scope, "wk", k)                                                // [B, Tk, E]
	values := m.linear(scope, "wv", v)                                              // [B, Tk, E]
	queries = SplitHeads(queries, m.numHeads)                                       // [B, H, Tq, hs]
	keys = SplitHeads(keys, m.numHeads)                                             // [B, H, Tk, hs]
	values = SplitHeads(values, m.numHeads)                                         // [B, H, Tk, hs]
	heads, weights := ScaledDotProduct(queries, keys, values).Causal(causal).Done() // [B, H, Tq, hs]
	merged := MergeHeads(heads)                                                     // [B, Tq, E]
	return m.linear(scope, "output_projection", merged), weights                    // [B, Tq, E]
}

// Forward runs the module as one compiled graph on q `[B, Tq, E]` and k, v `[B, Tk, E]` (nil k:
// self attention, k = v = q; nil v: v = q, as in the seed) and returns `[B, Tq, E]`; causal
// is the seed's mask=True. It panics with the error Call returns.
func (m *CrossAttention) Forward(q, k, v *tensors.Tensor, causal bool) *tensors.Tensor {
	return mustCall(m.Call(q, k, v, causal))
}

// Call is Forward returning bad input (ranks, widths, keys and values of different lengths)
// as an error.
func (m *CrossAttention) Call(q, k, v *tensors.Tensor, causal bool) (*tensors.Tensor, error) {
	if k == nil {
		k = q
	}
	if v == nil {
		v = q
	}
	variant := 0
	if causal {
		variant = 1
	}
	return m.call(variant, func(d [][]int) { m.checkQKV("CrossAttention.Call", d[0], d[1], d[2]) }, q, k, v)
}

// checkQKV validates q `[B, Tq, E]`, k `[B, Tk, E]` and v `[B, Tk, E]`.
func (m *CrossAttention) checkQKV(fn string, q, k, v []int) {
	checkTokens(fn, q, m.embedDim, 0, 3)
	for _, in := range []struct {
		name string
		dims []int
	}{{"k", k}, {"v", v}} {
		if len(in.dims) != 3 || in.dims[2] != m.embedDim || in.dims[0] != q[0] || in.dims[1] <= 0 {
			argPanic(fn, in.name, "dims %v do not match q dims %v: want `[%d, Tk, %d]`", in.dims, q, q[0], m.embedDim)
		}
	}
	if k[1] != v[1] {
		argPanic(fn, "v", "dims %v: Tk=%d values but k dims %v have Tk=%d keys", v, v[1], k, k[1])
	}
}
