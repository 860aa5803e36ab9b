package eager_test

import (
	"fmt"
	"math"

	"github.com/attnbook/attnbook/pkg/eager"
	"github.com/gomlx/gomlx/core/graph"
)

// Seed 001, cells [1], [2] and [7]: dot products, one at a time and as one matrix product.
func ExampleMatMul() {
	inputs := eager.Tensor([][]float64{
		{0.43, 0.15, 0.89}, // Your     (x^1)
		{0.55, 0.87, 0.66}, // journey  (x^2)
		{0.57, 0.85, 0.64}, // starts   (x^3)
		{0.22, 0.58, 0.33}, // with     (x^4)
		{0.77, 0.25, 0.10}, // one      (x^5)
		{0.05, 0.80, 0.55}, // step     (x^6)
	})
	query := eager.Index(inputs, 1)
	for i := range 2 {
		fmt.Printf("x_%d dot: %v\n", i, eager.Item(eager.Dot(eager.Index(inputs, i), query)))
	}
	scores := eager.MatMul(inputs, eager.T(inputs)) // (6x3) @ (3x6) = (6x6)
	fmt.Println(eager.Shape(scores), eager.Item(eager.Index(eager.Index(scores, 1), 0)))

	// torch.matmul's 1-D rules: 1-D @ 1-D is a 0-d dot product.
	a, b := eager.Tensor([]int{1, 2, 3}), eager.Tensor([]int{4, 5, 7})
	fmt.Println("a@b =", eager.String(eager.MatMul(a, b)), "a*b =", eager.String(eager.Mul(a, b)))
	// Output:
	// x_0 dot: 0.9544000625610352
	// x_1 dot: 1.4950001239776611
	// [6 6] 0.9544000625610352
	// a@b = 35 a*b = [4 10 21]
}

func ExampleSoftmax() {
	scores := eager.Tensor([][]float64{{1, 2, 3}, {0, 0, math.Inf(-1)}})
	weights := eager.Softmax(scores, -1)
	fmt.Printf("%.4f\n", weights.Value())
	fmt.Printf("row sums: %.4f\n", eager.Sum(weights, -1, false).Value())
	// A row of -inf has nothing to normalize: NaN, like PyTorch.
	fmt.Println(eager.String(eager.Softmax(eager.Full(math.Inf(-1), 1, 2), -1)))
	// Output:
	// [[0.0900 0.2447 0.6652] [0.5000 0.5000 0.0000]]
	// row sums: [1.0000 1.0000]
	// [[NaN NaN]]
}

// Seed 001, cell [48]: the causal mask.
func ExampleMaskedFill() {
	scores := eager.Reshape(eager.Float(eager.Arange(9)), 3, 3)
	mask := eager.Triu(eager.Ones(3, 3), 1) // 1 above the diagonal: the future.
	masked := eager.MaskedFill(scores, eager.Bool(mask), math.Inf(-1))
	fmt.Println(eager.String(masked))
	// A [3 3] mask broadcasts over a batch of [2 3 3] scores.
	batch := eager.Stack(0, scores, scores)
	fmt.Println(eager.Shape(eager.MaskedFill(batch, eager.Bool(mask), 0)))
	// Output:
	// [[0 -Inf -Inf] [3 4 -Inf] [6 7 8]]
	// [2 3 3]
}

// Seed 001, cells [91]-[90]: view with an inferred -1, and flattening.
func ExampleView() {
	x := eager.Tensor([]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	fmt.Println(eager.String(eager.View(x, 3, 4)))
	x3d := eager.View(x, 2, -1, 3)
	fmt.Println(eager.Shape(x3d), eager.String(x3d))
	fmt.Println(eager.String(eager.View(x3d, -1)))
	defer func() { fmt.Println(recover()) }()
	eager.View(x, 5, -1)
	// Output:
	// [[1 2 3 4] [5 6 7 8] [9 10 11 12]]
	// [2 2 3] [[[1 2 3] [4 5 6]] [[7 8 9] [10 11 12]]]
	// [1 2 3 4 5 6 7 8 9 10 11 12]
	// eager.View: cannot view [12] as [5 -1]: 12 elements can't be split into blocks of 5
}

// Seed 001, cell [8]: stack, .T, unsqueeze and permute on int64 tensors.
func ExampleStack() {
	a, b := eager.Tensor([]int{1, 2, 3}), eager.Tensor([]int{4, 5, 7})
	c := eager.Stack(0, a, b)
	fmt.Println(eager.String(c), eager.String(eager.T(c)))
	fmt.Println(eager.String(eager.Unsqueeze(a, 1)), eager.String(eager.Permute(eager.Unsqueeze(a, 0), 0, 1)))
	// Output:
	// [[1 2 3] [4 5 7]] [[1 4] [2 5] [3 7]]
	// [[1] [2] [3]] [[1 2 3]]
}

// Multi-head attention's head split: view, then transpose, then back.
func ExampleTranspose() {
	x := eager.View(eager.Float(eager.Arange(12)), 1, 3, 4)   // [b, T, d_out]
	heads := eager.Transpose(eager.View(x, 1, 3, 2, 2), 1, 2) // [b, H, T, hd]
	fmt.Println(eager.Shape(heads))
	back := eager.View(eager.Contiguous(eager.Transpose(heads, 1, 2)), 1, 3, 4)
	fmt.Println(eager.AllClose(back, x, 1e-5, 1e-8))
	// Output:
	// [1 2 3 2]
	// true
}

// nn.Linear's forward: x @ weight.T + bias, with weight [out_features, in_features].
func ExampleLinear() {
	weight := eager.Tensor([][]float64{{1, 0, 0}, {0, 1, 1}}) // [2, 3]
	bias := eager.Tensor([]float64{0.5, -0.5})
	x := eager.Tensor([][]float64{{1, 2, 3}, {4, 5, 6}}) // [2, 3]
	fmt.Println(eager.String(eager.Linear(x, weight, bias)))
	fmt.Println(eager.String(eager.Linear(x, weight, nil)))
	// Output:
	// [[1.5 4.5] [4.5 10.5]]
	// [[1 5] [4 11]]
}

// Apply runs a GoMLX graph function, such as those of pkg/attention, on tensors.
func ExampleApply() {
	scaledScores := func(q, k *graph.Node) *graph.Node { // [T, d] x [T, d] -> [T, T]
		d := float64(q.Shape().Dimensions[1])
		return graph.DivScalar(graph.Einsum("td,sd->ts", q, k), math.Sqrt(d))
	}
	q := eager.Tensor([][]float64{{1, 0}, {0, 2}})
	out := eager.Apply(scaledScores, q, q)
	fmt.Printf("%.4f\n", out[0].Value())
	// Output:
	// [[0.7071 0.0000] [0.0000 2.8284]]
}
