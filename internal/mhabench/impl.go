package mhabench

import (
	"fmt"
	"math"

	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// Size is one workload: Batch sequences of Tokens tokens, model width Dim (d_in = d_out), Heads
// heads of Dim/Heads each.
type Size struct {
	Batch  int `json:"batch"`
	Tokens int `json:"tokens"`
	Dim    int `json:"dim"`
	Heads  int `json:"heads"`
}

// Full is the bonus material's size: GPT-2 small's attention on 8 sequences of 1024 tokens.
var Full = Size{Batch: 8, Tokens: 1024, Dim: 768, Heads: 12}

// Quick is the size of `bench --quick` and of the Go benchmarks: seconds, not minutes.
var Quick = Size{Batch: 2, Tokens: 128, Dim: 256, Heads: 4}

// HeadDim is Dim/Heads, the width hd of one head.
func (s Size) HeadDim() int { return s.Dim / s.Heads }

// String is "b=8 T=1024 d=768 h=12".
func (s Size) String() string {
	return fmt.Sprintf("b=%d T=%d d=%d h=%d", s.Batch, s.Tokens, s.Dim, s.Heads)
}

// Check returns an error unless every field is positive and Heads divides Dim.
func (s Size) Check() error {
	if s.Batch <= 0 || s.Tokens <= 0 || s.Dim <= 0 || s.Heads <= 0 {
		return fmt.Errorf("size %s: every dimension must be positive", s)
	}
	if s.Dim%s.Heads != 0 {
		return fmt.Errorf("size %s: d=%d is not divisible by h=%d", s, s.Dim, s.Heads)
	}
	return nil
}

// FLOPs is the number of floating-point operations of one forward pass, counting a
// multiply-add as 2 and only the matrix products: 4 projections of 2·B·T·d² and the scores and
// context products of 2·B·T²·d each (the full T×T, as all but the fast formulation compute).
func (s Size) FLOPs() float64 {
	b, t, d := float64(s.Batch), float64(s.Tokens), float64(s.Dim)
	return 4*2*b*t*d*d + 2*2*b*t*t*d
}

// Weights are the parameters of the chapter's MultiHeadAttention(d, d, T, 0.0, h), in PyTorch's
// layout: every formulation loads them, rearranged into its own layout, so that all compute the
// same function.
type Weights struct {
	Query, Key, Value *tensors.Tensor // W_query.weight etc.: `[d, d]`, nn.Linear's `[out, in]`, no bias
	Out               *tensors.Tensor // out_proj.weight `[d, d]`
	OutBias           *tensors.Tensor // out_proj.bias `[d]`
}

// NewInputs draws the input and the weights as this PyTorch code does, bit for bit:
//
//	torch.manual_seed(seed)
//	x = torch.randn(b, T, d)
//	mha = MultiHeadAttention(d, d, T, 0.0, h)  # W_query, W_key, W_value, out_proj
func NewInputs(seed int64, s Size) (x *tensors.Tensor, w Weights) {
	g := torchrand.New(seed)
	x = g.Randn(s.Batch, s.Tokens, s.Dim)
	w.Query, _ = g.Linear(s.Dim, s.Dim, false)
	w.Key, _ = g.Linear(s.Dim, s.Dim, false)
	w.Value, _ = g.Linear(s.Dim, s.Dim, false)
	w.Out, w.OutBias = g.Linear(s.Dim, s.Dim, true)
	return x, w
}

// Impl is one formulation: how it lays out the weights, and the graph that uses them.
type Impl struct {
	Name  string // short name used in tables, files and flags: "chapter"
	Title string // one line for people
	// Load creates the variables Build reads, under ctx's scope, from the chapter's weights.
	Load func(scope *model.Scope, w Weights, s Size)
	// Build is the forward pass on x `[B, T, d]`, reading its variables from ctx; `[B, T, d]`.
	Build func(scope *model.Scope, x *Node, heads int) *Node
}

// Impls are the formulations, slowest-to-write first. Every one computes the same function of
// the same weights: TestImplsAgree and the bench check it before timing anything.
func Impls() []Impl {
	return []Impl{
		{"wrapper", "MultiHeadAttentionWrapper: H CausalAttention heads + concat + out_proj", loadWrapper, buildWrapper},
		{"chapter", "vectorized MultiHeadAttention: W_query/W_key/W_value, view+transpose", loadChapter, buildChapter},
		{"combined_qkv", "one [3d, d] QKV projection, then view+permute+split", loadCombinedQKV, buildCombinedQKV},
		{"einsum", "graph.Einsum for projections, scores, context and out_proj", loadEinsum, buildEinsum},
		{"gomlx_layers", "GoMLX layers.MultiHeadAttention(...).UseCausalMask() (W_query·√hd)", loadLayers, buildLayers},
		{"fast", "scale folded into W_query, head-major QKV, causal query blocks", loadFast, buildFast},
	}
}

// ImplByName returns the formulation called name, or false.
func ImplByName(name string) (Impl, bool) {
	for _, im := range Impls() {
		if im.Name == name {
			return im, true
		}
	}
	return Impl{}, false
}

// --- building blocks ---------------------------------------------------------------------------

// Linear is nn.Linear without bias, x @ wᵀ: x `[..., in]`, w `[out, in]` (PyTorch's layout);
// `[..., out]`. Contracting w on its last axis needs no transposed copy of w.
func Linear(x, w *Node) *Node {
	return DotGeneral(x, []int{x.Rank() - 1}, nil, w, []int{1}, nil) // [..., out]
}

// AddBias adds b `[out]` to every row of y `[..., out]`.
func AddBias(y, b *Node) *Node {
	return Add(y, ExpandLeftToRank(b, y.Rank())) // [..., out]
}

// FutureMask is the chapter's mask buffer made boolean, torch.triu(ones(T, T), 1).bool():
// `[T, T]`, true where key j lies in query i's future (j > i).
func FutureMask(g *Graph, t int) *Node {
	s := shapes.Make(dtypes.Int32, t, t)
	return GreaterThan(Iota(g, s, 1), Iota(g, s, 0)) // [T, T]
}

// MaskedFill is scores.masked_fill(mask, value) for scores `[..., Tq, Tk]` and mask `[Tq, Tk]`
// (repeated over the leading axes, as PyTorch broadcasts it).
func MaskedFill(scores, mask *Node, value float64) *Node {
	mask = BroadcastToDims(ExpandLeftToRank(mask, scores.Rank()), scores.Shape().Dimensions...) // [..., Tq, Tk]
	return Where(mask, Scalar(scores.Graph(), scores.DType(), value), scores)                   // [..., Tq, Tk]
}

// CausalSoftmax is the chapter's two lines: masked_fill(mask, -inf), then
// softmax(scores / √hd, dim=-1). scores `[..., T, T]`; same shape.
func CausalSoftmax(scores *Node, headDim int) *Node {
	t := scores.Shape().Dim(-1)
	scores = MaskedFill(scores, FutureMask(scores.Graph(), t), math.Inf(-1)) // [..., T, T]
	scores = DivScalar(scores, math.Sqrt(float64(headDim)))                  // [..., T, T]
	return Softmax(scores, -1)                                               // [..., T, T]
}

// --- (1) wrapper -------------------------------------------------------------------------------

// CausalHead is one CausalAttention(d, hd) head of the wrapper, without dropout:
// softmax(mask(q·kᵀ)/√hd)·v. x `[B, T, d]`, wq/wk/wv `[hd, d]`; `[B, T, hd]`.
func CausalHead(x, wq, wk, wv *Node) *Node {
	q := Linear(x, wq)                                  // [B, T, hd]
	k := Linear(x, wk)                                  // [B, T, hd]
	v := Linear(x, wv)                                  // [B, T, hd]
	scores := MatMul(q, Transpose(k, 1, 2))             // [B, T, T]
	weights := CausalSoftmax(scores, wq.Shape().Dim(0)) // [B, T, T]
	return MatMul(weights, v)                           // [B, T, hd]
}

// Wrapper is the chapter's MultiHeadAttentionWrapper followed by an out_proj (as the bonus
// material's Ch03_MHA_Wrapper): one CausalHead per entry of wq, wk, wv (each `[hd, d]`), outputs
// concatenated on the last axis, then out_proj (wo `[d, d]`, bo `[d]`). x `[B, T, d]`; `[B, T, d]`.
func Wrapper(x *Node, wq, wk, wv []*Node, wo, bo *Node) *Node {
	heads := make([]*Node, len(wq))
	for h := range heads {
		heads[h] = CausalHead(x, wq[h], wk[h], wv[h]) // [B, T, hd]
	}
	cat := Concatenate(heads, -1)       // [B, T, H·hd]
	return AddBias(Linear(cat, wo), bo) // [B, T, d]
}

func loadWrapper(scope *model.Scope, w Weights, s Size) {
	hd := s.HeadDim()
	for h := range s.Heads {
		c := scope.In(fmt.Sprintf("head%d", h))
		c.VariableWithValue("W_query", rows(w.Query, h*hd, (h+1)*hd))
		c.VariableWithValue("W_key", rows(w.Key, h*hd, (h+1)*hd))
		c.VariableWithValue("W_value", rows(w.Value, h*hd, (h+1)*hd))
	}
	scope.VariableWithValue("out_proj.weight", w.Out)
	scope.VariableWithValue("out_proj.bias", w.OutBias)
}

func buildWrapper(scope *model.Scope, x *Node, heads int) *Node {
	wq, wk, wv := make([]*Node, heads), make([]*Node, heads), make([]*Node, heads)
	for h := range heads {
		c := scope.In(fmt.Sprintf("head%d", h))
		wq[h], wk[h], wv[h] = param(c, x, "W_query"), param(c, x, "W_key"), param(c, x, "W_value")
	}
	return Wrapper(x, wq, wk, wv, param(scope, x, "out_proj.weight"), param(scope, x, "out_proj.bias"))
}

// --- (2) chapter -------------------------------------------------------------------------------

// SplitHeads is view(b, T, h, hd).transpose(1, 2): `[B, T, d]` to `[B, H, T, hd]`.
func SplitHeads(x *Node, heads int) *Node {
	b, t, d := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2)
	x = Reshape(x, b, t, heads, d/heads) // [B, T, H, hd]
	return Transpose(x, 1, 2)            // [B, H, T, hd]
}

