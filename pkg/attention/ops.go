package attention

import (
	"math"
	"slices"

	"github.com/attnbook/attnbook/pkg/backend"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
)

// This file holds the pure graph functions: no weights, *Node in, *Node out, in the order the
// seed documents teach them.

// DotScores is the attention score of one query against every input: the dot products
// x_i · query, for each row x_i of inputs (seed 001, cell 2: attn_scores_2 = 0.9544 1.4950 …).
//
// query is `[d]` and inputs `[T, d]`; the result is `[T]`.
func DotScores(query, inputs *Node) *Node {
	const fn = "DotScores"
	checkRank(fn, "query", query, 1)
	checkRank(fn, "inputs", inputs, 2)
	checkFloat(fn, "query", query)
	if inputs.DType() != query.DType() || inputs.Shape().Dim(1) != query.Shape().Dim(0) {
		argPanic(fn, "inputs", "shape %s does not match query shape %s: want `[T, %d]`",
			inputs.Shape(), query.Shape(), query.Shape().Dim(0))
	}
	return product(inputs, 1, nil, query, 0, nil) // [T]
}

// Scores are the dot-product attention scores of all query–key pairs, queries @ keys.T
// (seed 001, cells 6–7: inputs @ inputs.T; cell 16: queries @ keys.T), without any scaling.
//
// queries is `[..., Tq, d]` and keys `[..., Tk, d]` with the same leading (batch, head) axes;
// the result is `[..., Tq, Tk]`: row i holds query i's score against every key. Keys are
// contracted on their last axis directly, so no transposed copy of keys is made.
func Scores(queries, keys *Node) *Node {
	const fn = "Scores"
	checkFloat(fn, "queries", queries)
	checkFloat(fn, "keys", keys)
	if queries.Rank() < 2 || keys.Rank() != queries.Rank() {
		argPanic(fn, "keys", "shape %s does not match queries shape %s: want equal ranks >= 2, `[..., Tk, d]` and `[..., Tq, d]`",
			keys.Shape(), queries.Shape())
	}
	r := queries.Rank()
	qd, kd := queries.Shape().Dimensions, keys.Shape().Dimensions
	if queries.DType() != keys.DType() || !dimsEqual(qd[:r-2], kd[:r-2]) || qd[r-1] != kd[r-1] {
		argPanic(fn, "keys", "shape %s does not match queries shape %s: want the same leading axes and the same last axis (d)",
			keys.Shape(), queries.Shape())
	}
	batch := axesUpTo(r - 2)
	return product(queries, r-1, batch, keys, r-1, batch) // [..., Tq, Tk]
}

// NaiveNormalize divides scores by their sum over the last axis, x / x.sum(): the first
// normalization seed 001 tries (cell 3: 0.1455 0.2278 …). It is no softmax: negative scores
// give negative "weights", and a zero sum gives Inf or NaN.
//
// It is also the row renormalization of a masked weight matrix (seed 001, cell 42:
// masked_simple / row_sums). scores is `[..., T]`; the result has the same shape.
func NaiveNormalize(scores *Node) *Node {
	checkFloat("NaiveNormalize", "scores", scores)
	if scores.Rank() < 1 {
		argPanic("NaiveNormalize", "scores", "shape %s: rank must be >= 1", scores.Shape())
	}
	return Div(scores, ReduceAndKeep(scores, ReduceSum, -1)) // [..., T]
}

// NaiveSoftmax is exp(x) / sum(exp(x)) over the last axis, the softmax_naive of seed 001
// (cell 4: 0.1385 0.2379 …).
//
// It overflows: in float32, exp(x) is +Inf for every x > 88.72 (exp(89) = +Inf), so any score of
// 89 or more makes its row NaN (Inf/Inf) and every other entry 0, where [StableSoftmax] is fine.
// Large scores are common — seed 000's unscaled scores reach 178. scores is `[..., T]`; the
// result has the same shape.
func NaiveSoftmax(scores *Node) *Node {
	checkFloat("NaiveSoftmax", "scores", scores)
	if scores.Rank() < 1 {
		argPanic("NaiveSoftmax", "scores", "shape %s: rank must be >= 1", scores.Shape())
	}
	e := backend.Exp(scores)
	return Div(e, ReduceAndKeep(e, ReduceSum, -1)) // [..., T]
}

