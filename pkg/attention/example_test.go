package attention_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/attnbook/attnbook/pkg/attention"
	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/attnbook/attnbook/pkg/torchrand"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// printRows prints a tensor's last-axis rows with PyTorch's 4 decimals.
func printRows(t *tensors.Tensor) {
	flat := tensors.MustCopyFlatData[float32](t)
	n := t.Shape().Dim(-1)
	for i := 0; i < len(flat); i += n {
		row := make([]string, n)
		for j, v := range flat[i : i+n] {
			row[j] = fmt.Sprintf("%.4f", v)
		}
		fmt.Println(strings.Join(row, " "))
	}
}

// seed001Inputs are the six 3-dimensional embeddings of seed 001 ("Your journey starts with one
// step").
var seed001Inputs = [][]float32{
	{0.43, 0.15, 0.89}, {0.55, 0.87, 0.66}, {0.57, 0.85, 0.64},
	{0.22, 0.58, 0.33}, {0.77, 0.25, 0.10}, {0.05, 0.80, 0.55},
}

// Simplified attention for one query (seed 001, cells 2–5): scores, softmax, context vector.
func Example() {
	inputs := tensors.FromValue(seed001Inputs)
	query := tensors.FromValue(seed001Inputs[1]) // "journey"
	outs := MustExecOnceN(backend.MustDefault(), func(query, inputs *Node) (*Node, *Node, *Node) {
		scores := attention.DotScores(query, inputs)         // [T]
		weights := attention.StableSoftmax(scores)           // [T], sums to 1
		context := attention.ContextVectors(weights, inputs) // [d]
		return scores, weights, context
	}, query, inputs)
	for _, t := range outs {
		printRows(t)
	}
	// Output:
	// 0.9544 1.4950 1.4754 0.8434 0.7070 1.0865
	// 0.1385 0.2379 0.2333 0.1240 0.1082 0.1581
	// 0.4419 0.6515 0.5683
}

// Seed 001, cell 19: torch.manual_seed(123); SelfAttention_v1(3, 2)(inputs).
func ExampleNewSelfAttentionV1() {
	sa := attention.NewSelfAttentionV1(torchrand.New(123), 3, 2)
	printRows(sa.Forward(tensors.FromValue(seed001Inputs)))
	// Output:
	// 0.2996 0.8053
	// 0.3061 0.8210
	// 0.3058 0.8203
	// 0.2948 0.7939
	// 0.2927 0.7891
	// 0.2990 0.8040
}

// Seed 000, cell 22: MultiHeadAttention with dropout 0.1 in training mode. The weights and the
// dropout mask (drawn at call time, over the [1, 2, 3, 3] attention weights) come from the
// same generator, as in PyTorch, so the numbers match the seed's.
func ExampleNewMultiHeadAttention() {
	g := torchrand.New(123)
	mha := attention.NewMultiHeadAttention(g, 6, 6, 3, 0.1, 2, false)
	x := tensors.FromValue([][][]float32{{
		{1, 2, 3, 4, 5, 6},
		{6, 5, 4, 3, 2, 1},
		{1, 1, 1, 1, 1, 1},
	}})
	printRows(mha.Forward(x))
	weights, dropped := mha.LastWeights()
	fmt.Println(weights.Shape(), dropped.Shape(), mha.NumParams())
	// Output:
	// 0.1556 0.0844 1.1247 0.6199 -1.1666 -0.0814
	// 0.1454 0.0948 1.1142 0.6164 -1.1659 -0.0827
	// -0.1063 0.3392 0.3488 0.2884 -0.7438 -0.1504
	// (Float32)[1, 2, 3, 3] (Float32)[1, 2, 3, 3] 150
}

// The naive softmax overflows: exp(89) is +Inf in float32, so its row becomes NaN; the stable
// softmax subtracts the row maximum first.
func ExampleNaiveSoftmax() {
	scores := tensors.FromValue([]float32{89, 1, 2})
	outs := MustExecOnceN(backend.MustDefault(), func(s *Node) (*Node, *Node) {
		return attention.NaiveSoftmax(s), attention.StableSoftmax(s)
	}, scores)
	printRows(outs[0])
	printRows(outs[1])
	// Output:
	// NaN 0.0000 0.0000
	// 1.0000 0.0000 0.0000
}

// Cross attention: 2 queries attend over 5 keys in each of 3 heads, with the causal mask of seed
// 002 (triu(ones(Tq, Tk), diagonal=1)). PyTorch prints the same weights for these randn inputs.
func ExampleScaledDotProduct() {
	g := torchrand.New(0)
	q, k, v := g.Randn(1, 3, 2, 4), g.Randn(1, 3, 5, 4), g.Randn(1, 3, 5, 6) // [B, H, T, hs]
	outs := MustExecOnceN(backend.MustDefault(), func(q, k, v *Node) (*Node, *Node) {
		return attention.ScaledDotProduct(q, k, v).Causal(true).Done()
	}, q, k, v)
	fmt.Println(outs[0].Shape(), outs[1].Shape())
	printRows(outs[1]) // query 0 sees key 0 only, query 1 keys 0 and 1
	// Output:
	// (Float32)[1, 3, 2, 6] (Float32)[1, 3, 2, 5]
	// 1.0000 0.0000 0.0000 0.0000 0.0000
	// 0.5651 0.4349 0.0000 0.0000 0.0000
	// 1.0000 0.0000 0.0000 0.0000 0.0000
	// 0.6716 0.3284 0.0000 0.0000 0.0000
	// 1.0000 0.0000 0.0000 0.0000 0.0000
	// 0.8313 0.1687 0.0000 0.0000 0.0000
}

