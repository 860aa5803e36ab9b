package eager

import (
	"fmt"
	"math"
	"reflect"
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
			// The dimension counted from the right (-1 the last), as broadcasting aligns them.
			failf(op, "%s %s and %s %s don't broadcast: sizes %d and %d at dimension %d differ and neither is 1",
				aName, dimsStr(a), bName, dimsStr(b), da, db, i-rank)
		}
	}
	checkSize(op, fmt.Sprintf("%s %s and %s %s broadcast to %v", aName, dimsStr(a), bName, dimsStr(b), out), out, 1, "")
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

// elemCount returns the number of elements of dims (dimensions < 0 are skipped) and whether it
// fits in an int; a dimension 0 makes it 0 whatever the others are.
func elemCount(dims []int) (n int, ok bool) {
	n, ok = 1, true
	for _, d := range dims {
		if d == 0 {
			return 0, true
		}
	}
	for _, d := range dims {
		if d < 0 {
			continue
		}
		if n > math.MaxInt/d {
			ok = false
		}
		n *= d
	}
	return n, ok
}

// checkNewDims panics unless a tensor of dims and elemBytes bytes per element can exist:
// no negative dimension, an element count that fits in an int (without it the count wraps and
// the tensor silently holds no elements) and fewer bytes than the machine's memory. arg names
// the argument in the message.
func checkNewDims(op, arg string, dims []int, elemBytes int, dtype string) {
	for i, d := range dims {
		if d < 0 {
			failf(op, "%s %v: dimension %d is negative (%d)", arg, dims, i, d)
		}
	}
	checkSize(op, arg+" "+dimsStr(dims), dims, elemBytes, dtype)
}

// checkSize panics when a tensor of dims (described by what) would have more elements than an
// int counts, or need more memory than the machine has.
func checkSize(op, what string, dims []int, elemBytes int, dtype string) {
	n, ok := elemCount(dims)
	if !ok {
		log2 := 0.0
		for _, d := range dims {
			log2 += math.Log2(float64(d))
		}
		failf(op, "%s: %.3g elements (about 2^%.0f) are more than a tensor can hold (at most 2^63-1)",
			what, math.Exp2(log2), log2)
	}
	mem := totalMemory()
	if mem > 0 && n > 0 && uint64(n) > mem/uint64(elemBytes) {
		elems := fmt.Sprintf("%d elements", n)
		if dtype != "" {
			elems = fmt.Sprintf("%d %s elements", n, dtype)
		}
		failf(op, "%s: %s need %s, more than this machine's %s of memory",
			what, elems, byteSize(float64(n)*float64(elemBytes)), byteSize(float64(mem)))
	}
}

// byteSize formats a number of bytes: "4.0 TiB", "7.7 GiB", "512 B".
func byteSize(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}

// FirstDifference finds where got and want disagree, for a check that should say more than "not
// equal": the index (row-major, e.g. [1 0]) of the first element that AllClose(got, want, rtol,
// atol) would reject, with both values in float64. Unlike AllClose, the shapes must be equal: it
// panics naming both shapes when they differ (compare shapes first). found is false when every
// element is close. The comparison is in float64 (AllClose's runs in the promoted dtype, so a
// difference within float32 rounding of the tolerance may be judged differently).
func FirstDifference(got, want *tensors.Tensor, rtol, atol float64) (index []int, g, w float64, found bool) {
	checkTensor("FirstDifference", "got", got)
	checkTensor("FirstDifference", "want", want)
	if !slices.Equal(got.Shape().Dimensions, want.Shape().Dimensions) {
		failf("FirstDifference", "got %s and want %s have different shapes", desc(got, false), desc(want, false))
	}
	gv, wv := float64s(got), float64s(want)
	for k := range gv {
		x, y := gv[k], wv[k]
		diff := math.Abs(x - y)
		if x == y || (!math.IsNaN(diff) && !math.IsInf(diff, 0) && diff <= atol+rtol*math.Abs(y)) {
			continue
		}
		dims := got.Shape().Dimensions
		index = make([]int, len(dims))
		for i, rem := len(dims)-1, k; i >= 0; i-- {
			index[i] = rem % dims[i]
			rem /= dims[i]
		}
		return index, x, y, true
	}
	return nil, 0, 0, false
}

// float64s copies t's elements (row-major) as float64: bools as 0 and 1.
func float64s(t *tensors.Tensor) []float64 {
	out := make([]float64, 0, t.Size())
	t.MustConstFlatData(func(flat any) {
		v := reflect.ValueOf(flat)
		for i := range v.Len() {
			e := v.Index(i)
			switch e.Kind() {
			case reflect.Bool:
				out = append(out, map[bool]float64{false: 0, true: 1}[e.Bool()])
			case reflect.Float32, reflect.Float64:
				out = append(out, e.Float())
			default:
				out = append(out, float64(e.Int()))
			}
		}
	})
	return out
}
