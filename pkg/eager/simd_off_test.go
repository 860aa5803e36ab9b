//go:build !goexperiment.simd

package eager

func simdNote() string { return "built without GOEXPERIMENT=simd" }
