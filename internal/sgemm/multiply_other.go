//go:build !amd64

package sgemm

// Available reports whether [Multiply] can run here: never on this architecture.
func Available() bool { return false }

type buffers struct{}

func parallel(batch, m, workers int, work func(b, rowStart, rowEnd int, scratch *buffers)) {}

func multiplyRows(lhs, rhs []float32, rhsTransposed bool, m, n, k, rowStart, rowEnd int, out []float32, s *buffers) {
}
