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

// Grouped-query attention (Ainslie et al. 2023, "GQA: Training Generalized Multi-Query
// Transformer Models from Multi-Head Checkpoints") lets groups of query heads share one key and
// value head: H query heads, Hkv ≤ H key/value heads, H/Hkv query heads per group. Query head h
// reads key/value head h / (H/Hkv). Hkv = H is multi-head attention; Hkv = 1 is multi-query
// attention (Shazeer 2019, "Fast Transformer Decoding: One Write-Head is All You Need"). The keys
// and values that a generating model caches shrink by H/Hkv; the queries are untouched.

// RepeatKV is keys (or values) `[B, Hkv, T, hs]` repeated for the query heads that share them,
// torch's x.repeat_interleave(groupSize, dim=1), as the book's GroupedQueryAttention writes it:
// the result is `[B, Hkv·groupSize, T, hs]`, and head h of it is head h / groupSize of x
// (groupSize = 2: heads 0 0 1 1 2 2 …). It copies: the memory saving of GQA is in the cache,
// before the repeat; [GroupedQueryCausal] computes the same attention without the copies.
func RepeatKV(x *Node, groupSize int) *Node {
	const fn = "RepeatKV"
	checkRank(fn, "x", x, 4)
	if groupSize <= 0 {
		argPanic(fn, "groupSize", "must be > 0, got %d", groupSize)
	}
	if groupSize == 1 {
		return x
	}
	d := x.Shape().Dimensions
	b, hkv, t, hs := d[0], d[1], d[2], d[3]
	x = InsertAxes(x, 2)                             // [B, Hkv, 1, T, hs]
	x = BroadcastToDims(x, b, hkv, groupSize, t, hs) // [B, Hkv, g, T, hs]
	return Reshape(x, b, hkv*groupSize, t, hs)       // [B, Hkv·g, T, hs]
}

// GroupedQueryCausal is causal scaled dot-product attention with grouped queries: queries
// `[B, H, T, hs]` against keys and values `[B, Hkv, Tk, hs]` (H a multiple of Hkv, Tk ≥ T: the
// last T keys are the queries' own positions, the ones before them a cache). Query head h uses
// key/value head h / (H/Hkv). It returns the context vectors `[B, H, T, hs]` and the attention
// weights `[B, H, T, Tk]`.
//
// It computes what [RepeatKV] on keys and values followed by [ScaledDotProduct](…).Causal(true)
// computes — the book's formulation — without repeating them: the H/Hkv query heads of a group
// are stacked along the token axis, `[B, Hkv, (H/Hkv)·T, hs]`, so one product per key/value
// head serves its whole group. Query i (of T) may see keys 0 … Tk-T+i.
func GroupedQueryCausal(queries, keys, values *Node) (context, weights *Node) {
	const fn = "GroupedQueryCausal"
	checkRank(fn, "queries", queries, 4)
	checkFloat(fn, "queries", queries)
	checkRank(fn, "keys", keys, 4)
	checkRank(fn, "values", values, 4)
	qd, kd := queries.Shape().Dimensions, keys.Shape().Dimensions
	b, h, t, hs := qd[0], qd[1], qd[2], qd[3]
	hkv, tk := kd[1], kd[2]
	switch {
	case keys.DType() != queries.DType() || kd[0] != b || kd[3] != hs || hkv == 0 || h%hkv != 0 || tk < t:
		argPanic(fn, "keys", "shape %s does not match queries shape %s: want `[%d, Hkv, Tk, %d]` with Hkv dividing %d and Tk >= %d",
			keys.Shape(), queries.Shape(), b, hs, h, t)
	case values.DType() != queries.DType() || !dimsEqual(values.Shape().Dimensions, kd):
		argPanic(fn, "values", "shape %s does not match keys shape %s: want the same shape", values.Shape(), keys.Shape())
	}
	g := h / hkv
	q := Reshape(queries, b, hkv, g*t, hs)                                         // [B, Hkv, g·T, hs]: a group's queries in a row
	scores := Scores(q, keys)                                                      // [B, Hkv, g·T, Tk]
	scores = Reshape(scores, b, h, t, tk)                                          // [B, H, T, Tk]
	scores = MaskFill(scores, LaterKeysMask(queries.Graph(), t, tk), math.Inf(-1)) // keys after each query: -Inf
	weights = StableSoftmax(ScaleScores(scores, hs))                               // [B, H, T, Tk]
	ctx := ContextVectors(Reshape(weights, b, hkv, g*t, tk), values)               // [B, Hkv, g·T, hs]
	return Reshape(ctx, b, h, t, hs), weights                                      // [B, H, T, hs]
}