// MergeHeads is transpose(1, 2).contiguous().view(b, T, d): `[B, H, T, hd]` to `[B, T, d]`.
func MergeHeads(x *Node) *Node {
	b, h, t, hd := x.Shape().Dim(0), x.Shape().Dim(1), x.Shape().Dim(2), x.Shape().Dim(3)
	x = Transpose(x, 1, 2)        // [B, T, H, hd]
	return Reshape(x, b, t, h*hd) // [B, T, d]
}

// Chapter is the chapter's vectorized MultiHeadAttention forward, line by line: three
// projections (wq, wk, wv `[d, d]`), heads split by view + transpose, scores q·kᵀ, masked_fill
// -inf, softmax(scores/√hd), context, heads merged, out_proj (wo `[d, d]`, bo `[d]`).
// x `[B, T, d]`; `[B, T, d]`.
func Chapter(x, wq, wk, wv, wo, bo *Node, heads int) *Node {
	keys := SplitHeads(Linear(x, wk), heads)              // [B, H, T, hd]
	queries := SplitHeads(Linear(x, wq), heads)           // [B, H, T, hd]
	values := SplitHeads(Linear(x, wv), heads)            // [B, H, T, hd]
	scores := MatMul(queries, Transpose(keys, 2, 3))      // [B, H, T, T]
	weights := CausalSoftmax(scores, keys.Shape().Dim(3)) // [B, H, T, T]
	context := MergeHeads(MatMul(weights, values))        // [B, T, d]
	return AddBias(Linear(context, wo), bo)               // [B, T, d]
}

