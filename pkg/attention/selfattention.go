package attention

import (
	"fmt"

	"github.com/attnbook/attnbook/pkg/torchrand"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// SelfAttentionV1 is seed 001's SelfAttention_v1: trainable query, key and value matrices
// drawn with torch.rand, `[d_in, d_out]` each, applied as x @ W; no mask, no dropout.
//
// After torchrand.New(123), NewSelfAttentionV1(g, 3, 2) on seed 001's six inputs prints
// 0.2996 0.8053 / 0.3061 0.8210 / … (cell 19). Parameters: "W_query", "W_key", "W_value".
type SelfAttentionV1 struct {
	Module
	dIn, dOut int
}

// NewSelfAttentionV1 draws W_query, W_key and W_value (torch.rand(d_in, d_out), in this order)
// from g, as SelfAttention_v1(d_in, d_out) does after the same seed.
func NewSelfAttentionV1(g *torchrand.Generator, dIn, dOut int) *SelfAttentionV1 {
	checkPositive("NewSelfAttentionV1", []string{"dIn", "dOut"}, dIn, dOut)
	m := &SelfAttentionV1{Module: newModule("SelfAttentionV1", g, 0), dIn: dIn, dOut: dOut}
	for _, k := range []string{"W_query", "W_key", "W_value"} {
		m.addParam(k, g.Rand(dIn, dOut))
	}
	m.build = func(scope *model.Scope, in []*Node, _ int) (out, w, d *Node) {
		out, w = m.ApplyWithWeights(scope, in[0])
		return out, w, w
	}
	return m
}

// Apply builds the forward pass on x `[T, d_in]` (or a batch `[B, T, d_in]`) into x's graph and
// returns the context vectors `[T, d_out]`. Variables are read under scope (nil: the root
// scope of the module's own store; see [Module.Store]), created there from the module's values
// if missing.
func (m *SelfAttentionV1) Apply(scope *model.Scope, x *Node) *Node {
	out, _ := m.ApplyWithWeights(scope, x)
	return out
}

// ApplyWithWeights is Apply that also returns the attention weights `[T, T]`.
func (m *SelfAttentionV1) ApplyWithWeights(scope *model.Scope, x *Node) (output, weights *Node) {
	checkRank("SelfAttentionV1.Apply", "x", x, 2, 3)
	checkTokens("SelfAttentionV1.Apply", x.Shape().Dimensions, m.dIn, 0, 2, 3)
	g := x.Graph()
	keys := matmul(x, m.param(scope, g, "W_key"))      // [T, d_out]
	queries := matmul(x, m.param(scope, g, "W_query")) // [T, d_out]
	values := matmul(x, m.param(scope, g, "W_value"))  // [T, d_out]
	weights = StableSoftmax(ScaleScores(Scores(queries, keys), m.dOut))
	return ContextVectors(weights, values), weights // [T, d_out]
}

// Forward runs the module on x `[T, d_in]` as one compiled graph and returns `[T, d_out]`;
// it panics with the error Call returns.
func (m *SelfAttentionV1) Forward(x *tensors.Tensor) *tensors.Tensor { return mustCall(m.Call(x)) }

// Call is Forward returning bad input (wrong rank, a d_in that is not the module's) as an error.
func (m *SelfAttentionV1) Call(x *tensors.Tensor) (*tensors.Tensor, error) {
	return m.call(0, func(d [][]int) { checkTokens("SelfAttentionV1.Call", d[0], m.dIn, 0, 2, 3) }, x)
}

// SelfAttentionV2 is seed 001's SelfAttention_v2: the query, key and value projections are
// nn.Linear(d_in, d_out, bias=qkv_bias) layers (weights `[d_out, d_in]`, Kaiming-uniform init);
// no mask, no dropout.
//
// After torchrand.New(789), NewSelfAttentionV2(g, 3, 2, false) on seed 001's inputs prints
// -0.0739 0.0713 / … (cell 21). Parameters: "W_query.weight", ("W_query.bias"), "W_key.weight",
// …, in this order.
type SelfAttentionV2 struct {
	Module
	dIn, dOut int
}

// NewSelfAttentionV2 draws the W_query, W_key and W_value Linear layers (each weight then its
// bias) from g, as SelfAttention_v2(d_in, d_out, qkv_bias) does after the same seed.
func NewSelfAttentionV2(g *torchrand.Generator, dIn, dOut int, qkvBias bool) *SelfAttentionV2 {
	checkPositive("NewSelfAttentionV2", []string{"dIn", "dOut"}, dIn, dOut)
	m := &SelfAttentionV2{Module: newModule("SelfAttentionV2", g, 0), dIn: dIn, dOut: dOut}
	for _, k := range []string{"W_query", "W_key", "W_value"} {
		m.addLinear(k, dIn, dOut, qkvBias)
	}
	m.build = func(scope *model.Scope, in []*Node, _ int) (out, w, d *Node) {
		out, w = m.ApplyWithWeights(scope, in[0])
		return out, w, w
	}
	return m
}

// Apply builds the forward pass on x `[T, d_in]` (or a batch `[B, T, d_in]`) into x's graph and
// returns `[T, d_out]`; variables as in [SelfAttentionV1.Apply].
func (m *SelfAttentionV2) Apply(scope *model.Scope, x *Node) *Node {
	out, _ := m.ApplyWithWeights(scope, x)
	return out
}

// ApplyWithWeights is Apply that also returns the attention weights `[T, T]` (seed 001,
// cell 22: 0.1921 0.1646 …).
func (m *SelfAttentionV2) ApplyWithWeights(scope *model.Scope, x *Node) (output, weights *Node) {
	checkRank("SelfAttentionV2.Apply", "x", x, 2, 3)
	checkTokens("SelfAttentionV2.Apply", x.Shape().Dimensions, m.dIn, 0, 2, 3)
	keys := m.linear(scope, "W_key", x)      // [T, d_out]
	queries := m.linear(scope, "W_query", x) // [T, d_out]
	values := m.linear(scope, "W_value", x)  // [T, d_out]
	weights = StableSoftmax(ScaleScores(Scores(queries, keys), m.dOut))
	return ContextVectors(weights, values), weights // [T, d_out]
}

// Forward runs the module on x `[T, d_in]` as one compiled graph and returns `[T, d_out]`;
// it panics with the error Call returns.
func (m *SelfAttentionV2) Forward(x *tensors.Tensor) *tensors.Tensor { return mustCall(m.Call(x)) }

// Call is Forward returning bad input as an error.
func (m *SelfAttentionV2) Call(x *tensors.Tensor) (*tensors.Tensor, error) {
	return m.call(0, func(d [][]int) { checkTokens("SelfAttentionV2.Call", d[0], m.dIn, 0, 2, 3) }, x)
}

// addLinear draws nn.Linear(in, out, bias) from the module's generator and registers
// prefix.weight `[out, in]` and prefix.bias `[out]`.
func (m *Module) addLinear(prefix string, in, out int, bias bool) {
	w, b := m.gen.Linear(in, out, bias)
	m.addParam(prefix+".weight", w)
	if bias {
		m.addParam(prefix+".bias", b)
	}
}

// linear applies the module's Linear layer prefix to x: `[..., in]` → `[..., out]`.
func (m *Module) linear(scope *model.Scope, prefix string, x *Node) *Node {
	g := x.Graph()
	return Linear(x, m.param(scope, g, prefix+".weight"), m.optParam(scope, g, prefix+".bias"))
}

// matmul is x @ w for w `[in, out]` (nn.Parameter layout): `[..., in]` → `[..., out]`.
func matmul(x, w *Node) *Node {
	return product(x, x.Rank()-1, nil, w, 0, nil) // [..., out]
}

// checkTokens panics unless dims has one of the given ranks, its last axis is dIn, and, when
// contextLength > 0, its token axis (second to last) is between 1 and contextLength.
func checkTokens(fn string, dims []int, dIn, contextLength int, ranks ...int) {
	okRank := false
	for _, r := range ranks {
		okRank = okRank || len(dims) == r
	}
	want := fmt.Sprint(ranks[0])
	if len(ranks) > 1 {
		want = fmt.Sprint(ranks)
	}
	if !okRank {
		argPanic(fn, "x", "dims %v: rank must be %s, got %d", dims, want, len(dims))
	}
	if dims[len(dims)-1] != dIn {
		argPanic(fn, "x", "dims %v: last axis (d_in) is %d, the module was built for d_in=%d", dims, dims[len(dims)-1], dIn)
	}
	for i, d := range dims {
		if d <= 0 {
			argPanic(fn, "x", "dims %v: axis %d must be > 0", dims, i)
		}
	}
	if t := dims[len(dims)-2]; contextLength > 0 && t > contextLength {
		argPanic(fn, "x", "dims %v: %d tokens exceed context_length=%d", dims, t, contextLength)
	}
}