// LaterKeysMask is the causal mask of queries that come after a cache: a `[Tq, Tk]` boolean
// matrix, true where key j lies after query i when the Tq queries are the last Tq of Tk
// positions (query i is at position Tk-Tq+i), the book's KV-cache mask q_positions <
// k_positions. For Tq = Tk it is [FutureMask]; for one query (Tq = 1) it is all false: the
// newest token sees every cached key.
func LaterKeysMask(g *Graph, tq, tk int) *Node {
	if tq <= 0 || tk < tq {
		argPanic("LaterKeysMask", "tq, tk", "need 0 < tq <= tk, got %d, %d", tq, tk)
	}
	keyPos := Iota(g, shapes.Make(dtypes.Int32, tq, tk), 1)                     // [Tq, Tk]: j
	queryPos := AddScalar(Iota(g, shapes.Make(dtypes.Int32, tq, tk), 0), tk-tq) // [Tq, Tk]: Tk-Tq+i
	return GreaterThan(keyPos, queryPos)                                        // [Tq, Tk]
}

// GroupedQueryAttention is the GroupedQueryAttention class of the book's bonus material
// (LLMs-from-scratch, ch04/04_gqa): MultiHeadAttention whose W_key and W_value project to
// num_kv_groups heads instead of num_heads, each shared by num_heads/num_kv_groups query heads
// (keys and values repeat_interleave'd before the causal scaled dot-product attention).
// num_kv_groups = num_heads is MultiHeadAttention; num_kv_groups = 1 is multi-query attention.
//
// Input `[B, T, d_in]` with T <= context_length; output `[B, T, d_out]`; weights `[B, H, T, T]`.
// Parameters, in the order they are drawn: "W_key.weight" `[Hkv·hs, d_in]`, ("W_key.bias"),
// "W_value.weight" `[Hkv·hs, d_in]`, …, "W_query.weight" `[d_out, d_in]`, …, "out_proj.weight",
// "out_proj.bias", with hs = d_out / num_heads.
type GroupedQueryAttention struct {
	Module
	dIn, dOut, contextLength, numHeads, numKVGroups int
}

// NewGroupedQueryAttention draws W_key, W_value (nn.Linear(d_in, num_kv_groups·head_dim,
// qkv_bias)), W_query (nn.Linear(d_in, d_out, qkv_bias)) and out_proj (nn.Linear(d_out, d_out))
// from g in this order, as GroupedQueryAttention(d_in, d_out, context_length, dropout, num_heads,
// num_kv_groups, qkv_bias) does. In training mode (the default) a call draws one `[B, H, T, T]`
// dropout mask from g. It panics with an *ArgumentError if num_heads does not divide d_out or
// num_kv_groups does not divide num_heads.
func NewGroupedQueryAttention(g *torchrand.Generator, dIn, dOut, contextLength int, dropout float64, numHeads, numKVGroups int, qkvBias bool) *GroupedQueryAttention {
	const fn = "NewGroupedQueryAttention"
	checkPositive(fn, []string{"dIn", "dOut", "contextLength", "numHeads", "numKVGroups"}, dIn, dOut, contextLength, numHeads, numKVGroups)
	if dOut%numHeads != 0 {
		argPanic(fn, "dOut", "(%d) must be divisible by numHeads (%d)", dOut, numHeads)
	}
	if numHeads%numKVGroups != 0 {
		argPanic(fn, "numKVGroups", "(%d) must divide numHeads (%d)", numKVGroups, numHeads)
	}
	m := &GroupedQueryAttention{Module: newModule("GroupedQueryAttention", g, dropout),
		dIn: dIn, dOut: dOut, contextLength: contextLength, numHeads: numHeads, numKVGroups: numKVGroups}
	kvOut := numKVGroups * (dOut / numHeads)
	m.addLinear("W_key", dIn, kvOut, qkvBias)
	m.addLinear("W_value", dIn, kvOut, qkvBias)
	m.addLinear("W_query", dIn, dOut, qkvBias)
	m.addLinear("out_proj", dOut, dOut, true)
	m.maskDims = func(d [][]int) [][]int { return [][]int{{d[0][0], numHeads, d[0][1], d[0][1]}} }
	m.build = func(scope *model.Scope, in []*Node, _ int) (out, w, d *Node) {
		data, masks := m.splitInputs(in)
		return m.apply(scope, data[0], masks)
	}
	return m
}

