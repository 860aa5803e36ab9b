package backend

import (
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/graph"
)

// Exp is graph.Exp with PyTorch's float32 results at the edges of the range: exp(x) = +Inf for
// x > 88.72, and subnormal results (down to 1.4e-45) for x between -103.97 and -87.34.
//
// Why: compute v0.1.14's pure-Go backend, built with GOEXPERIMENT=simd, computes float32 Exp
// with a SIMD polynomial that clamps its input at ±88.03 (exp(89) = 1.7e38, not +Inf) and
// flushes subnormal results to 0; it has no switch. The course prints both edges (a naive softmax
// that overflows to NaN; softmax weights of 1e-42), as PyTorch does. Exp computes a float32 x's
// exponential in float64 and rounds once to float32: the correctly rounded result but for the
// rare double rounding, as compute v0.1.6's Exp (float32(math.Exp(float64(x)))) did. Other
// dtypes go to graph.Exp unchanged. The course's exact paths (pkg/eager, the small-size
// softmaxes of pkg/attention) use it; the fused and large-size paths keep the fast one.
func Exp(x *graph.Node) *graph.Node {
	if x.DType() != dtypes.Float32 {
		return graph.Exp(x)
	}
	return graph.ConvertDType(graph.Exp(graph.ConvertDType(x, dtypes.Float64)), dtypes.Float32)
}
