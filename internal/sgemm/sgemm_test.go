package sgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// naive is out = lhs · rhs in float64, one matrix.
func naive(lhs, rhs []float32, transposed bool, m, n, k int) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				r := rhs[p*n+j]
				if transposed {
					r = rhs[j*k+p]
				}
				s += float64(lhs[i*k+p]) * float64(r)
			}
			out[i*n+j] = s
		}
	}
	return out
}

func random(n int, rng *rand.Rand) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// multiplyFunc is Multiply's signature: the public function, or one kernel's path in tests.
type multiplyFunc func(lhs, rhs []float32, rhsTransposed bool, batch, m, n, k int, out []float32, workers int)

func TestMultiply(t *testing.T) {
	if !Available() {
		t.Skip("sgemm: no AVX-512 or AVX2+FMA on this CPU; the pure-Go backend keeps its own kernels here")
	}
	checkMultiply(t, Multiply)
}

// checkMultiply runs mul on odd shapes, both layouts and 1 to 3 workers against a float64 loop.
func checkMultiply(t *testing.T, mul multiplyFunc) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ batch, m, n, k int }{
		{1, 12, 32, 1}, {1, 1, 1, 1}, {1, 13, 33, 7}, {2, 37, 70, 300}, {3, 144, 64, 64},
		{1, 300, 2100, 520}, {5, 11, 31, 257}, {1, 290, 40, 1000}, {4, 128, 128, 64}, {1, 6, 16, 3},
	} {
		for _, transposed := range []bool{false, true} {
			for _, workers := range []int{1, 2, 3} {
				name := fmt.Sprintf("%dx%dx%dx%d/T=%v/w=%d", c.batch, c.m, c.n, c.k, transposed, workers)
				lhs := random(c.batch*c.m*c.k, rng)
				rhs := random(c.batch*c.n*c.k, rng)
				out := random(c.batch*c.m*c.n, rng) // overwritten
				mul(lhs, rhs, transposed, c.batch, c.m, c.n, c.k, out, workers)
				for b := range c.batch {
					want := naive(lhs[b*c.m*c.k:], rhs[b*c.n*c.k:], transposed, c.m, c.n, c.k)
					for i, w := range want {
						got := float64(out[b*c.m*c.n+i])
						// float32 accumulation over k terms of unit variance.
						if tol := 1e-5 * math.Sqrt(float64(c.k)) * 4; math.Abs(got-w) > tol {
							t.Fatalf("%s: out[%d][%d] = %g, want %g (|diff| %g > %g)", name, b, i, got, w, math.Abs(got-w), tol)
						}
					}
				}
			}
		}
	}
}

func TestMultiplyZeroK(t *testing.T) {
	if !Available() {
		t.Skip("sgemm: no AVX-512 on this CPU")
	}
	out := []float32{1, 2, 3, 4}
	Multiply(nil, nil, false, 1, 2, 2, 0, out, 2)
	for i, v := range out {
		if v != 0 {
			t.Fatalf("out[%d] = %g after a product over k = 0, want 0", i, v)
		}
	}
}

func TestMultiplyShortSlice(t *testing.T) {
	if !Available() {
		t.Skip("sgemm: no AVX-512 on this CPU")
	}
	defer func() {
		r := recover()
		if r == nil || fmt.Sprint(r) != "sgemm.Multiply: rhs has 5 elements, want 1×2×3 = 6" {
			t.Fatalf("panic %v, want one naming rhs and its shape", r)
		}
	}()
	Multiply(make([]float32, 4), make([]float32, 5), false, 1, 2, 3, 2, make([]float32, 6), 1)
}

func BenchmarkMultiply(b *testing.B) {
	if !Available() {
		b.Skip("sgemm: no AVX-512 or AVX2+FMA on this CPU")
	}
	for _, n := range []int{1024, 2048} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchMultiply(b, Multiply, n) })
	}
}

// benchMultiply times mul on an [n, n]·[n, n] product with GOMAXPROCS workers.
func benchMultiply(b *testing.B, mul multiplyFunc, n int) {
	rng := rand.New(rand.NewPCG(1, 2))
	lhs, rhs, out := random(n*n, rng), random(n*n, rng), make([]float32, n*n)
	for b.Loop() {
		mul(lhs, rhs, false, 1, n, n, n, out, runtime.GOMAXPROCS(0))
	}
	b.ReportMetric(2*float64(n*n*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
