package eager

import (
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

// resetCache drops (and finalizes) every compiled operation, so the next call compiles again.
func resetCache() {
	opCache.Range(func(k, v any) bool {
		if e := v.(*cacheEntry); e.exec != nil {
			e.exec.Finalize()
		}
		opCache.Delete(k)
		return true
	})
}

func benchInputs() (a, b *tensors.Tensor) {
	a = Tensor([][]float64{
		{0.43, 0.15, 0.89}, {0.55, 0.87, 0.66}, {0.57, 0.85, 0.64},
		{0.22, 0.58, 0.33}, {0.77, 0.25, 0.10}, {0.05, 0.80, 0.55},
	})
	return a, T(a)
}

// BenchmarkMatMulCached: one cached eager call, inputs [6 3] @ [3 6] (seed 001's inputs @ inputs.T).
func BenchmarkMatMulCached(b *testing.B) {
	x, y := benchInputs()
	MatMul(x, y) // Compile once.
	b.ResetTimer()
	for b.Loop() {
		MatMul(x, y)
	}
}

// BenchmarkDotCached: the loop body of seed 001's cell [2], x_i.dot(query).
func BenchmarkDotCached(b *testing.B) {
	x, _ := benchInputs()
	xi, q := Index(x, 0), Index(x, 1)
	Dot(xi, q)
	b.ResetTimer()
	for b.Loop() {
		Dot(xi, q)
	}
}

// BenchmarkSoftmaxCached: softmax over the last dimension of a [6 6] tensor.
func BenchmarkSoftmaxCached(b *testing.B) {
	x, y := benchInputs()
	s := MatMul(x, y)
	Softmax(s, -1)
	b.ResetTimer()
	for b.Loop() {
		Softmax(s, -1)
	}
}

// BenchmarkSoftmaxFirstCall: the first call for a shape, building and compiling its graph.
func BenchmarkSoftmaxFirstCall(b *testing.B) {
	x, y := benchInputs()
	s := MatMul(x, y)
	for b.Loop() {
		b.StopTimer()
		resetCache()
		b.StartTimer()
		Softmax(s, -1)
	}
}

// BenchmarkMatMulExactLimit: the largest product of the exact path, [64 64]@[64 64]
// (2^18 multiply-adds summed on the host in PyTorch's order).
func BenchmarkMatMulExactLimit(b *testing.B) {
	x := Reshape(Float(Arange(64*64)), 64, 64)
	MatMul(x, x)
	for b.Loop() {
		MatMul(x, x)
	}
}

// BenchmarkMatMulDotGeneral: the same product through the backend's DotGeneral.
func BenchmarkMatMulDotGeneral(b *testing.B) {
	saved := exactMaxElems
	exactMaxElems = -1
	defer func() { exactMaxElems = saved }()
	x := Reshape(Float(Arange(64*64)), 64, 64)
	MatMul(x, x)
	for b.Loop() {
		MatMul(x, x)
	}
}