// exactSoftmaxMaxElems bounds the scores that StableSoftmax computes step by step, in PyTorch's
// order (see StableSoftmax).
const exactSoftmaxMaxElems = 1 << 14

// StableSoftmax is torch.softmax(scores, dim=-1): exp(x - max(x)) normalized over the last
// axis. Subtracting the row maximum changes nothing mathematically and keeps every exp in
// [0, 1], so no score overflows; -Inf scores (masked positions) get weight 0, and a row that
// is all -Inf gets NaN, as in PyTorch. Like PyTorch's CPU kernel it multiplies by the
// reciprocal of the sum.
//
// Scores of more than 2^14 elements (exactSoftmaxMaxElems: the GPT's and the benchmark's sizes;
// the seeds print softmaxes of at most a few hundred) go to the same computation as one fused
// op where the backend has one: the pure-Go backend then makes one pass per row, with a
// polynomial exp (relative error below 1e-7), instead of six passes over the whole tensor, each
// on one core. Its gradient, y ⊙ (v − Σ v ⊙ y), is computed from that output (see fusedSoftmax).
//
// scores is `[..., T]`; the result has the same shape and each row sums to 1.
func StableSoftmax(scores *Node) *Node {
	checkFloat("StableSoftmax", "scores", scores)
	if scores.Rank() < 1 {
		argPanic("StableSoftmax", "scores", "shape %s: rank must be >= 1", scores.Shape())
	}
	if scores.Shape().Size() > exactSoftmaxMaxElems {
		return fusedSoftmax(scores)
	}
	rowMax := StopGradient(ReduceAndKeep(scores, ReduceMax, -1)) // [..., 1]
	e := backend.Exp(Sub(scores, rowMax))                        // [..., T]
	inv := Reciprocal(ReduceAndKeep(e, ReduceSum, -1))           // [..., 1]
	return Mul(e, inv)                                           // [..., T]
}

// ContextVectors are the attention-weighted sums of the values, weights @ values (seed 001,
// cell 5: context_vec_2 = 0.4419 0.6515 0.5683; cell 10: all context vectors).
//
// Either weights is `[Tk]` and values `[Tk, dv]` (one query), giving `[dv]`; or weights is
// `[..., Tq, Tk]` and values `[..., Tk, dv]` with the same leading axes, giving `[..., Tq, dv]`.
func ContextVectors(weights, values *Node) *Node {
	const fn = "ContextVectors"
	checkFloat(fn, "weights", weights)
	checkFloat(fn, "values", values)
	wd, vd := weights.Shape().Dimensions, values.Shape().Dimensions
	if weights.Rank() == 1 {
		if values.Rank() != 2 || vd[0] != wd[0] || values.DType() != weights.DType() {
			argPanic(fn, "values", "shape %s does not match weights shape %s: want `[%d, dv]`",
				values.Shape(), weights.Shape(), wd[0])
		}
		return product(weights, 0, nil, values, 0, nil) // [dv]
	}
	r := weights.Rank()
	if values.Rank() != r || !dimsEqual(wd[:r-2], vd[:r-2]) || wd[r-1] != vd[r-2] || values.DType() != weights.DType() {
		argPanic(fn, "values", "shape %s does not match weights shape %s: want the same leading axes and `[..., Tk=%d, dv]`",
			values.Shape(), weights.Shape(), wd[r-1])
	}
	batch := axesUpTo(r - 2)
	return product(weights, r-1, batch, values, r-2, batch) // [..., Tq, dv]
}

// ScaleScores divides scores by sqrt(dk), the scaling of scaled dot-product attention
// (Vaswani et al. 2017, eq. 1): without it the dot products of dk-wide vectors grow like
// sqrt(dk) and push the softmax into saturation (seed 001, cell 17). As in PyTorch's
// attn_scores / d_k**0.5 it is a float division by float32(sqrt(dk)), not a multiplication by
// its inverse, so the last bit matches.
//
// scores is any float shape, typically `[..., Tq, Tk]`; dk is the key width (head size).
func ScaleScores(scores *Node, dk int) *Node {
	checkFloat("ScaleScores", "scores", scores)
	if dk <= 0 {
		argPanic("ScaleScores", "dk", "must be > 0, got %d", dk)
	}
	return Div(scores, Scalar(scores.Graph(), scores.DType(), math.Sqrt(float64(dk))))
}

