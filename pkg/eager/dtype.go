package eager

import (
	"math"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// category orders dtypes the way PyTorch's type promotion does: bool < integer < floating.
func category(dt dtypes.DType) int {
	switch {
	case dt == dtypes.Bool:
		return 0
	case dt.IsFloat():
		return 2
	default:
		return 1
	}
}

// promoteTypes is torch.promote_types for the supported dtypes: the higher category wins, and
// within a category the wider type.
func promoteTypes(a, b dtypes.DType) dtypes.DType {
	if a == b || b == dtypes.InvalidDType {
		return a
	}
	if a == dtypes.InvalidDType {
		return b
	}
	ca, cb := category(a), category(b)
	switch {
	case ca > cb:
		return a
	case cb > ca:
		return b
	case a.Size() >= b.Size():
		return a
	default:
		return b
	}
}

// combineCategories is PyTorch's combine_categories(higher, lower) from c10's result_type: a
// lower-priority operand (0-d tensor, Python scalar) only changes the result when it is of a
// higher category.
func combineCategories(higher, lower dtypes.DType) dtypes.DType {
	switch {
	case higher == dtypes.InvalidDType:
		return lower
	case higher.IsFloat():
		return higher
	case higher == dtypes.Bool || lower.IsFloat():
		return promoteTypes(higher, lower)
	default:
		return higher
	}
}

// resultType is torch.result_type for tensors (0-d tensors have lower priority than tensors with
// dimensions) and, when hasScalar, one Python number: an int when scalarIsInt, else a float
// (which counts as the default dtype, float32).
func resultType(ts []*tensors.Tensor, hasScalar, scalarIsInt bool) dtypes.DType {
	dimResult, zeroResult, wrapped := dtypes.InvalidDType, dtypes.InvalidDType, dtypes.InvalidDType
	for _, t := range ts {
		if t.Rank() > 0 {
			dimResult = promoteTypes(dimResult, t.DType())
		} else {
			zeroResult = promoteTypes(zeroResult, t.DType())
		}
	}
	if hasScalar {
		wrapped = dtypes.Float32
		if scalarIsInt {
			wrapped = dtypes.Int64
		}
	}
	return combineCategories(dimResult, combineCategories(zeroResult, wrapped))
}

// isIntegral reports whether s behaves as a Python int: finite with no fractional part.
func isIntegral(s float64) bool {
	return !math.IsInf(s, 0) && !math.IsNaN(s) && s == math.Trunc(s) && math.Abs(s) < 1<<63
}

// scalarNode is the Go number s as a 0-d constant of dtype dt (rounded like PyTorch casts a
// Python number to the operation's dtype: to nearest for floats, truncated for integers).
func scalarNode(g *graph.Graph, dt dtypes.DType, s float64) *graph.Node {
	switch {
	case dt == dtypes.Bool:
		return graph.Const(g, s != 0)
	case dt.IsFloat():
		return graph.ConstAsDType(g, dt, s)
	default:
		return graph.ConstAsDType(g, dt, int64(s))
	}
}

// Float is a.float(): a converted to float32 (a itself when it already is float32).
func Float(a *tensors.Tensor) *tensors.Tensor { return convert("Float", a, dtypes.Float32) }

// Long is a.long(): a converted to int64 (a itself when it already is int64); floats are
// truncated toward zero like PyTorch.
func Long(a *tensors.Tensor) *tensors.Tensor { return convert("Long", a, dtypes.Int64) }

// Bool is a.bool(): true where a is nonzero (a itself when it already is bool).
func Bool(a *tensors.Tensor) *tensors.Tensor { return convert("Bool", a, dtypes.Bool) }

// To converts a to dtype dt (a.to(dtype)); a itself when it already has that dtype.
func To(a *tensors.Tensor, dt dtypes.DType) *tensors.Tensor { return convert("To", a, dt) }

func convert(op string, a *tensors.Tensor, dt dtypes.DType) *tensors.Tensor {
	checkTensor(op, "a", a)
	if !isSupported(dt) {
		failf(op, "cannot convert a %s to dtype %s; eager supports bool, int32, int64, float32 and float64",
			desc(a, true), dt)
	}
	if a.DType() == dt {
		return a
	}
	return run1("convert", dt.String(), func(xs []*graph.Node) *graph.Node { return convertNode(xs[0], dt) }, a)
}

func isSupported(dt dtypes.DType) bool {
	for _, s := range supported {
		if s == dt {
			return true
		}
	}
	return false
}

// convertNode converts x to dt inside a graph, with PyTorch's rule for bool: nonzero is true.
func convertNode(x *graph.Node, dt dtypes.DType) *graph.Node {
	if x.DType() == dt {
		return x
	}
	if dt == dtypes.Bool {
		return graph.NotEqual(x, graph.ScalarZero(x.Graph(), x.DType()))
	}
	return graph.ConvertDType(x, dt)
}