func loadChapter(scope *model.Scope, w Weights, _ Size) {
	scope.VariableWithValue("W_query", w.Query)
	scope.VariableWithValue("W_key", w.Key)
	scope.VariableWithValue("W_value", w.Value)
	scope.VariableWithValue("out_proj.weight", w.Out)
	scope.VariableWithValue("out_proj.bias", w.OutBias)
}

func buildChapter(scope *model.Scope, x *Node, heads int) *Node {
	return Chapter(x, param(scope, x, "W_query"), param(scope, x, "W_key"), param(scope, x, "W_value"),
		param(scope, x, "out_proj.weight"), param(scope, x, "out_proj.bias"), heads)
}

// --- (3) combined QKV --------------------------------------------------------------------------

// CombinedQKV is the chapter's MultiHeadAttention with one projection for queries, keys and
// values, as the bonus material's MultiHeadAttentionCombinedQKV: wqkv `[3d, d]` (W_query,
// W_key, W_value stacked), its output viewed as `[B, T, 3, H, hd]`, permuted to
// `[3, B, H, T, hd]` and split. x `[B, T, d]`; `[B, T, d]`.
func CombinedQKV(x, wqkv, wo, bo *Node, heads int) *Node {
	b, t, d := x.Shape().Dim(0), x.Shape().Dim(1), wo.Shape().Dim(0)
	hd := d / heads
	qkv := Linear(x, wqkv)                                       // [B, T, 3d]
	qkv = Reshape(qkv, b, t, 3, heads, hd)                       // [B, T, 3, H, hd]
	qkv = TransposeAllDims(qkv, 2, 0, 3, 1, 4)                   // [3, B, H, T, hd]
	queries := Reshape(Slice(qkv, AxisElem(0)), b, heads, t, hd) // [B, H, T, hd]
	keys := Reshape(Slice(qkv, AxisElem(1)), b, heads, t, hd)    // [B, H, T, hd]
	values := Reshape(Slice(qkv, AxisElem(2)), b, heads, t, hd)  // [B, H, T, hd]
	scores := MatMul(queries, Transpose(keys, 2, 3))             // [B, H, T, T]
	weights := CausalSoftmax(scores, hd)                         // [B, H, T, T]
	context := MergeHeads(MatMul(weights, values))               // [B, T, d]
	return AddBias(Linear(context, wo), bo)                      // [B, T, d]
}