// CausalMask is torch.tril(torch.ones(Tq, Tk)).bool(): a `[Tq, Tk]` boolean matrix, true where
// query i may attend to key j (j <= i), false for future keys.
func CausalMask(g *Graph, tq, tk int) *Node {
	if tq <= 0 || tk <= 0 {
		argPanic("CausalMask", "tq, tk", "must be > 0, got %d, %d", tq, tk)
	}
	s := shapes.Make(dtypes.Int32, tq, tk)
	return LessOrEqual(Iota(g, s, 1), Iota(g, s, 0)) // [Tq, Tk]
}

// FutureMask is torch.triu(torch.ones(Tq, Tk), diagonal=1).bool(), the mask buffer of the
// seeds' CausalAttention and MultiHeadAttention: a `[Tq, Tk]` boolean matrix, true where key j
// lies in query i's future (j > i) and must be hidden. It is the negation of [CausalMask].
func FutureMask(g *Graph, tq, tk int) *Node {
	if tq <= 0 || tk <= 0 {
		argPanic("FutureMask", "tq, tk", "must be > 0, got %d, %d", tq, tk)
	}
	s := shapes.Make(dtypes.Int32, tq, tk)
	return GreaterThan(Iota(g, s, 1), Iota(g, s, 0)) // [Tq, Tk]
}

// CausalRenormalize is the first way to hide future tokens (seed 001, cells 24–42): multiply
// the softmax weights by the lower-triangular ones (zeroing j > i), then divide each row by its
// new sum. The result equals the softmax of -Inf-masked scores ([CausalMaskFill]), because
// softmax's normalization cancels out — but it computes exps that are thrown away.
//
// weights is `[..., Tq, Tk]`; the result has the same shape.
func CausalRenormalize(weights *Node) *Node {
	checkFloat("CausalRenormalize", "weights", weights)
	if weights.Rank() < 2 {
		argPanic("CausalRenormalize", "weights", "shape %s: rank must be >= 2", weights.Shape())
	}
	tq, tk := weights.Shape().Dim(-2), weights.Shape().Dim(-1)
	ones := ConvertDType(CausalMask(weights.Graph(), tq, tk), weights.DType()) // [Tq, Tk]
	ones = ExpandLeftToRank(ones, weights.Rank())                              // [1, ..., Tq, Tk]
	return NaiveNormalize(Mul(weights, ones))                                  // [..., Tq, Tk]
}

// MaskFill is scores.masked_fill(mask, value): scores where mask is false, value where it is
// true. mask is boolean with the shape of the last axes of scores (`[Tq, Tk]` for `[B, H, Tq,
// Tk]` scores, say): it is repeated over the leading axes, as PyTorch broadcasts it, but its
// axes must match exactly — no size-1 stretching.
func MaskFill(scores, mask *Node, value float64) *Node {
	const fn = "MaskFill"
	checkFloat(fn, "scores", scores)
	if mask == nil || mask.DType() != dtypes.Bool {
		argPanic(fn, "mask", "must be a boolean tensor, got %v", shapeOf(mask))
	}
	sd, md := scores.Shape().Dimensions, mask.Shape().Dimensions
	if mask.Rank() > scores.Rank() || !dimsEqual(md, sd[len(sd)-len(md):]) {
		argPanic(fn, "mask", "shape %s does not match the last axes of scores shape %s", mask.Shape(), scores.Shape())
	}
	if mask.Rank() < scores.Rank() {
		mask = BroadcastToDims(ExpandLeftToRank(mask, len(sd)), sd...) // [..., Tq, Tk]
	}
	return Where(mask, Scalar(scores.Graph(), scores.DType(), value), scores)
}

