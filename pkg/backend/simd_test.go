package backend

import (
	"runtime"
	"strings"
	"testing"
)

// TestSIMD checks SIMD's one-line answer against how this test binary was built: without
// GOEXPERIMENT=simd on amd64 the kernels cannot be in; with it they are on unless the CPU lacks
// AVX2/AVX-512 or the environment switches them off.
func TestSIMD(t *testing.T) {
	on, detail := SIMD()
	t.Logf("SIMD() = %v, %q", on, detail)
	if detail == "" || strings.Contains(detail, "\n") {
		t.Errorf("SIMD detail %q, want one non-empty line", detail)
	}
	if on == strings.HasPrefix(detail, "off") {
		t.Errorf("SIMD() = %v with detail %q: on and the detail disagree", on, detail)
	}
	switch {
	case !simdCompiled && runtime.GOARCH == "amd64":
		if on || !strings.Contains(detail, "GOEXPERIMENT=simd") {
			t.Errorf("built without GOEXPERIMENT=simd: SIMD() = %v, %q; want off, naming GOEXPERIMENT=simd", on, detail)
		}
	case !simdCompiled:
		if on || !strings.Contains(detail, runtime.GOARCH) {
			t.Errorf("on %s: SIMD() = %v, %q; want off, naming the architecture", runtime.GOARCH, on, detail)
		}
	default:
		if !strings.Contains(detail, "GOEXPERIMENT=simd") {
			t.Errorf("SIMD detail %q does not say it was built with GOEXPERIMENT=simd", detail)
		}
	}
}
