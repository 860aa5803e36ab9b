package eager

import (
	"fmt"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
)

// exactMaxElems bounds the multiply-adds (batch·m·k·n) of a product that eager sums in Go on the
// host, one float32 product at a time, left to right: the order of PyTorch's CPU kernels with the
// reference BLAS, so the seeds' products come out bit for bit on every backend and whatever
// order the backend's own kernels (GoMLX's SIMD matmul, XLA) choose. 2^18 multiply-adds take
// well under a millisecond; larger products go to the backend's DotGeneral. A variable so that
// tests can measure the DotGeneral path at the seeds' sizes.
var exactMaxElems = 1 << 18

// useExact reports whether a product [batch] × [m, k] @ [k, n] takes the exact host path.
func useExact(batchSize, m, k, n int) bool {
	return batchSize*m*k*n <= exactMaxElems
}

// productLayout describes a batched product for the exact path: out[p, i, j] = Σ_l a[p, i, l]·b[p, l, j]
// for every output batch p, with a and b given as flat row-major data.
type productLayout struct {
	m, k, n     int
	aBatch      []int // a's flat batch index for each output batch index
	bBatch      []int // b's flat batch index for each output batch index
	bTransposed bool  // b is stored [n, k] (Linear's weight) instead of [k, n]
	outDims     []int
}

// batchMap returns, for each flat index into the broadcast batch dimensions out, the flat index
// into in (in aligned on the right, its size-1 and missing dimensions repeating).
func batchMap(out, in []int) []int {
	n := product(out)
	res := make([]int, n)
	pad := len(out) - len(in)
	idx := make([]int, len(out))
	for p := range n {
		// in's flat index of the multi-index idx.
		flat := 0
		for d := pad; d < len(out); d++ {
			dim := in[d-pad]
			i := idx[d]
			if dim == 1 {
				i = 0
			}
			flat = flat*dim + i
		}
		res[p] = flat
		for d := len(out) - 1; d >= 0; d-- { // Next multi-index.
			idx[d]++
			if idx[d] < out[d] {
				break
			}
			idx[d] = 0
		}
	}
	return res
}

// exactProduct computes the product described by lay on a and b (same dtype dt) on the host.
func exactProduct(op string, a, b *tensors.Tensor, dt dtypes.DType, lay productLayout) *tensors.Tensor {
	switch dt {
	case dtypes.Float32:
		return tensors.FromFlatDataAndDimensions(productF32(flatOf[float32](a), flatOf[float32](b), lay), lay.outDims...)
	case dtypes.Float64:
		return tensors.FromFlatDataAndDimensions(productF64(flatOf[float64](a), flatOf[float64](b), lay), lay.outDims...)
	case dtypes.Int64:
		return tensors.FromFlatDataAndDimensions(productInt(flatOf[int64](a), flatOf[int64](b), lay), lay.outDims...)
	case dtypes.Int32:
		return tensors.FromFlatDataAndDimensions(productInt(flatOf[int32](a), flatOf[int32](b), lay), lay.outDims...)
	}
	panic(fmt.Errorf("eager.%s: internal error: no exact product for dtype %s", op, dt))
}

// flatOf copies t's values out (from the device, if the backend keeps them there).
func flatOf[T float32 | float64 | int32 | int64](t *tensors.Tensor) []T {
	return tensors.MustCopyFlatData[T](t)
}

// bIndex returns the offset of b[l, j] within one batch of b.
func (lay *productLayout) bIndex(l, j int) int {
	if lay.bTransposed {
		return j*lay.k + l
	}
	return l*lay.n + j
}

// productF32 sums each output's k float32 products in float32, left to right, starting from 0,
// as the reference BLAS sgemm/sdot and PyTorch's own small-matrix loops do. Every product is
// rounded to float32 before it is added (the explicit conversion keeps the Go compiler from
// fusing it into an FMA on arm64 or GOAMD64=v3, which would round once instead of twice).
func productF32(a, b []float32, lay productLayout) []float32 {
	m, k, n := lay.m, lay.k, lay.n
	out := make([]float32, len(lay.aBatch)*m*n)
	for p := range lay.aBatch {
		ao, bo, oo := lay.aBatch[p]*m*k, lay.bBatch[p]*k*n, p*m*n
		for i := range m {
			row := a[ao+i*k : ao+(i+1)*k]
			for j := range n {
				var s float32
				for l, x := range row {
					s += float32(x * b[bo+lay.bIndex(l, j)])
				}
				out[oo+i*n+j] = s
			}
		}
	}
	return out
}

// productF64 is productF32 for float64 (dgemm's order).
func productF64(a, b []float64, lay productLayout) []float64 {
	m, k, n := lay.m, lay.k, lay.n
	out := make([]float64, len(lay.aBatch)*m*n)
	for p := range lay.aBatch {
		ao, bo, oo := lay.aBatch[p]*m*k, lay.bBatch[p]*k*n, p*m*n
		for i := range m {
			row := a[ao+i*k : ao+(i+1)*k]
			for j := range n {
				var s float64
				for l, x := range row {
					s += float64(x * b[bo+lay.bIndex(l, j)])
				}
				out[oo+i*n+j] = s
			}
		}
	}
	return out
}

// productInt is the integer product: exact, wrapping on overflow like PyTorch's.
func productInt[T int32 | int64](a, b []T, lay productLayout) []T {
	m, k, n := lay.m, lay.k, lay.n
	out := make([]T, len(lay.aBatch)*m*n)
	for p := range lay.aBatch {
		ao, bo, oo := lay.aBatch[p]*m*k, lay.bBatch[p]*k*n, p*m*n
		for i := range m {
			row := a[ao+i*k : ao+(i+1)*k]
			for j := range n {
				var s T
				for l, x := range row {
					s += x * b[bo+lay.bIndex(l, j)]
				}
				out[oo+i*n+j] = s
			}
		}
	}
	return out
}
