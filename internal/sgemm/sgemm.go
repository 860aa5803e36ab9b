// Package sgemm multiplies float32 matrices with micro-kernels written in Go assembly, AVX-512 and
// AVX2, for GoMLX's pure-Go backend (see pkg/backend's matrix-product hook).
//
// It is the classic blocked algorithm (Goto and van de Geijn; BLIS's five loops), with the left
// operand read in place: the right operand is packed in slivers of kc rows × nr columns, and a
// micro-kernel keeps an mr × nr output tile in registers while it walks the contracting axis,
// broadcasting mr rows of the left operand from memory (packing those as well cost more than it
// saved at attention's shapes, where the right operand has 32 to 128 columns: BenchmarkDotShapes
// in pkg/backend). With AVX-512 the tile is 12×32 (24 of the 32 ZMM registers), with AVX2 and FMA
// 6×16 (12 of the 16 YMM registers); $GOMLX_GO_SIMD_AVX512=false and $GOMLX_GO_SIMD_AVX2=false switch
// them off as they switch off GoMLX's own. On other CPUs [Available] is false and [Multiply]
// panics: callers keep their own kernels there.
package sgemm

import "fmt"

// Blocking, in float32 elements. A kc × 32 sliver of the right operand (32 KiB) stays in L1 while
// the micro-kernel runs down mc rows × kc of the left one (144 KiB, in L2); nc columns of the
// right operand are packed at a time.
const (
	kc = 256  // contracting-axis block
	mc = 144  // left-operand rows per block, a multiple of the kernels' rows (12, 6)
	nc = 2048 // right-operand columns packed at a time, a multiple of the kernels' columns
)

// Multiply sets out[b] = lhs[b] · rhs[b] for every b < batch, all row-major float32:
// lhs is [batch, m, k]; rhs is [batch, k, n], or [batch, n, k] when rhsTransposed; out is
// [batch, m, n] and is overwritten. It runs on up to workers goroutines (at least one).
// It panics when a slice is shorter than its shape or the CPU has neither kernel ([Available]).
func Multiply(lhs, rhs []float32, rhsTransposed bool, batch, m, n, k int, out []float32, workers int) {
	if !Available() {
		panic("sgemm.Multiply: this CPU (or build) has neither AVX-512 nor AVX2 with FMA; check sgemm.Available first")
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
	best.multiply(lhs, rhs, rhsTransposed, batch, m, n, k, out, max(workers, 1))
}
