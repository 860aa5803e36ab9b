package torchrand

import "testing"

// gpt2Small is GPT-2 small's parameter count: the size of a whole-model randn.
const gpt2Small = 124_000_000

func benchFill(b *testing.B, n int, fill func(g *Generator, dst []float32)) {
	dst := make([]float32, n)
	g := New(0)
	b.SetBytes(int64(4 * n))
	b.ResetTimer()
	for range b.N {
		fill(g, dst)
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mfloats/s")
}

// BenchmarkRandn124M: torch.randn(124M) (GPT-2 small's parameter count); target <= 3 s on one core.
func BenchmarkRandn124M(b *testing.B) {
	benchFill(b, gpt2Small, func(g *Generator, d []float32) { g.FillRandn(d) })
}

// BenchmarkRand124M: torch.rand(124M); target >= 200M floats/s.
func BenchmarkRand124M(b *testing.B) {
	benchFill(b, gpt2Small, func(g *Generator, d []float32) { g.FillRand(d) })
}

func BenchmarkRandn1M(b *testing.B) {
	benchFill(b, 1<<20, func(g *Generator, d []float32) { g.FillRandn(d) })
}

func BenchmarkNormal1M(b *testing.B) {
	benchFill(b, 1<<20, func(g *Generator, d []float32) { g.Normal(d, 0.5, 0.02) })
}

func BenchmarkRand1M(b *testing.B) {
	benchFill(b, 1<<20, func(g *Generator, d []float32) { g.FillRand(d) })
}

func BenchmarkUniform1M(b *testing.B) {
	benchFill(b, 1<<20, func(g *Generator, d []float32) { g.Uniform(d, -0.05, 0.05) })
}

func BenchmarkDropoutMask1M(b *testing.B) {
	benchFill(b, 1<<20, func(g *Generator, d []float32) { g.FillDropoutMask(d, 0.1) })
}

// BenchmarkRandnSmall: the double Box–Muller path, 15 values at a time.
func BenchmarkRandnSmall(b *testing.B) {
	benchFill(b, 15, func(g *Generator, d []float32) { g.FillRandn(d) })
}

// BenchmarkRandnTensor124M: Randn returning a [124M] tensor, allocation and zeroing included.
func BenchmarkRandnTensor124M(b *testing.B) {
	g := New(0)
	b.SetBytes(4 * gpt2Small)
	for range b.N {
		g.Randn(gpt2Small)
	}
	b.ReportMetric(float64(gpt2Small)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mfloats/s")
}
