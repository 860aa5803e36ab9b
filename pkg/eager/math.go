package eager

import (
	"fmt"
	"math"
	"slices"

	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// broadcastNode broadcasts x to dims following PyTorch's rules (already validated): missing leading
// dimensions are added, dimensions of size 1 are repeated.
func broadcastNode(x *graph.Node, dims []int) *graph.Node {
	xd := x.Shape().Dimensions
	if slices.Equal(xd, dims) {
		return x
	}
	if x.Rank() == 0 {
		return graph.BroadcastToDims(x, dims...)
	}
	if x.Rank() < len(dims) {
		full := make([]int, len(dims))
		for i := range full {
			full[i] = 1
		}
		copy(full[len(dims)-len(xd):], xd)
		x = graph.Reshape(x, full...)
	}
	return graph.BroadcastToDims(x, dims...)
}

// scalarTensor is the Go number s as a 0-d tensor of dtype dt, rounded the way PyTorch casts a
// Python number to the dtype of an operation (to nearest for floats, toward zero for integers).
// Scalars travel as inputs, not constants, so a new value doesn't compile a new graph.
func scalarTensor(dt dtypes.DType, s float64) *tensors.Tensor {
	switch dt {
	case dtypes.Bool:
		return tensors.FromScalar(s != 0)
	case dtypes.Float32:
		return tensors.FromScalar(float32(s))
	case dtypes.Float64:
		return tensors.FromScalar(s)
	case dtypes.Int32:
		return tensors.FromScalar(int32(s))
	default:
		return tensors.FromScalar(int64(s))
	}
}

type binOp int

const (
	opAdd binOp = iota
	opSub
	opMul
	opDiv
	opPow
)

var binOpNames = [...]string{"Add", "Sub", "Mul", "Div", "Pow"}

// apply builds x op y for same-shape nodes of dtype dt.
func (op binOp) apply(x, y *graph.Node) *graph.Node {
	if x.DType() == dtypes.Bool {
		switch op {
		case opAdd:
			return graph.LogicalOr(x, y)
		case opMul:
			return graph.LogicalAnd(x, y)
		}
	}
	switch op {
	case opAdd:
		return graph.Add(x, y)
	case opSub:
		return graph.Sub(x, y)
	case opMul:
		return graph.Mul(x, y)
	case opDiv:
		return graph.Div(x, y)
	default:
		return graph.Pow(x, y)
	}
}

// computeType is the dtype an arithmetic op computes in, given PyTorch's result type rt; it
// panics where PyTorch refuses.
func (op binOp) computeType(name string, rt dtypes.DType, a, b string) dtypes.DType {
	switch {
	case op == opDiv && !rt.IsFloat():
		return dtypes.Float32 // True division: integers and bools divide as float32, like torch.
	case rt == dtypes.Bool && op == opPow:
		return dtypes.Int64
	}
	return rt
}

// refuseBoolSub panics, like PyTorch, when a subtraction involves a bool tensor.
func refuseBoolSub(op binOp, name string, ts ...*tensors.Tensor) {
	if op != opSub {
		return
	}
	for i, t := range ts {
		if t.DType() == dtypes.Bool {
			failf(name, "%s %s: subtraction with a bool tensor is not supported (PyTorch refuses it "+
				"too); to invert a mask use eager.Not, or convert with eager.Long", []string{"a", "b"}[i], desc(t, true))
		}
	}
}

func binary(op binOp, a, b *tensors.Tensor) *tensors.Tensor {
	name := binOpNames[op]
	checkTensor(name, "a", a)
	checkTensor(name, "b", b)
	refuseBoolSub(op, name, a, b)
	outDims := broadcastDims(name, "a", a.Shape().Dimensions, "b", b.Shape().Dimensions)
	dt := op.computeType(name, resultType([]*tensors.Tensor{a, b}, false, false),
		"a "+desc(a, false), "b "+desc(b, false))
	if product(outDims) == 0 {
		return tensors.FromShape(shapes.Make(dt, outDims...))
	}
	return run1(name, "", func(xs []*graph.Node) *graph.Node {
		x := broadcastNode(convertNode(xs[0], dt), outDims)
		y := broadcastNode(convertNode(xs[1], dt), outDims)
		return op.apply(x, y)
	}, a, b)
}

// Add is a + b (torch.add) with PyTorch's broadcasting and type promotion (int64 + float32 →
// float32; for bool tensors it is logical or, as in PyTorch).
func Add(a, b *tensors.Tensor) *tensors.Tensor { return binary(opAdd, a, b) }

// Sub is a - b (torch.sub), broadcasting like PyTorch.
func Sub(a, b *tensors.Tensor) *tensors.Tensor { return binary(opSub, a, b) }

// Mul is a * b (torch.mul): the element-wise product, broadcasting like PyTorch (for bool tensors
// it is logical and).
func Mul(a, b *tensors.Tensor) *tensors.Tensor { return binary(opMul, a, b) }

// Div is a / b (torch.div): true division, broadcasting like PyTorch. Integer (and bool) operands
// divide as float32, so int64 / int64 is float32, as in PyTorch.
func Div(a, b *tensors.Tensor) *tensors.Tensor { return binary(opDiv, a, b) }

// Pow is a ** b (torch.pow) for two tensors, broadcasting like PyTorch.
func Pow(a, b *tensors.Tensor) *tensors.Tensor { return binary(opPow, a, b) }

func binaryScalar(op binOp, name string, a *tensors.Tensor, s float64) *tensors.Tensor {
	checkTensor(name, "a", a)
	refuseBoolSub(op, name, a)
	rt := resultType([]*tensors.Tensor{a}, true, isIntegral(s))
	dt := op.computeType(name, rt, "a "+desc(a, false), "the scalar")
	if op == opPow && !dt.IsFloat() && s < 0 {
		failf(name, "a %s: integers to negative integer powers are not allowed (s=%v); convert with eager.Float",
			desc(a, true), s)
	}
	outDims := dimsOf(a)
	if a.Size() == 0 {
		return tensors.FromShape(shapes.Make(dt, outDims...))
	}
	return run1(name, "", func(xs []*graph.Node) *graph.Node {
		x := convertNode(xs[0], dt)
		y := broadcastNode(xs[1], outDims)
		return op.apply(x, y)
	}, a, scalarTensor(dt, s))
}

// Scalar operations: s acts like a Python number in PyTorch. When s has no fractional part it is
// an int (an int64 tensor stays int64: a * 2), otherwise a float (an int64 tensor becomes float32:
// a * 0.5). s is rounded to the tensor's dtype (float32(s)) before the operation, as PyTorch does.

// AddScalar is a + s.
func AddScalar(a *tensors.Tensor, s float64) *tensors.Tensor {
	return binaryScalar(opAdd, "AddScalar", a, s)
}

// SubScalar is a - s.
func SubScalar(a *tensors.Tensor, s float64) *tensors.Tensor {
	return binaryScalar(opSub, "SubScalar", a, s)
}

// MulScalar is a * s.
func MulScalar(a *tensors.Tensor, s float64) *tensors.Tensor {
	return binaryScalar(opMul, "MulScalar", a, s)
}

// DivScalar is a / s: true division (always a floating-point result), e.g. the
// `attn_scores / d_k**0.5` of scaled dot-product attention.
func DivScalar(a *tensors.Tensor, s float64) *tensors.Tensor {
	return binaryScalar(opDiv, "DivScalar", a, s)
}

// PowScalar is a ** s (torch.pow(a, s)).
func PowScalar(a *tensors.Tensor, s float64) *tensors.Tensor {
	return binaryScalar(opPow, "PowScalar", a, s)
}

// unaryFloat runs fn on a converted to a floating-point dtype (float32 for integers and bools,
// PyTorch's rule for exp, sqrt, …).
func unaryFloat(name string, a *tensors.Tensor, fn func(*graph.Node) *graph.Node) *tensors.Tensor {
	checkTensor(name, "a", a)
	dt := a.DType()
	if !dt.IsFloat() {
		dt = dtypes.Float32
	}
	if a.Size() == 0 {
		return tensors.FromShape(shapes.Make(dt, dimsOf(a)...))
	}
	return run1(name, "", func(xs []*graph.Node) *graph.Node { return fn(convertNode(xs[0], dt)) }, a)
}

// Exp is torch.exp(a), element-wise; integer tensors give float32.
func Exp(a *tensors.Tensor) *tensors.Tensor { return unaryFloat("Exp", a, backend.Exp) }

// Sqrt is torch.sqrt(a), element-wise; integer tensors give float32.
func Sqrt(a *tensors.Tensor) *tensors.Tensor { return unaryFloat("Sqrt", a, graph.Sqrt) }

// Neg is -a. PyTorch refuses it for bool tensors, and so does Neg: use Not.
func Neg(a *tensors.Tensor) *tensors.Tensor {
	checkTensor("Neg", "a", a)
	if a.DType() == dtypes.Bool {
		failf("Neg", "a %s is bool: negation of a bool tensor is not supported; use eager.Not to invert a mask",
			desc(a, false))
	}
	if a.Size() == 0 {
		return a
	}
	return run1("Neg", "", func(xs []*graph.Node) *graph.Node { return graph.Neg(xs[0]) }, a)
}

// Abs is torch.abs(a), element-wise.
func Abs(a *tensors.Tensor) *tensors.Tensor {
	checkTensor("Abs", "a", a)
	if a.DType() == dtypes.Bool || a.Size() == 0 {
		return a
	}
	return run1("Abs", "", func(xs []*graph.Node) *graph.Node { return graph.Abs(xs[0]) }, a)
}

// Not is ~a (torch.logical_not): a bool tensor, true where a is zero/false.
func Not(a *tensors.Tensor) *tensors.Tensor {
	checkTensor("Not", "a", a)
	if a.Size() == 0 {
		return tensors.FromShape(shapes.Make(dtypes.Bool, dimsOf(a)...))
	}
	return run1("Not", "", func(xs []*graph.Node) *graph.Node {
		return graph.LogicalNot(convertNode(xs[0], dtypes.Bool))
	}, a)
}

// Eq is a == value (torch.eq with a number): a bool tensor of a's shape, e.g. `mask == 0`. The
// comparison happens in PyTorch's promoted dtype (an int64 tensor against 0.5 compares as float).
func Eq(a *tensors.Tensor, value float64) *tensors.Tensor {
	checkTensor("Eq", "a", a)
	dt := resultType([]*tensors.Tensor{a}, true, isIntegral(value))
	if a.Size() == 0 {
		return tensors.FromShape(shapes.Make(dtypes.Bool, dimsOf(a)...))
	}
	dims := dimsOf(a)
	return run1("Eq", "", func(xs []*graph.Node) *graph.Node {
		return graph.Equal(convertNode(xs[0], dt), broadcastNode(xs[1], dims))
	}, a, scalarTensor(dt, value))
}

// reduceDims returns the output dimensions of a reduction over dim.
func reduceDims(a *tensors.Tensor, d int, keepDim bool) []int {
	dims := dimsOf(a)
	if a.Rank() == 0 {
		return dims
	}
	if keepDim {
		dims[d] = 1
		return dims
	}
	return slices.Delete(dims, d, d+1)
}

// reduce runs reduceFn over dimension d of a (converted to dt) keeping or dropping it.
func reduce(name string, a *tensors.Tensor, d int, keepDim bool, dt dtypes.DType,
	reduceFn func(x *graph.Node, axes ...int) *graph.Node) *tensors.Tensor {
	outDims := reduceDims(a, d, keepDim)
	return run1(name, fmt.Sprint(d, keepDim), func(xs []*graph.Node) *graph.Node {
		x := convertNode(xs[0], dt)
		if x.Rank() == 0 {
			return x
		}
		return graph.Reshape(reduceFn(x, d), outDims...)
	}, a)
}

// sumType is the dtype of a sum: integers and bools sum as int64 (torch.sum's rule).
func sumType(dt dtypes.DType) dtypes.DType {
	if dt.IsFloat() {
		return dt
	}
	return dtypes.Int64
}

// Sum is a.sum(dim, keepdim): the sum over dimension dim (negative counts from the end). With
// keepDim that dimension stays with size 1, ready to broadcast back against a. Integer and bool
// tensors sum to int64.
func Sum(a *tensors.Tensor, dim int, keepDim bool) *tensors.Tensor {
	checkTensor("Sum", "a", a)
	d := normDim("Sum", "dim", dim, a.Rank(), a)
	dt := sumType(a.DType())
	if a.Size() == 0 {
		return tensors.FromShape(shapes.Make(dt, reduceDims(a, d, keepDim)...)) // Zeros.
	}
	return reduce("Sum", a, d, keepDim, dt, torchSum)
}

// torchSum is ReduceSum over one axis, adding in PyTorch's order where that order is fixed:
// PyTorch's CPU sum over the contiguous (last) dimension of fewer than 8 float elements keeps 4
// partial sums (x0, x1, x2, x3), adds x4, x5, x6 to the first and then the others to it, so it
// computes x0+x4+x5+x6+x1+x2+x3 left to right. The pure-Go backend adds left to right, so
// permuting those elements first reproduces PyTorch bit for bit. Longer rows use vectorized
// cascades whose order depends on the CPU's vector width; they are summed left to right and
// agree with PyTorch to rounding.
func torchSum(x *graph.Node, axes ...int) *graph.Node {
	d := axes[0]
	n := x.Shape().Dimensions[d]
	if x.DType().IsFloat() && d == x.Rank()-1 && n > 4 && n < 8 {
		order := append([]int{0}, 4, 5, 6, 1, 2, 3)
		parts := make([]*graph.Node, 0, n)
		for _, i := range order {
			if i < n {
				parts = append(parts, graph.SliceAxis(x, d, graph.AxisElem(i)))
			}
		}
		x = graph.Concatenate(parts, d)
	}
	return graph.ReduceSum(x, d)
}

// SumAll is a.sum(): the sum of all elements as a 0-d tensor (int64 for integer and bool tensors).
func SumAll(a *tensors.Tensor) *tensors.Tensor {
	checkTensor("SumAll", "a", a)
	dt := sumType(a.DType())
	if a.Size() == 0 {
		return tensors.FromShape(shapes.Make(dt))
	}
	return run1("SumAll", "", func(xs []*graph.Node) *graph.Node {
		x := graph.Reshape(convertNode(xs[0], dt), xs[0].Shape().Size()) // a.sum() reduces the flat tensor.
		return torchSum(x, 0)
	}, a)
}

// Mean is a.mean(dim, keepdim): Sum divided by the size of dim, as PyTorch computes it; like
// PyTorch it needs a floating-point tensor.
func Mean(a *tensors.Tensor, dim int, keepDim bool) *tensors.Tensor {
	checkTensor("Mean", "a", a)
	d := normDim("Mean", "dim", dim, a.Rank(), a)
	if !a.DType().IsFloat() {
		failf("Mean", "a %s: mean needs a floating-point tensor (convert with eager.Float)", desc(a, true))
	}
	if a.Size() == 0 {
		failf("Mean", "a %s is empty", desc(a, false))
	}
	n := 1 // A 0-d tensor is its own mean.
	if a.Rank() > 0 {
		n = a.Shape().Dimensions[d]
	}
	return reduce("Mean", a, d, keepDim, a.DType(), func(x *graph.Node, axes ...int) *graph.Node {
		return graph.Div(torchSum(x, axes...), graph.ConstAsDType(x.Graph(), x.DType(), n))
	})
}

// Max is a.max(dim, keepdim).values (torch.amax): the largest value over dimension dim; NaN
// propagates.
func Max(a *tensors.Tensor, dim int, keepDim bool) *tensors.Tensor {
	checkTensor("Max", "a", a)
	d := normDim("Max", "dim", dim, a.Rank(), a)
	if a.Size() == 0 {
		failf("Max", "a %s is empty: max of an empty dimension has no value", desc(a, false))
	}
	if a.DType() == dtypes.Bool {
		return reduce("Max", a, d, keepDim, dtypes.Bool, graph.LogicalAny)
	}
	return reduce("Max", a, d, keepDim, a.DType(), graph.ReduceMax)
}

// MaxAll is a.max(): the largest element as a 0-d tensor.
func MaxAll(a *tensors.Tensor) *tensors.Tensor {
	checkTensor("MaxAll", "a", a)
	if a.Size() == 0 {
		failf("MaxAll", "a %s is empty: max of an empty tensor has no value", desc(a, false))
	}
	return run1("MaxAll", "", func(xs []*graph.Node) *graph.Node {
		if xs[0].DType() == dtypes.Bool {
			return graph.LogicalAny(xs[0])
		}
		return graph.ReduceAllMax(xs[0])
	}, a)
}

// ArgMax is a.argmax(dim, keepdim): the int64 index of the largest value over dim (the first one
// on ties).
func ArgMax(a *tensors.Tensor, dim int, keepDim bool) *tensors.Tensor {
	checkTensor("ArgMax", "a", a)
	d := normDim("ArgMax", "dim", dim, a.Rank(), a)
	if a.Size() == 0 {
		failf("ArgMax", "a %s is empty", desc(a, false))
	}
	if a.DType() == dtypes.Bool {
		a = Long(a)
	}
	outDims := reduceDims(a, d, keepDim)
	return run1("ArgMax", fmt.Sprint(d, keepDim), func(xs []*graph.Node) *graph.Node {
		if xs[0].Rank() == 0 {
			return graph.ScalarZero(xs[0].Graph(), dtypes.Int64)
		}
		return graph.Reshape(graph.ArgMax(xs[0], d, dtypes.Int64), outDims...)
	}, a)
}

// Softmax is torch.softmax(a, dim): exp(a - max) / sum(exp(a - max)) over dimension dim, the
// numerically stable form PyTorch computes (over the last dimension, like PyTorch's kernel, it
// multiplies by 1/sum). Like PyTorch, -inf entries get weight 0 and a slice that is all -inf
// gives NaN (there is nothing to normalize). a must be floating point. Results agree with
// PyTorch's CPU kernel to 2 ulp: PyTorch's vectorized exp rounds differently from Go's.
func Softmax(a *tensors.Tensor, dim int) *tensors.Tensor {
	checkTensor("Softmax", "a", a)
	d := normDim("Softmax", "dim", dim, a.Rank(), a)
	if !a.DType().IsFloat() {
		failf("Softmax", "a %s: softmax needs a floating-point tensor (convert with eager.Float)", desc(a, true))
	}
	if a.Size() == 0 {
		return a
	}
	dims := dimsOf(a)
	return run1("Softmax", fmt.Sprint(d), func(xs []*graph.Node) *graph.Node {
		x := xs[0]
		if x.Rank() == 0 {
			x = graph.Reshape(x, 1)
			d = 0
		}
		keep := slices.Clone(x.Shape().Dimensions)
		keep[d] = 1
		m := broadcastNode(graph.Reshape(graph.ReduceMax(x, d), keep...), x.Shape().Dimensions)
		e := backend.Exp(graph.Sub(x, m))
		s := broadcastNode(graph.Reshape(graph.ReduceSum(e, d), keep...), x.Shape().Dimensions)
		if d == x.Rank()-1 {
			// PyTorch's last-dimension kernel multiplies by 1/sum; the others divide.
			return graph.Reshape(graph.Mul(e, graph.Div(graph.OnesLike(s), s)), dims...)
		}
		return graph.Reshape(graph.Div(e, s), dims...)
	}, a)
}

// MaskedFill is a.masked_fill(mask, value): a copy of a with value wherever mask is true. mask is
// bool (PyTorch's requirement) or numeric, where nonzero counts as true; it broadcasts against a
// like PyTorch's out-of-place masked_fill (usually mask is [T, T] and a is [B, H, T, T]). value
// is cast to a's dtype (truncated for integer tensors, like PyTorch) and may be math.Inf(-1) for
// float tensors.
func MaskedFill(a, mask *tensors.Tensor, value float64) *tensors.Tensor {
	checkTensor("MaskedFill", "a", a)
	checkTensor("MaskedFill", "mask", mask)
	outDims := broadcastDims("MaskedFill", "a", a.Shape().Dimensions, "mask", mask.Shape().Dimensions)
	dt := a.DType()
	if !dt.IsFloat() && dt != dtypes.Bool && (math.IsInf(value, 0) || math.IsNaN(value) || math.Abs(value) >= 1<<63) {
		failf("MaskedFill", "a %s: value %v cannot be converted to %s without overflow", desc(a, true), value,
			dtypeName(dt))
	}
	if product(outDims) == 0 {
		return tensors.FromShape(shapes.Make(dt, outDims...))
	}
	return run1("MaskedFill", "", func(xs []*graph.Node) *graph.Node {
		x := broadcastNode(xs[0], outDims)
		m := broadcastNode(convertNode(xs[1], dtypes.Bool), outDims)
		v := broadcastNode(xs[2], outDims)
		return graph.Where(m, v, x)
	}, a, mask, scalarTensor(dt, value))
}

// triangle keeps a's elements with (col - row) on the kept side of diagonal, zeroing the rest.
func triangle(name string, a *tensors.Tensor, diagonal int, upper bool) *tensors.Tensor {
	checkTensor(name, "a", a)
	if a.Rank() < 2 {
		failf(name, "a %s: input tensor must have at least 2 dimensions", desc(a, false))
	}
	if a.Size() == 0 {
		return a
	}
	dims := dimsOf(a)
	return run1(name, fmt.Sprint(diagonal), func(xs []*graph.Node) *graph.Node {
		x := xs[0]
		g := x.Graph()
		r := x.Rank()
		mat := shapes.Make(dtypes.Int64, dims[r-2], dims[r-1])
		diff := graph.Sub(graph.Iota(g, mat, 1), graph.Iota(g, mat, 0)) // col - row
		k := graph.Const(g, int64(diagonal))
		var keep *graph.Node
		if upper {
			keep = graph.GreaterOrEqual(diff, k)
		} else {
			keep = graph.LessOrEqual(diff, k)
		}
		keep = broadcastNode(keep, dims)
		return graph.Where(keep, x, graph.ZerosLike(x))
	}, a)
}

// Triu is torch.triu(a, diagonal): the upper triangle of the last two dimensions (elements with
// col - row >= diagonal) kept, the rest zeroed. triu(ones, 1) is the causal mask's "future" part.
func Triu(a *tensors.Tensor, diagonal int) *tensors.Tensor {
	return triangle("Triu", a, diagonal, true)
}

// Tril is torch.tril(a, diagonal): the lower triangle of the last two dimensions (elements with
// col - row <= diagonal) kept, the rest zeroed.
func Tril(a *tensors.Tensor, diagonal int) *tensors.Tensor {
	return triangle("Tril", a, diagonal, false)
}
