package sgemm

import "testing"

// BenchmarkKernelInCache is the micro-kernel alone on operands that stay in L1: its ceiling.
func BenchmarkKernelInCache(b *testing.B) {
	if !Available() {
		b.Skip()
	}
	a := make([]float32, kc*mr)
	bb := make([]float32, kc*nr)
	c := make([]float32, mr*nr)
	for b.Loop() {
		for range 100 {
			kernel12x32(kc, &a[0], kc, &bb[0], &c[0], nr, true)
		}
	}
	b.ReportMetric(2*float64(mr*nr*kc)*100*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