// CausalMaskFill is the second (and usual) way to hide future tokens: scores.masked_fill(
// triu(ones, diagonal=1).bool(), -inf) before the softmax (seed 001, cell 48; seed 000, cell 15:
// -318.2692 -inf -inf …). Softmax turns the -Inf entries into exact zeros.
//
// scores is `[..., Tq, Tk]`; the result has the same shape. For Tq != Tk (cross attention) the
// mask is triu(ones(Tq, Tk), diagonal=1), as seed 002 builds it.
func CausalMaskFill(scores *Node) *Node {
	checkFloat("CausalMaskFill", "scores", scores)
	if scores.Rank() < 2 {
		argPanic("CausalMaskFill", "scores", "shape %s: rank must be >= 2", scores.Shape())
	}
	return MaskFill(scores, FutureMask(scores.Graph(), scores.Shape().Dim(-2), scores.Shape().Dim(-1)), math.Inf(-1))
}

// KeyMaskFill hides padding: it sets scores to -Inf wherever the key is not a real token.
//
// scores is `[B, ..., Tq, Tk]` and keyMask a boolean `[B, Tk]`, true for real tokens and false
// for padding; the result has scores' shape. A query whose keys are all padding gets a row of
// NaN after the softmax, as in PyTorch.
func KeyMaskFill(scores, keyMask *Node) *Node {
	const fn = "KeyMaskFill"
	checkFloat(fn, "scores", scores)
	if scores.Rank() < 3 {
		argPanic(fn, "scores", "shape %s: rank must be >= 3, `[B, ..., Tq, Tk]`", scores.Shape())
	}
	if keyMask == nil || keyMask.DType() != dtypes.Bool || keyMask.Rank() != 2 {
		argPanic(fn, "keyMask", "must be a boolean `[B, Tk]` tensor, got %v", shapeOf(keyMask))
	}
	sd := scores.Shape().Dimensions
	if keyMask.Shape().Dim(0) != sd[0] || keyMask.Shape().Dim(1) != sd[len(sd)-1] {
		argPanic(fn, "keyMask", "shape %s does not match scores shape %s: want `[%d, %d]`",
			keyMask.Shape(), scores.Shape(), sd[0], sd[len(sd)-1])
	}
	hide := LogicalNot(keyMask)                              // [B, Tk]
	hide = InsertAxes(hide, xsRepeat(1, scores.Rank()-2)...) // [B, 1, ..., 1, Tk]
	hide = BroadcastToDims(hide, sd...)                      // [B, ..., Tq, Tk]
	return Where(hide, Scalar(scores.Graph(), scores.DType(), math.Inf(-1)), scores)
}

// Dropout is the graph side of training-mode nn.Dropout(p): x * mask, where mask holds 0 for
// dropped entries and 1/(1-p) for kept ones (inverted dropout: the kept values are scaled up so
// the expected sum is unchanged). The mask comes from outside — from
// torchrand.Generator.DropoutMask for PyTorch's exact numbers. Apply it only in training; in
// evaluation dropout is the identity. In PyTorch the mask covers the whole tensor, including
// the zeros of masked positions, so it has x's full shape.
//
// x and mask have the same shape (no broadcasting); the result too.
func Dropout(x, mask *Node) *Node {
	checkFloat("Dropout", "x", x)
	if mask == nil || mask.DType() != x.DType() || !mask.Shape().Equal(x.Shape()) {
		argPanic("Dropout", "mask", "shape %v does not match x shape %s: want the same shape and dtype", shapeOf(mask), x.Shape())
	}
	return Mul(x, mask)
}

// SplitHeads splits the last axis into numHeads heads and moves the head axis before the
// tokens, as PyTorch's x.view(b, t, h, hs).transpose(1, 2): `[B, T, D]` → `[B, H, T, hs]`
// with hs = D / H. Head h gets columns h·hs … (h+1)·hs-1 of every token.
func SplitHeads(x *Node, numHeads int) *Node {
	checkSplit("SplitHeads", x, numHeads)
	b, t, d := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	x = Reshape(x, b, t, numHeads, d/numHeads) // [B, T, H, hs]
	return Transpose(x, 1, 2)                  // [B, H, T, hs]
}

// MergeHeads undoes SplitHeads, as PyTorch's x.transpose(1, 2).contiguous().view(b, t, h·hs):
// `[B, H, T, hs]` → `[B, T, H·hs]`, the heads' outputs side by side for every token.
func MergeHeads(x *Node) *Node {
	checkRank("MergeHeads", "x", x, 4)
	b, h, t, hs := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2), x.Shape().Dim(3)
	x = Transpose(x, 1, 2)        // [B, T, H, hs]
	return Reshape(x, b, t, h*hs) // [B, T, H·hs]
}

