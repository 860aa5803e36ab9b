//go:build amd64 && goexperiment.simd

package backend

import "simd/archsimd"

// simdCompiled is true in builds that carry gobackend's SIMD matmul kernels.
const simdCompiled = true

func simdStatus() (bool, string) {
	return simdDecide(archsimd.X86.AVX512(), archsimd.X86.AVX2(), archsimd.X86.FMA())
}

func cpuAVX512() bool { return archsimd.X86.AVX512() }

// simdDecide is gobackend's registration rule (matmul.init in avx512.go and avx2.go) for a CPU
// with the given features and the current environment. expFMA is whether math.Exp takes its FMA
// path (Go's cpu.X86.HasFMA, which GODEBUG=cpu.fma=off clears): see [ExpGODEBUG].
func simdDecide(cpuAVX512, cpuAVX2, expFMA bool) (bool, string) {
	const built = "built with GOEXPERIMENT=simd on amd64"
	exp := "; math.Exp without FMA: GODEBUG=" + ExpGODEBUG
	if expFMA {
		exp = "; math.Exp with FMA, up to 100x slower after these kernels on Intel CPUs: set GODEBUG=" + ExpGODEBUG
	}
	if on, bad := readEnvBool(matmulEnv); !on {
		return false, "off: $" + matmulEnv + " switches the matmul kernels off (" + built + ")" + bad
	}
	avx512, _ := readEnvBool(avx512Env)
	avx2, _ := readEnvBool(avx2Env)
	switch {
	case avx512 && cpuAVX512:
		return true, "AVX-512 matmul kernels (" + built + exp + ")"
	case avx2 && cpuAVX2:
		why := "the CPU has no AVX-512"
		if cpuAVX512 {
			why = "$" + avx512Env + " switches AVX-512 off"
		}
		return true, "AVX2 matmul kernels (" + built + "; " + why + exp + ")"
	case !cpuAVX512 && !cpuAVX2:
		return false, "off: the CPU has neither AVX2 nor AVX-512 (" + built + ")"
	default:
		return false, "off: $" + avx512Env + "/$" + avx2Env + " switch the kernels this CPU has off (" + built + ")"
	}
}
