// Package sgemm multiplies float32 matrices with an AVX-512 kernel written in Go assembly, for
// GoMLX's pure-Go backend (see pkg/backend's matrix-product hook).
//
// It is the classic blocked algorithm (Goto and van de Geijn; BLIS's five loops), with the left
// operand read in place: the right operand is packed in slivers of kc rows × 32 columns, and a
// 12×32 micro-kernel keeps its output tile in 24 of the 32 ZMM registers while it walks the
// contracting axis, broadcasting 12 rows of the left operand from memory (packing those as well
// cost more than it saved at attention's shapes, where the right operand has 32 to 128 columns:
// BenchmarkDotShapes in pkg/backend). On CPUs without AVX-512 [Available] is false and
// [Multiply] panics: callers keep their own kernels there.
package sgemm

import "fmt"

// Blocking, in float32 elements. A kc × 32 sliver of the right operand (32 KiB) stays in L1 while
// the micro-kernel runs down mc rows × kc of the left one (144 KiB, in L2); nc columns of the
// right operand are packed at a time.
const (
	mr = 12  // micro-kernel rows
	nr = 32  // micro-kernel columns: two ZMM registers
	kc = 256 // contracting-axis block
	mc = 144 // left-operand rows per block, a multiple of mr
	nc = 2048
)

// Multiply sets out[b] = lhs[b] · rhs[b] for every b < batch, all row-major float32:
// lhs is [batch, m, k]; rhs is [batch, k, n], or [batch, n, k] when rhsTransposed; out is
// [batch, m, n] and is overwritten. It runs on up to workers goroutines (at least one).
// It panics when a slice is shorter than its shape or the CPU lacks AVX-512 ([Available]).
func Multiply(lhs, rhs []float32, rhsTransposed bool, batch, m, n, k int, out []float32, workers int) {
	if !Available() {
		panic("sgemm.Multiply: this CPU (or build) has no AVX-512; check sgemm.Available first")
	}
	switch {
	case batch < 0 || m < 0 || n < 0 || k < 0:
		panic(fmt.Sprintf("sgemm.Multiply: negative size in batch=%d m=%d n=%d k=%d", batch, m, n, k))
	case len(lhs) < batch*m*k:
		panic(fmt.Sprintf("sgemm.Multiply: lhs has %d elements, want [%d, %d, %d] = %d", len(lhs), batch, m, k, batch*m*k))
	case len(rhs) < batch*k*n:
		panic(fmt.Sprintf("sgemm.Multiply: rhs has %d elements, want %d×%d×%d = %d", len(rhs), batch, k, n, batch*k*n))
	case len(out) < batch*m*n:
		panic(fmt.Sprintf("sgemm.Multiply: out has %d elements, want [%d, %d, %d] = %d", len(out), batch, m, n, batch*m*n))
	}
	if batch == 0 || m == 0 || n == 0 {
		return
	}
	if k == 0 {
		clear(out[:batch*m*n])
		return
	}
	parallel(batch, m, max(workers, 1), func(b, rowStart, rowEnd int, scratch *buffers) {
		multiplyRows(lhs[b*m*k:(b+1)*m*k], rhs[b*k*n:(b+1)*k*n], rhsTransposed, m, n, k,
			rowStart, rowEnd, out[b*m*n:(b+1)*m*n], scratch)
	})
}
