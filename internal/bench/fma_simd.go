//go:build goexperiment.simd && amd64

package bench

import (
	"runtime"
	"simd/archsimd"
	"sync"
	"time"
)

// measureFMA measures the machine's float32 FMA throughput: GOMAXPROCS goroutines each run
// fmaChains independent chains of fused multiply-adds on the widest vectors the CPU has (16 lanes
// with AVX-512, 8 with AVX2 and FMA; enough chains to fill two FMA pipes of latency 4 to 6) for
// about 200 ms; it returns GFLOP/s counting an FMA as 2 FLOP. Without either it returns 0.
func measureFMA() (float64, string) {
	loop, lanes, what := fmaLoop16, 16, "AVX-512 FMA loop on all GOMAXPROCS threads, best of 3"
	switch {
	case archsimd.X86.AVX512():
	case archsimd.X86.AVX2() && archsimd.X86.FMA():
		loop, lanes, what = fmaLoop8, 8, "AVX2 FMA loop on all GOMAXPROCS threads, best of 3"
	default:
		return 0, ""
	}
	procs := runtime.GOMAXPROCS(0)
	run := func(n int) time.Duration {
		var wg sync.WaitGroup
		start := time.Now()
		for p := range procs {
			wg.Go(func() { fmaSink[p%len(fmaSink)] = loop(n, float32(p+1)*1e-4) })
		}
		wg.Wait()
		return time.Since(start)
	}
	n := 1 << 20
	for run(n) < 50*time.Millisecond { // warm up the clocks and size the run
		n *= 2
	}
	n *= 4
	best := time.Duration(1 << 62)
	for range 3 {
		best = min(best, run(n))
	}
	flop := float64(procs) * float64(n) * fmaChains * float64(lanes) * 2
	return flop / best.Seconds() / 1e9, what
}

const fmaChains = 12

var fmaSink [64]float32

// fmaLoop16 runs n rounds of fmaChains independent FMAs on 16 float32 lanes (AVX-512). The chains
// start from different values so that the compiler cannot merge them.
//
//go:noinline
func fmaLoop16(n int, x float32) float32 {
	b, c := archsimd.BroadcastFloat32x16(0.999), archsimd.BroadcastFloat32x16(1e-3)
	a0, a1, a2 := archsimd.BroadcastFloat32x16(x), archsimd.BroadcastFloat32x16(2*x), archsimd.BroadcastFloat32x16(3*x)
	a3, a4, a5 := archsimd.BroadcastFloat32x16(4*x), archsimd.BroadcastFloat32x16(5*x), archsimd.BroadcastFloat32x16(6*x)
	a6, a7, a8 := archsimd.BroadcastFloat32x16(7*x), archsimd.BroadcastFloat32x16(8*x), archsimd.BroadcastFloat32x16(9*x)
	a9, a10, a11 := archsimd.BroadcastFloat32x16(10*x), archsimd.BroadcastFloat32x16(11*x), archsimd.BroadcastFloat32x16(12*x)
	for range n {
		a0, a1, a2, a3 = a0.MulAdd(b, c), a1.MulAdd(b, c), a2.MulAdd(b, c), a3.MulAdd(b, c)
		a4, a5, a6, a7 = a4.MulAdd(b, c), a5.MulAdd(b, c), a6.MulAdd(b, c), a7.MulAdd(b, c)
		a8, a9, a10, a11 = a8.MulAdd(b, c), a9.MulAdd(b, c), a10.MulAdd(b, c), a11.MulAdd(b, c)
	}
	s := a0.Add(a1).Add(a2).Add(a3).Add(a4).Add(a5).Add(a6).Add(a7).Add(a8).Add(a9).Add(a10).Add(a11)
	var out [16]float32
	s.StoreArray(&out)
	return out[0]
}

// fmaLoop8 is fmaLoop16 on 8 lanes (AVX2 registers, FMA instructions).
//
//go:noinline
func fmaLoop8(n int, x float32) float32 {
	b, c := archsimd.BroadcastFloat32x8(0.999), archsimd.BroadcastFloat32x8(1e-3)
	a0, a1, a2 := archsimd.BroadcastFloat32x8(x), archsimd.BroadcastFloat32x8(2*x), archsimd.BroadcastFloat32x8(3*x)
	a3, a4, a5 := archsimd.BroadcastFloat32x8(4*x), archsimd.BroadcastFloat32x8(5*x), archsimd.BroadcastFloat32x8(6*x)
	a6, a7, a8 := archsimd.BroadcastFloat32x8(7*x), archsimd.BroadcastFloat32x8(8*x), archsimd.BroadcastFloat32x8(9*x)
	a9, a10, a11 := archsimd.BroadcastFloat32x8(10*x), archsimd.BroadcastFloat32x8(11*x), archsimd.BroadcastFloat32x8(12*x)
	for range n {
		a0, a1, a2, a3 = a0.MulAdd(b, c), a1.MulAdd(b, c), a2.MulAdd(b, c), a3.MulAdd(b, c)
		a4, a5, a6, a7 = a4.MulAdd(b, c), a5.MulAdd(b, c), a6.MulAdd(b, c), a7.MulAdd(b, c)
		a8, a9, a10, a11 = a8.MulAdd(b, c), a9.MulAdd(b, c), a10.MulAdd(b, c), a11.MulAdd(b, c)
	}
	s := a0.Add(a1).Add(a2).Add(a3).Add(a4).Add(a5).Add(a6).Add(a7).Add(a8).Add(a9).Add(a10).Add(a11)
	var out [8]float32
	s.StoreArray(&out)
	return out[0]
}
