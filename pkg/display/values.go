package display

import (
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/dtypes/bfloat16"
	"github.com/gomlx/compute/dtypes/float16"
	"github.com/gomlx/gomlx/core/tensors"
)

// kind groups dtypes by how PyTorch prints them.
type kind int

const (
	kindFloat kind = iota
	kindInt
	kindBool
)

// values is a local, flat, row-major copy of a tensor's data, in the few forms the
// renderers need: every element as float64 (bools as 0/1) plus the exact integers.
type values struct {
	dtype dtypes.DType
	kind  kind
	dims  []int
	f     []float64 // every element; exact for float16/32/64, rounded for huge int64.
	i     []int64   // kindInt (except uint64).
	u     []uint64  // uint64 only.
	b     []bool    // kindBool.
}

// size is the number of elements.
func (v *values) size() int { return len(v.f) }

// intString prints element idx of an integer tensor exactly.
func (v *values) intString(idx int) string {
	if v.u != nil {
		return strconv.FormatUint(v.u[idx], 10)
	}
	return strconv.FormatInt(v.i[idx], 10)
}

// readValues copies t's data. It returns an error (never panics) for a nil, finalized or
// tuple tensor, or a dtype display does not know (complex).
func readValues(t *tensors.Tensor) (v *values, err error) { return readValuesPrefix(t, -1) }

// readValuesPrefix is readValues for the first limit elements only (all when limit < 0);
// dims still describe the whole tensor.
func readValuesPrefix(t *tensors.Tensor, limit int) (v *values, err error) {
	if t == nil {
		return nil, fmt.Errorf("tensor is nil")
	}
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("cannot read tensor: %v", r)
		}
	}()
	shape := t.Shape()
	if shape.IsTuple() {
		return nil, fmt.Errorf("tuple shapes are not tensors: %s", shape)
	}
	v = &values{dtype: shape.DType, dims: append([]int(nil), shape.Dimensions...)}
	n := shape.Size()
	if limit >= 0 && limit < n {
		n = limit
	}
	v.f = make([]float64, n)
	var dtypeErr error
	err = t.ConstFlatData(func(flat any) {
		flat = prefix(flat, n)
		switch data := flat.(type) {
		case []float32:
			v.kind = kindFloat
			for i, x := range data {
				v.f[i] = float64(x)
			}
		case []float64:
			v.kind = kindFloat
			copy(v.f, data)
		case []float16.Float16:
			v.kind = kindFloat
			for i, x := range data {
				v.f[i] = float64(x.Float32())
			}
		case []bfloat16.BFloat16:
			v.kind = kindFloat
			for i, x := range data {
				v.f[i] = float64(x.Float32())
			}
		case []bool:
			v.kind = kindBool
			v.b = append([]bool(nil), data...)
			for i, x := range data {
				if x {
					v.f[i] = 1
				}
			}
		case []int8:
			fillInts(v, data)
		case []int16:
			fillInts(v, data)
		case []int32:
			fillInts(v, data)
		case []int64:
			fillInts(v, data)
		case []uint8:
			fillInts(v, data)
		case []uint16:
			fillInts(v, data)
		case []uint32:
			fillInts(v, data)
		case []uint64:
			v.kind = kindInt
			v.u = append([]uint64(nil), data...)
			for i, x := range data {
				v.f[i] = float64(x)
			}
		default:
			dtypeErr = fmt.Errorf("dtype %s is not supported by display", shape.DType)
		}
	})
	if err == nil {
		err = dtypeErr
	}
	if err != nil {
		return nil, err
	}
	if len(v.f) != n {
		return nil, fmt.Errorf("tensor data has %d elements, shape %s needs %d", len(v.f), shape, n)
	}
	return v, nil
}

// prefix returns the first n elements of a flat data slice.
func prefix(flat any, n int) any {
	rv := reflect.ValueOf(flat)
	if rv.Kind() != reflect.Slice || rv.Len() <= n {
		return flat
	}
	return rv.Slice(0, n).Interface()
}

func fillInts[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32](v *values, data []T) {
	v.kind = kindInt
	v.i = make([]int64, len(data))
	for i, x := range data {
		v.i[i] = int64(x)
		v.f[i] = float64(x)
	}
}

// torchDType names dt the way PyTorch prints it, and reports whether it is one of the
// default dtypes PyTorch leaves out of a repr (float32, int64, bool).
func torchDType(dt dtypes.DType) (name string, isDefault bool) {
	switch dt {
	case dtypes.Float32:
		return "torch.float32", true
	case dtypes.Int64:
		return "torch.int64", true
	case dtypes.Bool:
		return "torch.bool", true
	case dtypes.Float64:
		return "torch.float64", false
	case dtypes.Float16:
		return "torch.float16", false
	case dtypes.BFloat16:
		return "torch.bfloat16", false
	case dtypes.Int32:
		return "torch.int32", false
	case dtypes.Int16:
		return "torch.int16", false
	case dtypes.Int8:
		return "torch.int8", false
	case dtypes.Uint8:
		return "torch.uint8", false
	case dtypes.Uint16:
		return "torch.uint16", false
	case dtypes.Uint32:
		return "torch.uint32", false
	case dtypes.Uint64:
		return "torch.uint64", false
	}
	return "torch." + dt.String(), false
}

// isFinite reports whether x is neither NaN nor ±Inf.
func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
