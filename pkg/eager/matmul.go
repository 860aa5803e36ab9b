package eager

import (
	"fmt"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// matmulType checks the operands' dtypes: PyTorch's matmul wants one numeric dtype on both sides.
func matmulType(op string, a, b *tensors.Tensor, aName, bName string) dtypes.DType {
	if a.DType() != b.DType() {
		failf(op, "%s %s and %s %s: dtypes differ (PyTorch refuses mixed dtypes too); convert one with "+
			"eager.Float or eager.Long", aName, desc(a, true), bName, desc(b, true))
	}
	if a.DType() == dtypes.Bool {
		failf(op, "%s %s and %s %s: matrix products of bool tensors are not supported", aName, desc(a, true),
			bName, desc(b, true))
	}
	return a.DType()
}

// MatMul is torch.matmul(a, b), Python's a @ b, with all of its cases:
//
//   - 1-D · 1-D: the dot product, a 0-d tensor;
//   - 2-D @ 2-D: the matrix product [m, k] @ [k, n] → [m, n];
//   - 1-D @ 2-D: [k] @ [k, n] → [n] (a is a row vector); 2-D @ 1-D: [m, k] @ [k] → [m];
//   - N-D: batches of matrices, the leading (batch) dimensions broadcast like PyTorch, e.g.
//     [B, H, T, d] @ [B, H, d, T] → [B, H, T, T] or [B, T, d] @ [d, e] → [B, T, e]; a 1-D operand
//     is promoted to a matrix and its dimension removed from the result.
//
// Both operands need the same dtype, float32 or int64 (or float64/int32). The product accumulates
// in the operands' dtype; see the package documentation for how its rounding compares to PyTorch.
func MatMul(a, b *tensors.Tensor) *tensors.Tensor {
	checkTensor("MatMul", "a", a)
	checkTensor("MatMul", "b", b)
	ra, rb := a.Rank(), b.Rank()
	if ra == 0 || rb == 0 {
		failf("MatMul", "a %s and b %s: both arguments need at least 1 dimension, but they are %d-D and %d-D",
			desc(a, false), desc(b, false), ra, rb)
	}
	dt := matmulType("MatMul", a, b, "a", "b")
	ad, bd := a.Shape().Dimensions, b.Shape().Dimensions
	if ra == 1 && rb == 1 {
		if ad[0] != bd[0] {
			failf("MatMul", "a %s and b %s: 1-D sizes %d and %d differ", desc(a, false), desc(b, false), ad[0], bd[0])
		}
		return dot1D(a, b, dt)
	}
	// Promote 1-D operands to matrices: a [k] → [1, k], b [k] → [k, 1].
	am, bm := ad, bd
	if ra == 1 {
		am = []int{1, ad[0]}
	}
	if rb == 1 {
		bm = []int{bd[0], 1}
	}
	ka, kb := am[len(am)-1], bm[len(bm)-2]
	if ka != kb {
		failf("MatMul", "a %s and b %s: inner dimensions %d and %d differ", desc(a, false), desc(b, false), ka, kb)
	}
	batchA, batchB := am[:len(am)-2], bm[:len(bm)-2]
	batch := broadcastDims("MatMul", "a "+desc(a, false)+" with batch dimensions", batchA,
		"b "+desc(b, false)+" with batch dimensions", batchB)
	m, n := am[len(am)-2], bm[len(bm)-1]
	outDims := append([]int(nil), batch...)
	if ra > 1 {
		outDims = append(outDims, m)
	}
	if rb > 1 {
		outDims = append(outDims, n)
	}
	checkSize("MatMul", fmt.Sprintf("a %s @ b %s: the result %v", desc(a, false), desc(b, false), outDims),
		outDims, dt.Size(), dtypeName(dt))
	if product(outDims) == 0 || ka == 0 {
		return tensors.FromShape(shapes.Make(dt, outDims...)) // Zeros, like PyTorch's empty sums.
	}
	if useExact(product(batch), m, ka, n) {
		return exactProduct("MatMul", a, b, dt, productLayout{m: m, k: ka, n: n, outDims: outDims,
			aBatch: batchMap(batch, batchA), bBatch: batchMap(batch, batchB)})
	}
	return run1("MatMul", "", func(xs []*graph.Node) *graph.Node {
		x := broadcastNode(graph.Reshape(xs[0], am...), append(append([]int(nil), batch...), m, ka))
		y := broadcastNode(graph.Reshape(xs[1], bm...), append(append([]int(nil), batch...), ka, n))
		return graph.Reshape(contract(x, y, len(batch)), outDims...)
	}, a, b)
}

// contract multiplies x [batch..., m, k] by y [batch..., k, n] (same batch dimensions, nb of them)
// into [batch..., m, n] with the backend's DotGeneral (products too large for the exact path).
func contract(x, y *graph.Node, nb int) *graph.Node {
	batchAxes := make([]int, nb)
	for i := range batchAxes {
		batchAxes[i] = i
	}
	// DotGeneral's output: batch axes, then x's free axis (m), then y's (n).
	return graph.DotGeneral(x, []int{nb + 1}, batchAxes, y, []int{nb}, batchAxes)
}

func dot1D(a, b *tensors.Tensor, dt dtypes.DType) *tensors.Tensor {
	if a.Size() == 0 {
		return tensors.FromShape(shapes.Make(dt))
	}
	if useExact(1, 1, a.Size(), 1) {
		return exactProduct("Dot", a, b, dt, productLayout{m: 1, k: a.Size(), n: 1, aBatch: []int{0}, bBatch: []int{0}})
	}
	return run1("Dot", "", func(xs []*graph.Node) *graph.Node {
		return graph.DotGeneral(xs[0], []int{0}, nil, xs[1], []int{0}, nil)
	}, a, b)
}

// Dot is torch.dot(a, b) (a.dot(b)): the dot product of two 1-D tensors of the same size and
// dtype, as a 0-d tensor.
func Dot(a, b *tensors.Tensor) *tensors.Tensor {
	checkTensor("Dot", "a", a)
	checkTensor("Dot", "b", b)
	if a.Rank() != 1 || b.Rank() != 1 {
		failf("Dot", "a %s and b %s: 1D tensors expected, but got %dD and %dD tensors",
			desc(a, false), desc(b, false), a.Rank(), b.Rank())
	}
	dt := matmulType("Dot", a, b, "a", "b")
	if a.Size() != b.Size() {
		failf("Dot", "a %s and b %s: sizes %d and %d differ", desc(a, false), desc(b, false), a.Size(), b.Size())
	}
	return dot1D(a, b, dt)
}

// Linear is the forward pass of nn.Linear (torch.nn.functional.linear): x @ weight.T + bias, with
// weight [out_features, in_features] as PyTorch stores it and bias [out_features] or nil (for
// bias=False). x is [..., in_features]; the result is [..., out_features].
func Linear(x, weight, bias *tensors.Tensor) *tensors.Tensor {
	checkTensor("Linear", "x", x)
	checkTensor("Linear", "weight", weight)
	if weight.Rank() != 2 {
		failf("Linear", "weight %s must be 2-D [out_features, in_features]", desc(weight, false))
	}
	if x.Rank() == 0 {
		failf("Linear", "x is 0-d; it needs a last dimension of in_features=%d", weight.Shape().Dimensions[1])
	}
	dt := matmulType("Linear", x, weight, "x", "weight")
	out, in := weight.Shape().Dimensions[0], weight.Shape().Dimensions[1]
	xd := x.Shape().Dimensions
	if xd[len(xd)-1] != in {
		failf("Linear", "x %s and weight %s: x's last dimension %d differs from in_features %d",
			desc(x, false), desc(weight, false), xd[len(xd)-1], in)
	}
	outDims := append(dimsOf(x)[:x.Rank()-1], out)
	checkSize("Linear", fmt.Sprintf("x %s and weight %s: the result %v", desc(x, false), desc(weight, false), outDims),
		outDims, dt.Size(), dtypeName(dt))
	inputs := []*tensors.Tensor{x, weight}
	if bias != nil {
		checkTensor("Linear", "bias", bias)
		if bias.DType() != dt {
			failf("Linear", "bias %s and weight %s: dtypes differ", desc(bias, true), desc(weight, true))
		}
		bd := broadcastDims("Linear", "x @ weight.T", outDims, "bias", bias.Shape().Dimensions)
		if !equalInts(bd, outDims) {
			failf("Linear", "bias %s would grow the result %v to %v; want [out_features]=[%d]",
				desc(bias, false), outDims, bd, out)
		}
		inputs = append(inputs, bias)
	}
	if product(outDims) == 0 {
		return tensors.FromShape(shapes.Make(dt, outDims...))
	}
	if in == 0 { // No products to sum: zeros, plus the bias.
		zeros := tensors.FromShape(shapes.Make(dt, outDims...))
		if bias != nil {
			return Add(zeros, bias)
		}
		return zeros
	}
	static := "nobias"
	if bias != nil {
		static = "bias"
	}
	rows := x.Size() / in
	if useExact(1, rows, in, out) {
		y := exactProduct("Linear", x, weight, dt, productLayout{m: rows, k: in, n: out, outDims: outDims,
			aBatch: []int{0}, bBatch: []int{0}, bTransposed: true})
		if bias != nil {
			return Add(y, bias) // After the sum, like PyTorch's matmul then add_.
		}
		return y
	}
	return run1("Linear", static, func(xs []*graph.Node) *graph.Node {
		x2 := graph.Reshape(xs[0], rows, in)                      // [rows, in]
		y := contract(x2, graph.TransposeAllAxes(xs[1], 1, 0), 0) // [rows, in] @ [in, out]
		y = graph.Reshape(y, outDims...)
		if len(xs) == 3 {
			y = graph.Add(y, broadcastNode(xs[2], outDims))
		}
		return y
	}, inputs...)
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