// A module inside a bigger GoMLX graph: Apply reads (or creates) its variables in the given
// store (here under the scope "/attn"), so GoMLX's optimizers can train them.
func ExampleMultiHeadAttention_Apply() {
	g := torchrand.New(123)
	mha := attention.NewMultiHeadAttention(g, 6, 6, 3, 0.0, 2, false)
	x := g.Rand(2, 3, 6)
	store := model.NewStore()
	out := model.MustCallOnce(backend.MustDefault(), store, func(scope *model.Scope, x *Node) *Node {
		h := mha.Apply(scope.In("attn"), x) // [B, T, D]
		return ReduceSum(Add(x, h), -1)     // a residual connection and more model
	}, x)
	fmt.Println(out.Shape(), store.GetVariable("/attn/out_proj/weight").Shape())
	// Output:
	// (Float32)[2, 3] (Float32)[6, 6]
}

// Bad input is an error, naming the function, the argument and the shapes.
func ExampleMultiHeadAttention_Call() {
	mha := attention.NewMultiHeadAttention(torchrand.New(123), 6, 6, 3, 0.1, 2, false)
	_, err := mha.Call(torchrand.New(0).Rand(1, 4, 6))
	fmt.Println(err)
	// Output:
	// attention.MultiHeadAttention.Call: x dims [1 4 6]: 4 tokens exceed context_length=3
}

// Config's JSON is seed 003's config dictionary, head_size added as the seed adds it.
func ExampleConfig() {
	text, err := json.MarshalIndent(attention.ShakespeareConfig(), "", "  ")
	if err != nil {
		panic(err)
	}
	fmt.Println(string(text))
	// Output:
	// {
	//   "vocabulary_size": 65,
	//   "context_size": 256,
	//   "embedding_dim": 768,
	//   "heads_num": 12,
	//   "layers_num": 10,
	//   "dropout_rate": 0.1,
	//   "use_bias": false,
	//   "head_size": 64
	// }
}

// Seed 003's configuration: 12 heads of 64 in a list, as many parameters as the vectorized
// MultiHeadAttention(768, 768, ·, ·, 12).
func ExampleNewHeadList() {
	cfg := attention.ShakespeareConfig()
	heads := attention.NewHeadList(torchrand.New(0), cfg)
	fmt.Println(heads.NumParams(), heads.ParamNames()[:3], heads.ParamNames()[36:])
	// Output:
	// 2360064 [heads.0.Q_weights.weight heads.0.K_weights.weight heads.0.V_weights.weight] [linear.weight linear.bias]
}

// GoMLX's fused attention on split heads: causal, scaled by 1/sqrt(hd), the same numbers as the
// step-by-step ScaledDotProduct to float32 rounding. The first query of each head sees only the
// first key, so its output is that head's first value row.
func ExampleFusedCausal() {
	g := torchrand.New(0)
	q, k, v := g.Randn(1, 2, 4, 3), g.Randn(1, 2, 4, 3), g.Randn(1, 2, 4, 3) // [B, H, T, hd]
	outs := MustExecOnceN(backend.MustDefault(), func(q, k, v *Node) (*Node, *Node) {
		exact, _ := attention.ScaledDotProduct(q, k, v).Causal(true).Done()
		fused := attention.FusedCausal(q, k, v)            // [B, H, T, hd]
		return fused, ReduceAllMax(Abs(Sub(fused, exact))) // largest difference
	}, q, k, v)
	printRows(outs[0])
	fmt.Println("same as ScaledDotProduct to 1e-6:", tensors.ToScalar[float32](outs[1]) < 1e-6)
	// Output:
	// -0.0933 0.6871 -0.8383
	// -0.0541 0.7516 -0.6557
	// 0.0307 0.6919 -0.6572
	// 0.8085 0.4224 0.0944
	// -0.8025 -1.2952 -0.7502
	// -0.8437 -1.1737 -0.7165
	// -1.0624 0.0668 -0.1177
	// -0.7818 0.1034 0.2143
	// same as ScaledDotProduct to 1e-6: true
}

// The fast formulation on a module's weights (PyTorch's layout): seed 000's MultiHeadAttention
// in evaluation mode, without dropout, as its Forward computes it.
func ExampleFastCausalMultiHead() {
	mha := attention.NewMultiHeadAttention(torchrand.New(123), 6, 6, 3, 0.1, 2, false)
	x := tensors.FromValue([][][]float32{{
		{1, 2, 3, 4, 5, 6},
		{6, 5, 4, 3, 2, 1},
		{1, 1, 1, 1, 1, 1},
	}})
	out := MustExecOnce(backend.MustDefault(), func(x, wq, wk, wv, wo, bo *Node) *Node {
		return attention.FastCausalMultiHead(x, 2, wq, nil, wk, nil, wv, nil, wo, bo) // [B, T, d_out]
	}, x, mha.Weight("W_query.weight"), mha.Weight("W_key.weight"), mha.Weight("W_value.weight"),
		mha.Weight("out_proj.weight"), mha.Weight("out_proj.bias"))
	printRows(out)
	// Output:
	// 0.1462 0.0579 0.9873 0.5611 -1.0803 -0.1040
	// 0.1370 0.0673 0.9778 0.5579 -1.0796 -0.1051
	// -0.0567 0.3264 0.3687 0.2519 -0.6801 -0.1478
}
