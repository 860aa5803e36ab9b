package eager

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
)

// failf panics with an error "eager.<op>: <message>".
func failf(op, format string, args ...any) {
	panic(fmt.Errorf("eager."+op+": "+format, args...))
}

// dimsOf returns t's dimensions (a copy).
func dimsOf(t *tensors.Tensor) []int { return slices.Clone(t.Shape().Dimensions) }

// dimsStr formats dimensions like "[6 3]" ("[]" for a 0-d tensor).
func dimsStr(dims []int) string { return fmt.Sprint(dims) }

// desc describes a tensor for error messages: "[6 3]" or, when withDType, "[6 3] int64".
func desc(t *tensors.Tensor, withDType bool) string {
	if withDType {
		return fmt.Sprintf("%v %s", dimsStr(t.Shape().Dimensions), dtypeName(t.DType()))
	}
	return dimsStr(t.Shape().Dimensions)
}

// shapeList formats several tensors' dimensions: "[[2 3] [3]]".
func shapeList(ts []*tensors.Tensor) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		if t == nil {
			parts[i] = "nil"
			continue
		}
		parts[i] = dimsStr(t.Shape().Dimensions)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// supported lists the dtypes eager operations accept.
var supported = []dtypes.DType{dtypes.Bool, dtypes.Int32, dtypes.Int64, dtypes.Float32, dtypes.Float64}

// dtypeName is the PyTorch-ish name of a dtype: float32, int64, bool.
func dtypeName(dt dtypes.DType) string {
	switch dt {
	case dtypes.Bool:
		return "bool"
	case dtypes.Int32:
		return "int32"
	case dtypes.Int64:
		return "int64"
	case dtypes.Float32:
		return "float32"
	case dtypes.Float64:
		return "float64"
	}
	return strings.ToLower(dt.String())
}

// checkTensor panics unless t is a valid tensor of a supported dtype.
func checkTensor(op, name string, t *tensors.Tensor) {
	if t == nil {
		failf(op, "%s is nil", name)
	}
	if !t.Ok() {
		failf(op, "%s is an invalid (finalized?) tensor", name)
	}
	if !slices.Contains(supported, t.DType()) {
		failf(op, "%s %s has dtype %s; eager supports bool, int32, int64, float32 and float64",
			name, desc(t, false), t.DType())
	}
}

// normDim turns a possibly negative dimension index into [0, rank), the way PyTorch does: for a
// 0-d tensor the valid range is that of rank 1 ([-1, 0]).
func normDim(op, argName string, dim, rank int, t *tensors.Tensor) int {
	r := max(rank, 1)
	if dim < -r || dim >= r {
		failf(op, "%s=%d out of range for rank %d (a is %s; expected %d to %d)",
			argName, dim, rank, desc(t, false), -r, r-1)
	}
	if dim < 0 {
		dim += r
	}
	return dim
}

// normInsertDim normalizes a dimension for operations that insert one (Unsqueeze, Stack): valid
// range [-(rank+1), rank].
func normInsertDim(op, argName string, dim, rank int, what string) int {
	if dim < -(rank+1) || dim > rank {
		failf(op, "%s=%d out of range for %s of rank %d (expected %d to %d)",
			argName, dim, what, rank, -(rank + 1), rank)
	}
	if dim < 0 {
		dim += rank + 1
	}
	return dim
}

// broadcastDims returns the PyTorch broadcast of dimensions a and b: aligned on the right, each
// pair equal or one of them 1. It panics naming op and both shapes when they don't broadcast.
func broadcastDims(op, aName string, a []int, bName string, b []int) []int {
	rank := max(len(a), len(b))
	out := make([]int, rank)
	for i := range rank {
		da, db := 1, 1
		if j := len(a) - rank + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - rank + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db:
			out[i] = da
		case da == 1:
			out[i] = db
		case db == 1:
			out[i] = da
		default:
			failf(op, "%s %s and %s %s don't broadcast: sizes %d and %d differ at dimension %d "+
				"(counted from the right: %d) and neither is 1", aName, dimsStr(a), bName, dimsStr(b),
				da, db, i, i-rank)
		}
	}
	return out
}

// product of dims (1 for none).
func product(dims []int) int {
	p := 1
	for _, d := range dims {
		p *= d
	}
	return p
}

// intsKey formats ints for cache keys and messages.
func intsKey(v []int) string { return fmt.Sprint(v) }