// SplitHeadsNoTranspose is seed 002's q.reshape(batch, no_head, seq_len, head_dim), kept to
// show why it is wrong: it has the right shape `[B, H, T, hs]` but reads the row-major buffer of
// `[B, T, D]` in order, so "head 0, token 1" is really the second half of token 0's features,
// and each "head" mixes pieces of different tokens. Use [SplitHeads].
func SplitHeadsNoTranspose(x *Node, numHeads int) *Node {
	checkSplit("SplitHeadsNoTranspose", x, numHeads)
	b, t, d := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	return Reshape(x, b, numHeads, t, d/numHeads) // [B, H, T, hs], tokens and heads mixed up
}

// Linear is PyTorch's nn.Linear applied to x: x @ weight.T + bias, with the weight in
// PyTorch's layout `[out, in]` (the layout of state_dict "….weight").
//
// x is `[..., in]`, weight `[out, in]`, bias `[out]` or nil; the result is `[..., out]`. The
// weight is contracted on its second axis directly: no transposed copy is made.
func Linear(x, weight, bias *Node) *Node {
	const fn = "Linear"
	checkFloat(fn, "x", x)
	checkRank(fn, "weight", weight, 2)
	if x.Rank() < 1 || weight.Shape().Dim(1) != x.Shape().Dim(-1) || weight.DType() != x.DType() {
		argPanic(fn, "x", "shape %s does not match weight shape %s: want `[..., %d]`",
			x.Shape(), weight.Shape(), weight.Shape().Dim(1))
	}
	y := linearProduct(x, weight) // [..., out]
	if bias == nil {
		return y
	}
	if bias.Rank() != 1 || bias.Shape().Dim(0) != weight.Shape().Dim(0) || bias.DType() != x.DType() {
		argPanic(fn, "bias", "shape %s does not match weight shape %s: want `[%d]`",
			bias.Shape(), weight.Shape(), weight.Shape().Dim(0))
	}
	return Add(y, ExpandLeftToRank(bias, y.Rank())) // [..., out]
}

// checkSplit validates the `[B, T, D]` input of the head splitters.
func checkSplit(fn string, x *Node, numHeads int) {
	checkRank(fn, "x", x, 3)
	if numHeads <= 0 {
		argPanic(fn, "numHeads", "must be > 0, got %d", numHeads)
	}
	if d := x.Shape().Dim(2); d%numHeads != 0 {
		argPanic(fn, "x", "shape %s: last axis (%d) is not divisible by numHeads (%d)", x.Shape(), d, numHeads)
	}
}

// axesUpTo returns the axes 0, 1, …, n-1 (nil for n <= 0).
func axesUpTo(n int) []int {
	if n <= 0 {
		return nil
	}
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// xsRepeat returns n copies of v.
func xsRepeat(v, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// shapeOf describes a possibly nil node for error messages.
func shapeOf(x *Node) any {
	if x == nil {
		return "nil"
	}
	return x.Shape()
}

// linearProduct is x `[..., in]` times weight `[out, in]` contracted on in: `[..., out]`.
//
// The leading axes are seen as one `[N, in]` matrix, the same numbers in the same order. It is for
// the backward pass: the weight's gradient contracts dy `[..., out]` with x over every leading
// axis, and the pure-Go backend first transposes both to put the contracted axes last. From
// `[B, T, C]` that is the permutation (2, 0, 1), which it moves element by element on one core
// (a third of nanoGPT's training step); from `[B·T, C]` it is a 2-D transpose, which it does in
// tiles on every core. On a 2-core AMD EPYC Zen 4 the chapter's multi-head forward+backward at
// 8×1024×768×12 took 1980 ms against 2516 without it (docs/benchmarks.md).
func linearProduct(x, weight *Node) *Node {
	if x.Rank() <= 2 {
		return product(x, x.Rank()-1, nil, weight, 1, nil)
	}
	dims := x.Shape().Dimensions
	in := dims[len(dims)-1]
	rows := x.Shape().Size() / in
	y := product(Reshape(x, rows, in), 1, nil, weight, 1, nil) // [N, out]
	return Reshape(y, append(slices.Clone(dims[:len(dims)-1]), weight.Shape().Dim(0))...)
}