func loadCombinedQKV(scope *model.Scope, w Weights, _ Size) {
	scope.VariableWithValue("qkv.weight", concatRows(w.Query, w.Key, w.Value))
	scope.VariableWithValue("out_proj.weight", w.Out)
	scope.VariableWithValue("out_proj.bias", w.OutBias)
}

func buildCombinedQKV(scope *model.Scope, x *Node, heads int) *Node {
	return CombinedQKV(x, param(scope, x, "qkv.weight"), param(scope, x, "out_proj.weight"), param(scope, x, "out_proj.bias"), heads)
}

// --- (4) einsum --------------------------------------------------------------------------------

// Einsums is the formulation in Einstein notation, every product one graph.Einsum: the
// weights are kept in nn.Linear's layout viewed per head, wq/wk/wv `[H, hd, d]` and wo
// `[d, H, hd]`, so heads are split and merged by the equations themselves, with no reshape of
// activations. x `[B, T, d]`; `[B, T, d]`.
func Einsums(x, wq, wk, wv, wo, bo *Node) *Node {
	hd := wq.Shape().Dim(1)
	queries := Einsum("btd,hkd->bhtk", x, wq)                // [B, H, T, hd]
	keys := Einsum("btd,hkd->bhtk", x, wk)                   // [B, H, T, hd]
	values := Einsum("btd,hkd->bhtk", x, wv)                 // [B, H, T, hd]
	scores := Einsum("bhqk,bhsk->bhqs", queries, keys)       // [B, H, T, T]
	weights := CausalSoftmax(scores, hd)                     // [B, H, T, T]
	context := Einsum("bhqs,bhsk->bqhk", weights, values)    // [B, T, H, hd]
	return AddBias(Einsum("bqhk,ohk->bqo", context, wo), bo) // [B, T, d]
}

