package bench

import (
	"fmt"
	"strings"

	"github.com/attnbook/attnbook/pkg/attention"
	"github.com/attnbook/attnbook/pkg/benchdata"
	"github.com/attnbook/attnbook/pkg/torchrand"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	gattention "github.com/gomlx/gomlx/ml/layers/attention"
	"github.com/gomlx/gomlx/ml/model"
)

// Size is a multi-head attention workload (see [benchdata.Size]).
type Size = benchdata.Size

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

// Build is a formulation's forward pass: x `[B, T, d]` to `[B, T, d]`, reading its weights
// from the variables of scope's store.
type Build func(scope *model.Scope, x *Node) *Node

// Impl is one formulation of causal multi-head self-attention without dropout.
type Impl struct {
	Name  string // short name used in tables, files and flags: "chapter"
	Title string // one line for people
	// Load stores the chapter's weights in store, in this formulation's layout and under its
	// PyTorch counterpart's state_dict keys, and returns the forward pass that reads them.
	Load func(store *model.Store, w Weights, s Size) Build
}

// Impls are the formulations, the chapter's first. Every one computes the same function of the
// same weights: the tests and the bench check it before timing anything. All but gomlx_layers
// are built from pkg/attention's graph functions.
func Impls() []Impl {
	return []Impl{
		{"chapter", "the chapter's MultiHeadAttention, line by line: Linear, SplitHeads, Scores, CausalMaskFill, ScaleScores, StableSoftmax, ContextVectors, MergeHeads, Linear", loadChapter},
		{"wrapper", "MultiHeadAttentionWrapper: H heads of ScaledDotProduct, each with its own [hd, d] projections, Concatenate, out_proj", loadWrapper},
		{"combined_qkv", "one [3d, d] QKV projection, view + permute + split, ScaledDotProduct", loadCombinedQKV},
		{"einsum", "graph.Einsum for projections, scores, context and out_proj (weights viewed per head)", loadEinsum},
		{"gomlx_layers", "GoMLX's ml/layers/attention.MultiHeadAttention(...).WithCausalMask(true)", loadLayers},
		{"fused", "the chapter's projections around attention.FusedCausal (GoMLX's fused scaled dot-product attention)", loadFused},
		{"fast", "attention.MultiHeadAttention with SetFast(true): pkg/attention's one fast formulation", loadFast},
		{"flash", "the chapter's projections around attention.FlashCausal (tiles with the online softmax: no [T, T] scores, forward or backward)", loadFlash},
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

// ImplNames are the names of [Impls], in order.
func ImplNames() []string {
	var names []string
	for _, im := range Impls() {
		names = append(names, im.Name)
	}
	return names
}

// --- chapter -----------------------------------------------------------------------------------

// loadChapter: the vectorized MultiHeadAttention's forward, one pkg/attention function per line
// of the chapter's PyTorch code.
func loadChapter(store *model.Store, w Weights, s Size) Build {
	storeChapter(store, w)
	return func(scope *model.Scope, x *Node) *Node {
		p := params(store, x.Graph())
		keys := attention.SplitHeads(attention.Linear(x, p("W_key.weight"), nil), s.Heads)      // [B, H, T, hd]
		queries := attention.SplitHeads(attention.Linear(x, p("W_query.weight"), nil), s.Heads) // [B, H, T, hd]
		values := attention.SplitHeads(attention.Linear(x, p("W_value.weight"), nil), s.Heads)  // [B, H, T, hd]
		scores := attention.Scores(queries, keys)                                               // [B, H, T, T]
		scores = attention.CausalMaskFill(scores)                                               // [B, H, T, T]
		weights := attention.StableSoftmax(attention.ScaleScores(scores, s.HeadDim()))          // [B, H, T, T]
		context := attention.MergeHeads(attention.ContextVectors(weights, values))              // [B, T, d]
		return attention.Linear(context, p("out_proj.weight"), p("out_proj.bias"))              // [B, T, d]
	}
}

// storeChapter stores w under the chapter's state_dict keys.
func storeChapter(store *model.Store, w Weights) {
	put(store, "W_query.weight", w.Query)
	put(store, "W_key.weight", w.Key)
	put(store, "W_value.weight", w.Value)
	put(store, "out_proj.weight", w.Out)
	put(store, "out_proj.bias", w.OutBias)
}

// --- wrapper -----------------------------------------------------------------------------------

// loadWrapper: the chapter's MultiHeadAttentionWrapper (H CausalAttention heads of width hd)
// followed by an out_proj, as the bonus material's Ch03_MHA_Wrapper.
func loadWrapper(store *model.Store, w Weights, s Size) Build {
	hd := s.HeadDim()
	for h := range s.Heads {
		put(store, fmt.Sprintf("heads.%d.W_query.weight", h), rows(w.Query, h*hd, (h+1)*hd))
		put(store, fmt.Sprintf("heads.%d.W_key.weight", h), rows(w.Key, h*hd, (h+1)*hd))
		put(store, fmt.Sprintf("heads.%d.W_value.weight", h), rows(w.Value, h*hd, (h+1)*hd))
	}
	put(store, "out_proj.weight", w.Out)
	put(store, "out_proj.bias", w.OutBias)
	return func(scope *model.Scope, x *Node) *Node {
		p := params(store, x.Graph())
		heads := make([]*Node, s.Heads)
		for h := range heads {
			q := attention.Linear(x, p(fmt.Sprintf("heads.%d.W_query.weight", h)), nil) // [B, T, hd]
			k := attention.Linear(x, p(fmt.Sprintf("heads.%d.W_key.weight", h)), nil)   // [B, T, hd]
			v := attention.Linear(x, p(fmt.Sprintf("heads.%d.W_value.weight", h)), nil) // [B, T, hd]
			heads[h], _ = attention.ScaledDotProduct(q, k, v).Causal(true).Done()       // [B, T, hd]
		}
		cat := Concatenate(heads, -1)                                          // [B, T, d]
		return attention.Linear(cat, p("out_proj.weight"), p("out_proj.bias")) // [B, T, d]
	}
}

// --- combined QKV ------------------------------------------------------------------------------

// loadCombinedQKV: the bonus material's MultiHeadAttentionCombinedQKV: one `[3d, d]` projection
// (W_query, W_key, W_value stacked), viewed as `[B, T, 3, H, hd]`, permuted to
// `[3, B, H, T, hd]` and split.
func loadCombinedQKV(store *model.Store, w Weights, s Size) Build {
	put(store, "qkv.weight", concatRows(w.Query, w.Key, w.Value))
	put(store, "proj.weight", w.Out)
	put(store, "proj.bias", w.OutBias)
	return func(scope *model.Scope, x *Node) *Node {
		p := params(store, x.Graph())
		b, t, h, hd := x.Shape().Dim(0), x.Shape().Dim(1), s.Heads, s.HeadDim()
		qkv := attention.Linear(x, p("qkv.weight"), nil) // [B, T, 3d]
		qkv = Reshape(qkv, b, t, 3, h, hd)               // [B, T, 3, H, hd]
		qkv = TransposeAllDims(qkv, 2, 0, 3, 1, 4)       // [3, B, H, T, hd]
		part := func(i int) *Node {
			return Reshape(Slice(qkv, AxisElem(i)), b, h, t, hd) // [B, H, T, hd]
		}
		context, _ := attention.ScaledDotProduct(part(0), part(1), part(2)).Causal(true).Done()  // [B, H, T, hd]
		return attention.Linear(attention.MergeHeads(context), p("proj.weight"), p("proj.bias")) // [B, T, d]
	}
}

// --- einsum ------------------------------------------------------------------------------------

// loadEinsum: the bonus material's MHAEinsum, every product one graph.Einsum; the weights are
// nn.Linear's viewed per head, W_query/W_key/W_value `[H, hd, d]` and out_proj `[d, H, hd]`, so
// the equations split and merge the heads without reshaping activations.
func loadEinsum(store *model.Store, w Weights, s Size) Build {
	h, hd, d := s.Heads, s.HeadDim(), s.Dim
	put(store, "W_query", reshaped(w.Query, h, hd, d))
	put(store, "W_key", reshaped(w.Key, h, hd, d))
	put(store, "W_value", reshaped(w.Value, h, hd, d))
	put(store, "out_proj.weight", reshaped(w.Out, d, h, hd))
	put(store, "out_proj.bias", w.OutBias)
	return func(scope *model.Scope, x *Node) *Node {
		p := params(store, x.Graph())
		queries := Einsum("btd,hkd->bhtk", x, p("W_query"))                          // [B, H, T, hd]
		keys := Einsum("btd,hkd->bhtk", x, p("W_key"))                               // [B, H, T, hd]
		values := Einsum("btd,hkd->bhtk", x, p("W_value"))                           // [B, H, T, hd]
		scores := attention.CausalMaskFill(Einsum("bhqk,bhsk->bhqs", queries, keys)) // [B, H, T, T]
		weights := attention.StableSoftmax(attention.ScaleScores(scores, hd))        // [B, H, T, T]
		context := Einsum("bhqs,bhsk->bqhk", weights, values)                        // [B, T, H, hd]
		out := Einsum("bqhk,ohk->bqo", context, p("out_proj.weight"))                // [B, T, d]
		return Add(out, ExpandLeftToRank(p("out_proj.bias"), 3))                     // [B, T, d]
	}
}

// --- GoMLX's layer -----------------------------------------------------------------------------

// loadLayers: GoMLX v0.28's ml/layers/attention.MultiHeadAttention with WithCausalMask(true) and
// UseTransposedWeights (PyTorch's `[out, in]` weights). Its query, key and value projections
// always have biases: they are loaded as zeros. Since v0.27 it scales the scores once, by
// 1/√hd, like the chapter (v0.26.0 did it twice), so the weights load unchanged.
func loadLayers(store *model.Store, w Weights, s Size) Build {
	zeros := tensors.FromFlatDataAndDimensions(make([]float32, s.Dim), s.Dim)
	for name, wt := range map[string]*tensors.Tensor{"query": w.Query, "key": w.Key, "value": w.Value} {
		put(store, "MultiHeadAttention."+name+".dense.weights", wt) // [H·hd, d]
		put(store, "MultiHeadAttention."+name+".dense.biases", zeros)
	}
	put(store, "MultiHeadAttention.output.dense.weights", w.Out) // [d, H·hd]
	put(store, "MultiHeadAttention.output.dense.biases", w.OutBias)
	return func(scope *model.Scope, x *Node) *Node {
		return gattention.MultiHeadAttention(scope, x, x, x, s.Heads, s.HeadDim()).
			WithCausalMask(true).UseTransposedWeights(true).Done() // [B, T, d]
	}
}

// --- fused -------------------------------------------------------------------------------------

// loadFused: the chapter's projections and head split around attention.FusedCausal, GoMLX's
// fused scaled dot-product attention (one op where the backend has it, a decomposed graph
// elsewhere).
func loadFused(store *model.Store, w Weights, s Size) Build {
	return loadAroundCore(store, w, s, attention.FusedCausal)
}

// --- flash -------------------------------------------------------------------------------------

// loadFlash: the chapter's projections and head split around attention.FlashCausal, causal
// attention in tiles with the online softmax of FlashAttention (forward) and FlashAttention-2's
// backward pass: no `[B, H, T, T]` tensor either way.
func loadFlash(store *model.Store, w Weights, s Size) Build {
	return loadAroundCore(store, w, s, attention.FlashCausal)
}

// loadAroundCore: the chapter's projections, head split and out_proj around core, a causal
// attention of q, k, v `[B, H, T, hd]` → `[B, H, T, hd]`.
func loadAroundCore(store *model.Store, w Weights, s Size, core func(q, k, v *Node) *Node) Build {
	storeChapter(store, w)
	return func(scope *model.Scope, x *Node) *Node {
		p := params(store, x.Graph())
		queries := attention.SplitHeads(attention.Linear(x, p("W_query.weight"), nil), s.Heads) // [B, H, T, hd]
		keys := attention.SplitHeads(attention.Linear(x, p("W_key.weight"), nil), s.Heads)      // [B, H, T, hd]
		values := attention.SplitHeads(attention.Linear(x, p("W_value.weight"), nil), s.Heads)  // [B, H, T, hd]
		context := attention.MergeHeads(core(queries, keys, values))                            // [B, T, d]
		return attention.Linear(context, p("out_proj.weight"), p("out_proj.bias"))              // [B, T, d]
	}
}

// --- fast --------------------------------------------------------------------------------------

// loadFast: pkg/attention's MultiHeadAttention module in evaluation mode with SetFast(true), the
// library's one fast formulation (see its SetFast), reading the chapter's state_dict keys from
// store.
func loadFast(store *model.Store, w Weights, s Size) Build {
	storeChapter(store, w)
	// The module's own weights are drawn and never used: Apply reads store's variables.
	m := attention.NewMultiHeadAttention(torchrand.New(0), s.Dim, s.Dim, s.Tokens, 0, s.Heads, false)
	m.Eval()
	m.SetFast(true)
	return func(scope *model.Scope, x *Node) *Node {
		return m.Apply(scope, x) // [B, T, d]
	}
}

// --- helpers -----------------------------------------------------------------------------------

// varPath is the store path of a PyTorch state_dict key: "out_proj.weight" is "/out_proj/weight",
// as pkg/attention's modules name their variables.
func varPath(key string) string {
	return model.JoinPath(append([]string{"/"}, strings.Split(key, ".")...)...)
}

// put stores value under key; keys are unique per formulation.
func put(store *model.Store, key string, value *tensors.Tensor) {
	if _, err := store.CreateVariable(varPath(key), value); err != nil {
		panic(fmt.Errorf("bench: variable %q: %w", key, err))
	}
}

// params returns the graph value in g of the variable of a key that Load stored.
func params(store *model.Store, g *Graph) func(key string) *Node {
	return func(key string) *Node {
		v := store.GetVariable(varPath(key))
		if v == nil {
			panic(fmt.Errorf("bench: variable %q not in the store: Load did not create it", key))
		}
		return v.NodeValue(g)
	}
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
