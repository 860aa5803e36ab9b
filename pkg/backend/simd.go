package backend

import (
	"strings"

	"github.com/gomlx/compute/support/envutil"
)

// Environment variables with which compute's gobackend switches its SIMD matrix products off
// (each "false", "0", "off", …; unset means on), read once when the program starts.
const (
	matmulEnv = envutil.GoBackendDotMatmul   // "GOMLX_GO_DOT_MATMUL": its matmul package (internal/gobackend/dot/matmul.EnabledEnv)
	avx512Env = envutil.GoBackendSIMD_AVX512 // "GOMLX_GO_SIMD_AVX512": the AVX-512 kernels
	avx2Env   = envutil.GoBackendSIMD_AVX2   // "GOMLX_GO_SIMD_AVX2": the AVX2 kernels
)

// ExpGODEBUG is the GODEBUG setting attnbook's programs run with wherever they have the SIMD
// kernels (notebook cells through the kernel spec, in the Docker image too; `kernel test`;
// `kernel bench`): it turns off math.Exp's FMA path. compute v0.1.6's AVX-512/AVX2 matrix kernels
// return without VZEROUPPER, and math.Exp's FMA path mixes VEX-encoded FMAs with SSE
// instructions; on the Intel Xeon this project was measured on, math.Exp on a thread that had run
// a kernel then took 850–920 ns instead of 7 (GoMLX's attention layer, whose softmax calls
// math.Exp per score: about 23 s → 1.2 s forward at b=2 T=1024 d=768 h=12). Without FMA,
// math.Exp takes 7–10 ns in either state. Go reads GODEBUG's cpu options once, at start-up: the
// setting has to be in the environment a program starts with.
const ExpGODEBUG = "cpu.fma=off"

// WithExpGODEBUG is the GODEBUG value godebug (a program's current one, may be "") with
// [ExpGODEBUG] added, unless it already sets cpu.fma either way.
func WithExpGODEBUG(godebug string) string {
	for _, kv := range strings.Split(godebug, ",") {
		if strings.HasPrefix(strings.TrimSpace(kv), "cpu.fma=") {
			return godebug
		}
	}
	if strings.TrimSpace(godebug) == "" {
		return ExpGODEBUG
	}
	return godebug + "," + ExpGODEBUG
}

// SIMD reports whether the pure-Go backend ("go") multiplies matrices with its SIMD kernels in
// this program, and why, in one line for `kernel doctor` and notebook 00, e.g.
// "AVX-512 matmul kernels (built with GOEXPERIMENT=simd on amd64; math.Exp without FMA:
// GODEBUG=cpu.fma=off)" or "off: built without GOEXPERIMENT=simd (…)". With the kernels on and
// math.Exp's FMA path in use, the detail says to set [ExpGODEBUG].
//
// It mirrors exactly how compute's gobackend (v0.1.x, internal/gobackend/dot/matmul) decides:
// the kernels exist only in binaries built for amd64 with GOEXPERIMENT=simd (build constraint
// `amd64 && goexperiment.simd`); they are registered at start-up when $GOMLX_GO_DOT_MATMUL does not switch the
// package off, AVX-512 when the CPU has it and $GOMLX_GO_SIMD_AVX512 allows it, AVX2 likewise.
// on is true when at least one SIMD kernel set is in use. It does not say which backend runs:
// with XLA the kernels are compiled in but unused (see [Chosen]).
func SIMD() (on bool, detail string) { return simdStatus() }

// AVX512 reports whether the pure-Go backend ("go") runs its AVX-512 kernels in this program:
// built with GOEXPERIMENT=simd on amd64, on a CPU with AVX-512, and $GOMLX_GO_SIMD_AVX512 does
// not switch them off (gobackend's IsAVX512Allowed). Elsewhere it uses AVX2 or portable Go.
func AVX512() bool {
	on, _ := readEnvBool(avx512Env)
	return on && cpuAVX512()
}

// readEnvBool is envutil.ReadBool with the value also reported when it is malformed (gobackend
// panics at start-up on such a value; SIMD is only reached if it did not, so this is for tests).
func readEnvBool(name string) (bool, string) {
	v, err := envutil.ReadBool(name, true)
	if err != nil {
		return true, err.Error()
	}
	return v, ""
}