func loadEinsum(scope *model.Scope, w Weights, s Size) {
	h, hd, d := s.Heads, s.HeadDim(), s.Dim
	scope.VariableWithValue("W_query", reshaped(w.Query, h, hd, d))
	scope.VariableWithValue("W_key", reshaped(w.Key, h, hd, d))
	scope.VariableWithValue("W_value", reshaped(w.Value, h, hd, d))
	scope.VariableWithValue("out_proj.weight", reshaped(w.Out, d, h, hd))
	scope.VariableWithValue("out_proj.bias", w.OutBias)
}

func buildEinsum(scope *model.Scope, x *Node, _ int) *Node {
	return Einsums(x, param(scope, x, "W_query"), param(scope, x, "W_key"), param(scope, x, "W_value"),
		param(scope, x, "out_proj.weight"), param(scope, x, "out_proj.bias"))
}

// --- (6) fast ----------------------------------------------------------------------------------

// FastBlocks is how many query blocks Fast cuts T into: blocks of at least 64 tokens, at most 8,
// and a divisor of T.
func FastBlocks(t int) int {
	n := max(1, min(8, t/64))
	for t%n != 0 {
		n--
	}
	return n
}

// Fast is the fastest formulation found here (see docs/benchmarks.md):
//   - 1/√hd is folded into the query weights, so the scores need no division;
//   - the weights are kept per head, wq/wk/wv `[H, hd, d]` and wo `[d, H, hd]`, and every product
//     contracts the axes where they lie: the only explicit transpose is the input's, once, to
//     put the tokens first so that blocks of them can be gathered;
//   - the causal structure is used: the T queries are cut into n blocks of c = T/n tokens, and
//     block i is multiplied only with key blocks 0..i, so about (n+1)/2n of the T×T scores are
//     computed instead of all; only its last key block is masked, by adding -inf.
//
// The blocks are picked with Gather (from `[n, c, B, H, hd]` layouts), not Slice, so that the
// gradient is a ScatterSum, which every GoMLX backend has (Slice's, Pad, is missing in simplego).
// x `[B, T, d]`; `[B, T, d]`.
func Fast(x, wq, wk, wv, wo, bo *Node, blocks int) *Node {
	g := x.Graph()
	b, t, hd := x.Shape().Dim(0), x.Shape().Dim(1), wq.Shape().Dim(1)
	h, c := wq.Shape().Dim(0), t/blocks
	xt := Transpose(x, 0, 1) // [T, B, d]
	blocked := func(w *Node) *Node {
		y := DotGeneral(xt, []int{2}, nil, w, []int{2}, nil) // [T, B, H, hd]
		return Reshape(y, blocks, c, b, h, hd)               // [n, c, B, H, hd]
	}
	queries, keys, values := blocked(wq), blocked(wk), blocked(wv) // queries already scaled
	parts := make([]*Node, blocks)
	for i := range blocks {
		q := Reshape(Gather(queries, Const(g, [][]int32{{int32(i)}})), c, b, h, hd)           // [c, B, H, hd]
		prefix := Const(g, blockIndices(i+1))                                                 // [i+1, 1]
		k := Gather(keys, prefix, true)                                                       // [i+1, c, B, H, hd]
		v := Gather(values, prefix, true)                                                     // [i+1, c, B, H, hd]
		scores := DotGeneral(q, []int{3}, []int{1, 2}, k, []int{4}, []int{2, 3})              // [B, H, c, i+1, c]
		scores = Add(scores, diagonalBias(g, i+1, c, scores.DType()))                         // [B, H, c, i+1, c]
		weights := Softmax(scores, 3, 4)                                                      // [B, H, c, i+1, c]
		parts[i] = DotGeneral(weights, []int{3, 4}, []int{0, 1}, v, []int{0, 1}, []int{2, 3}) // [B, H, c, hd]
	}
	context := parts[0]
	if blocks > 1 {
		context = Concatenate(parts, 2) // [B, H, T, hd]
	}
	out := DotGeneral(context, []int{1, 3}, nil, wo, []int{1, 2}, nil) // [B, T, d]
	return AddBias(out, bo)                                            // [B, T, d]
}

// blockIndices is Gather's indices for the first n blocks: [[0], [1], …, [n-1]].
func blockIndices(n int) [][]int32 {
	idx := make([][]int32, n)
	for i := range idx {
		idx[i] = []int32{int32(i)}
	}
	return idx
}

