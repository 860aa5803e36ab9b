package mhabench

import (
	"testing"
)

// BenchmarkForward times the forward pass of every formulation at the Quick size on the pure-Go
// backend (`go test -bench Forward ./internal/mhabench/`); compilation happens before the timer.
func BenchmarkForward(b *testing.B) { benchmarkMode(b, Forward) }

// BenchmarkForwardBackward times forward + backward (the gradient of the outputs' sum with
// respect to the input and every weight) at the Quick size.
func BenchmarkForwardBackward(b *testing.B) { benchmarkMode(b, Backward) }

func benchmarkMode(b *testing.B, mode Mode) {
	be := testBackend(b)
	s := Quick
	x, w := NewInputs(123, s)
	for _, im := range Impls() {
		b.Run(im.Name, func(b *testing.B) {
			p, err := NewProgram(be, im, mode, w, s)
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			if _, err := p.Time(x); err != nil { // compiles
				b.Skip(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := p.Time(x); err != nil {
					b.Fatal(err)
				}
			}
			flops := s.FLOPs()
			if mode == Backward {
				flops *= 3
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
