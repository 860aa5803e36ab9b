//go:build !(amd64 && goexperiment.simd)

package backend

import "runtime"

// simdCompiled is true in builds that carry gobackend's SIMD matmul kernels.
const simdCompiled = false

func cpuAVX512() bool { return false }

func simdStatus() (bool, string) {
	if runtime.GOARCH != "amd64" {
		return false, "off: no SIMD matmul kernels for " + runtime.GOARCH + " (portable Go kernels)"
	}
	return false, "off: built without GOEXPERIMENT=simd (portable Go kernels; export GOEXPERIMENT=simd and rebuild)"
}