// HeadDim is d_out / num_heads, the width of each head.
func (m *GroupedQueryAttention) HeadDim() int { return m.dOut / m.numHeads }

// KVHeads is num_kv_groups, the number of key/value heads.
func (m *GroupedQueryAttention) KVHeads() int { return m.numKVGroups }

// Apply builds the forward pass on x `[B, T, d_in]` into x's graph and returns `[B, T, d_out]`;
// variables and dropout as in [MultiHeadAttention.Apply].
func (m *GroupedQueryAttention) Apply(scope *model.Scope, x *Node) *Node {
	out, _, _ := m.ApplyWithMasks(scope, x, m.rngMasks(scope, []*Node{x})...)
	return out
}

// ApplyWithMasks is Apply with the dropout mask given (none: no dropout): one Float32
// `[B, H, T, T]` mask of 0 and 1/(1-p). It returns the output `[B, T, d_out]` and the weights
// `[B, H, T, T]` before and after dropout.
func (m *GroupedQueryAttention) ApplyWithMasks(scope *model.Scope, x *Node, masks ...*Node) (output, weights, dropped *Node) {
	return m.apply(scope, x, masks)
}

func (m *GroupedQueryAttention) apply(scope *model.Scope, x *Node, masks []*Node) (output, weights, dropped *Node) {
	const fn = "GroupedQueryAttention.Apply"
	checkRank(fn, "x", x, 3)
	checkTokens(fn, x.Shape().Dimensions, m.dIn, m.contextLength, 3)
	m.checkMasks(fn, []*Node{x}, masks)
	var mask *Node
	if len(masks) > 0 {
		mask = masks[0]
	}
	group := m.numHeads / m.numKVGroups
	keys := SplitHeads(m.linear(scope, "W_key", x), m.numKVGroups)     // [B, Hkv, T, hs]
	values := SplitHeads(m.linear(scope, "W_value", x), m.numKVGroups) // [B, Hkv, T, hs]
	queries := SplitHeads(m.linear(scope, "W_query", x), m.numHeads)   // [B, H, T, hs]
	keys, values = RepeatKV(keys, group), RepeatKV(values, group)      // [B, H, T, hs]
	heads, weights, dropped := ScaledDotProduct(queries, keys, values).
		Causal(true).DropoutMask(mask).DoneWithDropped() // [B, H, T, hs]
	return m.linear(scope, "out_proj", MergeHeads(heads)), weights, dropped // [B, T, d_out]
}

// Forward runs the module on x `[B, T, d_in]` as one compiled graph, drawing the dropout mask
// from the generator in training mode, and returns `[B, T, d_out]`; it panics with the error
// Call returns.
func (m *GroupedQueryAttention) Forward(x *tensors.Tensor) *tensors.Tensor {
	return mustCall(m.Call(x))
}

// Call is Forward returning bad input (rank, d_in, more tokens than context_length) as an error.
func (m *GroupedQueryAttention) Call(x *tensors.Tensor) (*tensors.Tensor, error) {
	return m.call(0, func(d [][]int) { checkTokens("GroupedQueryAttention.Call", d[0], m.dIn, m.contextLength, 3) }, x)
}
