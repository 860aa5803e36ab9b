package eager

import (
	"fmt"
	"reflect"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Tensor is torch.tensor(value): a tensor from a Go number or (nested) slice, with PyTorch's
// default dtypes: Go floats become float32 (so []float64{0.43} is float32(0.43), exactly what
// torch.tensor([0.43]) holds), Go ints become int64 and bools stay bool. Nested slices must be
// rectangular.
//
//	inputs := eager.Tensor([][]float64{{0.43, 0.15, 0.89}, {0.55, 0.87, 0.66}}) // float32 [2 3]
func Tensor(value any) *tensors.Tensor {
	if value == nil {
		failf("Tensor", "value is nil")
	}
	if t, ok := value.(*tensors.Tensor); ok {
		checkTensor("Tensor", "value", t)
		return t
	}
	var dims []int
	v := reflect.ValueOf(value)
	for v.Kind() == reflect.Slice || v.Kind() == reflect.Array {
		dims = append(dims, v.Len())
		if v.Len() == 0 {
			break
		}
		v = v.Index(0)
	}
	base := reflect.TypeOf(value)
	for base.Kind() == reflect.Slice || base.Kind() == reflect.Array {
		base = base.Elem()
	}
	var dt dtypes.DType
	switch base.Kind() {
	case reflect.Float32, reflect.Float64:
		dt = dtypes.Float32
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32:
		dt = dtypes.Int64
	case reflect.Bool:
		dt = dtypes.Bool
	default:
		failf("Tensor", "value of type %T: want a number, a bool or (nested) slices of them", value)
	}
	var (
		fs []float32
		is []int64
		bs []bool
	)
	var fill func(v reflect.Value, depth int)
	fill = func(v reflect.Value, depth int) {
		if depth == len(dims) {
			switch dt {
			case dtypes.Float32:
				fs = append(fs, float32(toFloat(v)))
			case dtypes.Int64:
				is = append(is, toInt(v))
			default:
				bs = append(bs, v.Bool())
			}
			return
		}
		if v.Len() != dims[depth] {
			failf("Tensor", "value of type %T is not rectangular: expected a sequence of length %d at dim %d (got %d)",
				value, dims[depth], depth, v.Len())
		}
		for i := range v.Len() {
			fill(v.Index(i), depth+1)
		}
	}
	fill(reflect.ValueOf(value), 0)
	switch dt {
	case dtypes.Float32:
		return tensors.FromFlatDataAndDimensions(nonNil(fs), dims...)
	case dtypes.Int64:
		return tensors.FromFlatDataAndDimensions(nonNil(is), dims...)
	default:
		return tensors.FromFlatDataAndDimensions(nonNil(bs), dims...)
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func toFloat(v reflect.Value) float64 {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return v.Float()
	}
	return float64(toInt(v))
}

func toInt(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return int64(v.Uint())
	}
	return v.Int()
}

// Ones is torch.ones(*dims): a float32 tensor of ones. Like every constructor it panics, naming
// the function and the dims, when a dimension is negative, when the element count overflows
// (Ones(1<<40, 1<<40)) or when the tensor would need more memory than the machine has.
func Ones(dims ...int) *tensors.Tensor { return full("Ones", 1, dims) }

// Zeros is torch.zeros(*dims): a float32 tensor of zeros.
func Zeros(dims ...int) *tensors.Tensor { return full("Zeros", 0, dims) }

// Full is torch.full(dims, value) for a float value: a float32 tensor filled with value. (PyTorch
// infers int64 for a Python int value; for that use eager.Long(eager.Full(…)).)
func Full(value float64, dims ...int) *tensors.Tensor { return full("Full", value, dims) }

func full(op string, value float64, dims []int) *tensors.Tensor {
	checkNewDims(op, "dims", dims, 4, "float32")
	return tensors.FromScalarAndDimensions(float32(value), dims...)
}

// Arange is torch.arange(n): the int64 values 0, 1, …, n-1.
func Arange(n int) *tensors.Tensor {
	if n < 0 {
		failf("Arange", "n=%d: upper bound must be >= 0", n)
	}
	checkSize("Arange", fmt.Sprintf("n=%d", n), []int{n}, 8, "int64")
	data := make([]int64, n)
	for i := range data {
		data[i] = int64(i)
	}
	return tensors.FromFlatDataAndDimensions(data, n)
}

// Item is a.item(): the value of a 0-d (or one-element) tensor as a Go float64 (ints convert
// exactly up to 2^53; bools give 0 or 1).
func Item(a *tensors.Tensor) float64 {
	checkTensor("Item", "a", a)
	if a.Size() != 1 {
		failf("Item", "a %s has %d elements; only a tensor with one element can be converted to a number",
			desc(a, false), a.Size())
	}
	var out float64
	a.MustConstFlatData(func(flat any) {
		v := reflect.ValueOf(flat).Index(0)
		switch v.Kind() {
		case reflect.Bool:
			if v.Bool() {
				out = 1
			}
		case reflect.Float32, reflect.Float64:
			out = v.Float()
		default:
			out = float64(v.Int())
		}
	})
	return out
}

// AllClose is torch.allclose(a, b, rtol, atol): whether |a - b| <= atol + rtol*|b| holds for every
// element (a and b broadcast against each other; equal infinities are close, NaN is never close).
// PyTorch's defaults are rtol=1e-05, atol=1e-08. The test runs in the promoted dtype, float32 for
// float32 tensors, as PyTorch does.
func AllClose(a, b *tensors.Tensor, rtol, atol float64) bool {
	checkTensor("AllClose", "a", a)
	checkTensor("AllClose", "b", b)
	outDims := broadcastDims("AllClose", "a", a.Shape().Dimensions, "b", b.Shape().Dimensions)
	dt := promoteTypes(a.DType(), b.DType())
	if !dt.IsFloat() {
		dt = dtypes.Float64 // Integers and bools compare exactly enough in float64.
	}
	if product(outDims) == 0 {
		return true
	}
	res := run1("AllClose", "", func(xs []*graph.Node) *graph.Node {
		x := broadcastNode(convertNode(xs[0], dt), outDims)
		y := broadcastNode(convertNode(xs[1], dt), outDims)
		rt, at := xs[2], xs[3]
		allowed := graph.Add(broadcastNode(at, outDims), graph.Abs(graph.Mul(broadcastNode(rt, outDims), y)))
		actual := graph.Abs(graph.Sub(x, y))
		close := graph.LogicalOr(graph.Equal(x, y),
			graph.LogicalAnd(graph.IsFinite(actual), graph.LessOrEqual(actual, allowed)))
		return graph.LogicalAll(close)
	}, a, b, scalarTensor(dt, rtol), scalarTensor(dt, atol))
	return Item(res) != 0
}

// String formats a small tensor's values plainly for quick looks and tests: "[[1 2 3] [4 5 7]]"
// (Go's %v of the nested slices), "35" for a 0-d tensor. pkg/display prints like PyTorch.
func String(a *tensors.Tensor) string {
	checkTensor("String", "a", a)
	return fmt.Sprint(a.Value())
}