// diagonalBias is the additive causal mask of a query block against its key blocks 0..n-1, as
// `[1, 1, c, n, c]`: -inf where the key block is the query's own (the last) and the key comes
// after the query, 0 elsewhere.
func diagonalBias(g *Graph, n, c int, dtype dtypes.DType) *Node {
	s := shapes.Make(dtypes.Int32, c, n, c)
	own := Equal(Iota(g, s, 1), Const(g, int32(n-1)))                           // [c, n, c]
	future := LogicalAnd(own, GreaterThan(Iota(g, s, 2), Iota(g, s, 0)))        // [c, n, c]
	bias := Where(future, Infinity(g, dtype, -1), Zeros(g, shapes.Make(dtype))) // [c, n, c]
	return ExpandLeftToRank(bias, 5)                                            // [1, 1, c, n, c]
}

func loadFast(scope *model.Scope, w Weights, s Size) {
	h, hd, d := s.Heads, s.HeadDim(), s.Dim
	scope.VariableWithValue("W_query", reshaped(scaled(w.Query, 1/math.Sqrt(float64(hd))), h, hd, d))
	scope.VariableWithValue("W_key", reshaped(w.Key, h, hd, d))
	scope.VariableWithValue("W_value", reshaped(w.Value, h, hd, d))
	scope.VariableWithValue("out_proj.weight", reshaped(w.Out, d, h, hd))
	scope.VariableWithValue("out_proj.bias", w.OutBias)
}

func buildFast(scope *model.Scope, x *Node, _ int) *Node {
	return Fast(x, param(scope, x, "W_query"), param(scope, x, "W_key"), param(scope, x, "W_value"),
		param(scope, x, "out_proj.weight"), param(scope, x, "out_proj.bias"), FastBlocks(x.Shape().Dim(1)))
}

// --- helpers -----------------------------------------------------------------------------------

// param is the value in x's graph of the variable name in ctx's scope, which Load created.
func param(scope *model.Scope, x *Node, name string) *Node {
	v := scope.GetVariable(name)
	if v == nil {
		panic(fmt.Errorf("mhabench: variable %q not found in scope %q: Load was not called", name, scope.Scope()))
	}
	return v.NodeValue(x.Graph())
}

func flat(t *tensors.Tensor) []float32 { return tensors.MustCopyFlatData[float32](t) }

// rows is t[from:to] of a `[n, m]` tensor: `[to-from, m]`.
func rows(t *tensors.Tensor, from, to int) *tensors.Tensor {
	m := t.Shape().Dim(1)
	return tensors.FromFlatDataAndDimensions(flat(t)[from*m:to*m], to-from, m)
}

// concatRows stacks `[n_i, m]` tensors into `[Σn_i, m]`.
func concatRows(ts ...*tensors.Tensor) *tensors.Tensor {
	var data []float32
	n := 0
	for _, t := range ts {
		data = append(data, flat(t)...)
		n += t.Shape().Dim(0)
	}
	return tensors.FromFlatDataAndDimensions(data, n, ts[0].Shape().Dim(1))
}

// reshaped is t's data (row-major) with new dimensions, like PyTorch's view.
func reshaped(t *tensors.Tensor, dims ...int) *tensors.Tensor {
	return tensors.FromFlatDataAndDimensions(flat(t), dims...)
}

// transposed is the transpose of a `[n, m]` tensor: `[m, n]`.
func transposed(t *tensors.Tensor) *tensors.Tensor {
	n, m := t.Shape().Dim(0), t.Shape().Dim(1)
	src, dst := flat(t), make([]float32, n*m)
	for i := range n {
		for j := range m {
			dst[j*n+i] = src[i*m+j]
		}
	}
	return tensors.FromFlatDataAndDimensions(dst, m, n)
}

// scaled is t·f, each product rounded to float32.
func scaled(t *tensors.Tensor, f float64) *tensors.Tensor {
	data := flat(t)
	for i := range data {
		data[i] = float32(float64(data[i]) * f)
	}
	return tensors.FromFlatDataAndDimensions(data, t.Shape().Dimensions...)
}
