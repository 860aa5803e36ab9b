//go:build !amd64

package sgemm

// Available reports whether [Multiply] can run here: never on this architecture.
func Available() bool { return false }

// Kernel names the micro-kernel [Multiply] uses here: none on this architecture.
func Kernel() string { return "" }

type kernel struct{}

var best *kernel

func (kern *kernel) multiply(lhs, rhs []float32, rhsTransposed bool, batch, m, n, k int, out []float32, workers int) {
}
