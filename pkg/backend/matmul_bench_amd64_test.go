package backend

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/attnbook/attnbook/internal/sgemm"
)

// BenchmarkDotShapes times compute's float32 DotGeneral function against internal/sgemm at the
// shapes attnbook's notebooks, benchmark and GPT use, called as the backend calls them
// (batch, m, n, k; T: right operand [batch, n, k]). sgemmMinFMAs comes from these numbers.
func BenchmarkDotShapes(b *testing.B) {
	be := sgemmBackend(b)
	backendPtr := (*[2]unsafe.Pointer)(unsafe.Pointer(&be))[1]
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct {
		name           string
		batch, m, n, k int
		transposed     bool
	}{
		{"2048cubed", 1, 2048, 2048, 2048, false},
		{"full/linear", 1, 8192, 768, 768, true},
		{"full/scores", 96, 1024, 1024, 64, true},
		{"full/context", 96, 1024, 64, 1024, false},
		{"quick/linear", 1, 256, 256, 256, true},
		{"quick/scores", 8, 128, 128, 64, true},
		{"quick/context", 8, 128, 64, 128, false},
		{"gpt/qkv", 1, 768, 384, 128, true},
		{"gpt/scores", 48, 64, 64, 32, true},
		{"gpt/context", 48, 64, 32, 64, false},
		{"gpt/head", 1, 768, 65, 128, true},
		{"small/64cubed", 1, 64, 64, 64, false},
		{"small/32x64x128", 1, 32, 64, 128, true},
		{"small/heads", 16, 16, 16, 64, true},
		{"tiny/32cubed", 1, 32, 32, 32, false},
		{"tiny/heads", 4, 32, 32, 16, true},
		{"tiny/row", 1, 1, 512, 64, true},
		{"gen/row", 1, 1, 768, 768, true},
		{"gen/rows", 1, 8, 768, 768, false},
	} {
		lhs, rhs := randomFloats(s.batch*s.m*s.k, rng), randomFloats(s.batch*s.n*s.k, rng)
		out := make([]float32, s.batch*s.m*s.n)
		layout := layoutNonTransposed
		if s.transposed {
			layout = layoutTransposed
		}
		flop := 2 * float64(s.batch*s.m*s.n*s.k)
		report := func(b *testing.B) {
			b.ReportMetric(flop*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		}
		b.Run(fmt.Sprintf("%s/compute", s.name), func(b *testing.B) {
			for b.Loop() {
				computeDot[layout](backendPtr, layout, lhs, rhs, s.batch, s.m, s.n, s.k, out, nil)
			}
			report(b)
		})
		b.Run(fmt.Sprintf("%s/sgemm", s.name), func(b *testing.B) {
			for b.Loop() {
				sgemm.Multiply(lhs, rhs, s.transposed, s.batch, s.m, s.n, s.k, out, runtime.GOMAXPROCS(0))
			}
			report(b)
		})
	}
}
