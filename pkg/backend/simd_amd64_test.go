//go:build amd64 && goexperiment.simd

package backend

import (
	"os"
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
		{"AVX2 CPU", nil, false, true, true, "AVX2 matmul kernels (built with GOEXPERIMENT=simd on amd64; the CPU has no AVX-512)"},
		{"old CPU", nil, false, false, false, "neither AVX2 nor AVX-512"},
		{"AVX-512 off by env", map[string]string{"GOMLX_SIMD_AVX512": "false"}, true, true, true, "GOMLX_SIMD_AVX512 switches AVX-512 off"},
		{"both off by env", map[string]string{"GOMLX_SIMD_AVX512": "0", "GOMLX_SIMD_AVX2": "off"}, true, true, false, "switch the kernels this CPU has off"},
		{"matmul off", map[string]string{"GOMLX_DOT_MATMUL": "no"}, true, true, false, "GOMLX_DOT_MATMUL"},
		{"AVX2 off, AVX-512 CPU", map[string]string{"GOMLX_SIMD_AVX2": "false"}, true, true, true, "AVX-512"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"GOMLX_DOT_MATMUL", "GOMLX_SIMD_AVX512", "GOMLX_SIMD_AVX2"} {
				t.Setenv(k, tc.env[k])
			}
			on, detail := simdDecide(tc.avx512, tc.avx2)
			if on != tc.wantOn || !strings.Contains(detail, tc.wantInDetail) {
				t.Errorf("simdDecide(avx512=%v, avx2=%v) = %v, %q; want %v with %q", tc.avx512, tc.avx2, on, detail, tc.wantOn, tc.wantInDetail)
			}
		})
	}
}

// TestSIMDOnThisCPU: built with the experiment, on a CPU with AVX2 and nothing switched off,
// the kernels are on.
func TestSIMDOnThisCPU(t *testing.T) {
	for _, k := range []string{"GOMLX_DOT_MATMUL", "GOMLX_SIMD_AVX512", "GOMLX_SIMD_AVX2"} {
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
