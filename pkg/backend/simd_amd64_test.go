//go:build amd64 && goexperiment.simd

package backend

import (
	"math"
	"os"
	"runtime"
	"simd/archsimd"
	"strings"
	"testing"
)

// TestSIMDDecide walks gobackend's registration rule through CPUs and environments.
func TestSIMDDecide(t *testing.T) {
	for _, tc := range []struct {
		name         string
		env          map[string]string
		avx512, avx2 bool
		wantOn       bool
		wantInDetail string
	}{
		{"AVX-512 CPU", nil, true, true, true, "AVX-512 matmul kernels"},
		{"AVX2 CPU", nil, false, true, true, "AVX2 matmul kernels (built with GOEXPERIMENT=simd on amd64; the CPU has no AVX-512; math.Exp without FMA: GODEBUG=cpu.fma=off)"},
		{"old CPU", nil, false, false, false, "neither AVX2 nor AVX-512"},
		{"AVX-512 off by env", map[string]string{"GOMLX_GO_SIMD_AVX512": "false"}, true, true, true, "GOMLX_GO_SIMD_AVX512 switches AVX-512 off"},
		{"both off by env", map[string]string{"GOMLX_GO_SIMD_AVX512": "0", "GOMLX_GO_SIMD_AVX2": "off"}, true, true, false, "switch the kernels this CPU has off"},
		{"matmul off", map[string]string{"GOMLX_GO_DOT_MATMUL": "no"}, true, true, false, "GOMLX_GO_DOT_MATMUL"},
		{"AVX2 off, AVX-512 CPU", map[string]string{"GOMLX_GO_SIMD_AVX2": "false"}, true, true, true, "AVX-512"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"GOMLX_GO_DOT_MATMUL", "GOMLX_GO_SIMD_AVX512", "GOMLX_GO_SIMD_AVX2"} {
				t.Setenv(k, tc.env[k])
			}
			on, detail := simdDecide(tc.avx512, tc.avx2, false)
			if on != tc.wantOn || !strings.Contains(detail, tc.wantInDetail) {
				t.Errorf("simdDecide(avx512=%v, avx2=%v) = %v, %q; want %v with %q", tc.avx512, tc.avx2, on, detail, tc.wantOn, tc.wantInDetail)
			}
			if _, withFMA := simdDecide(tc.avx512, tc.avx2, true); tc.wantOn && !strings.Contains(withFMA, "set GODEBUG=cpu.fma=off") {
				t.Errorf("simdDecide with math.Exp's FMA path: %q does not say to set GODEBUG=cpu.fma=off", withFMA)
			}
		})
	}
}

// TestSIMDOnThisCPU: built with the experiment, on a CPU with AVX2 and nothing switched off,
// the kernels are on.
func TestSIMDOnThisCPU(t *testing.T) {
	for _, k := range []string{"GOMLX_GO_DOT_MATMUL", "GOMLX_GO_SIMD_AVX512", "GOMLX_GO_SIMD_AVX2"} {
		if v := os.Getenv(k); v != "" {
			t.Skipf("$%s=%q is set", k, v)
		}
	}
	on, detail := SIMD()
	if want := archsimd.X86.AVX2() || archsimd.X86.AVX512(); on != want {
		t.Errorf("SIMD() = %v, %q; this CPU has AVX2=%v AVX-512=%v", on, detail, archsimd.X86.AVX2(), archsimd.X86.AVX512())
	}
	if archsimd.X86.AVX512() && !strings.HasPrefix(detail, "AVX-512") {
		t.Errorf("SIMD detail %q on an AVX-512 CPU", detail)
	}
}

// TestExpGODEBUGInCI: `kernel test` (and so .ci/run) runs go test with GODEBUG=cpu.fma=off where it
// builds the SIMD kernels, so math.Exp here takes its path without FMA.
func TestExpGODEBUGInCI(t *testing.T) {
	if os.Getenv("CI") != "true" {
		t.Skip("CI=true only: outside CI go test runs with the caller's GODEBUG")
	}
	if archsimd.X86.FMA() {
		t.Errorf("GODEBUG=%q: math.Exp keeps its FMA path; kernel test must add %s", os.Getenv("GODEBUG"), ExpGODEBUG)
	}
}

// BenchmarkExpAfterSIMD times math.Exp on a thread whose vector registers' upper halves a 512-bit
// operation left dirty, as gobackend's matrix kernels leave them: about 920 ns on the Intel Xeon
// this project was measured on, 7–9 ns with GODEBUG=cpu.fma=off (compare the two runs).
//
//	GOEXPERIMENT=simd go test ./pkg/backend -run '^$' -bench ExpAfterSIMD
//	GOEXPERIMENT=simd GODEBUG=cpu.fma=off go test ./pkg/backend -run '^$' -bench ExpAfterSIMD
func BenchmarkExpAfterSIMD(b *testing.B) {
	if !archsimd.X86.AVX512() {
		b.Skip("needs AVX-512")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var v [16]float32
	x := archsimd.LoadFloat32x16Array(&v)
	x.MulAdd(x, x).StoreArray(&v)
	s := 0.0
	for i := 0; b.Loop(); i++ {
		s += math.Exp(-float64(i%50) * 0.01)
	}
	expSink = s
}

var expSink float64

// TestAVX512 follows the CPU and $GOMLX_GO_SIMD_AVX512, as gobackend's IsAVX512Allowed does.
func TestAVX512(t *testing.T) {
	t.Setenv("GOMLX_GO_SIMD_AVX512", "")
	if got, want := AVX512(), archsimd.X86.AVX512(); got != want {
		t.Errorf("AVX512() = %v on a CPU whose AVX512() is %v", got, want)
	}
	t.Setenv("GOMLX_GO_SIMD_AVX512", "false")
	if AVX512() {
		t.Error("AVX512() with GOMLX_GO_SIMD_AVX512=false = true, want false")
	}
}
