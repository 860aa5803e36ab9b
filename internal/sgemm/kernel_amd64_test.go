package sgemm

import (
	"os"
	"testing"

	"golang.org/x/sys/cpu"
)

// kernels are the micro-kernels this CPU can run.
func kernels() []*kernel {
	var out []*kernel
	if cpu.X86.HasAVX512F {
		out = append(out, avx512)
	}
	if cpu.X86.HasAVX2 && hasFMA() {
		out = append(out, avx2)
	}
	return out
}

// TestKernels runs each micro-kernel this CPU has (the AVX2 one too where AVX-512 is picked)
// through the whole algorithm against a float64 loop.
func TestKernels(t *testing.T) {
	if len(kernels()) == 0 {
		t.Skip("sgemm: neither AVX-512 nor AVX2+FMA on this CPU")
	}
	for _, kern := range kernels() {
		t.Run(kern.name, func(t *testing.T) { checkMultiply(t, kern.multiply) })
	}
}

// BenchmarkKernelInCache is each micro-kernel alone on operands that stay in L1: its ceiling.
func BenchmarkKernelInCache(b *testing.B) {
	for _, kern := range kernels() {
		b.Run(kern.name, func(b *testing.B) {
			a := make([]float32, kc*kern.mr)
			bb := make([]float32, kc*kern.nr)
			c := make([]float32, kern.mr*kern.nr)
			for b.Loop() {
				for range 100 {
					kern.run(kc, &a[0], kc, &bb[0], &c[0], kern.nr, true)
				}
			}
			b.ReportMetric(2*float64(kern.mr*kern.nr*kc)*100*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkKernels is the 2048³ product with each micro-kernel this CPU has.
func BenchmarkKernels(b *testing.B) {
	for _, kern := range kernels() {
		b.Run(kern.name, func(b *testing.B) { benchMultiply(b, kern.multiply, 2048) })
	}
}

// TestHasFMAIgnoresGODEBUG: attnbook runs with GODEBUG=cpu.fma=off, which clears cpu.X86.HasFMA;
// the AVX2 kernel must stay available on a CPU that has FMA all the same.
func TestHasFMAIgnoresGODEBUG(t *testing.T) {
	if !cpu.X86.HasAVX2 {
		t.Skip("no AVX2")
	}
	if cpu.X86.HasFMA && !hasFMA() {
		t.Fatal("cpu.X86.HasFMA but hasFMA() is false")
	}
	if !hasFMA() {
		t.Skip("this AVX2 CPU has no FMA")
	}
	t.Logf("hasFMA with cpu.X86.HasFMA=%v (GODEBUG=%q)", cpu.X86.HasFMA, os.Getenv("GODEBUG"))
}
