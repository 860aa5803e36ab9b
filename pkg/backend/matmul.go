package backend

import (
	"os"
	"strings"
)

// MatmulEnv switches attnbook's float32 matrix kernels (internal/sgemm, AVX-512 or AVX2) out of the
// pure-Go backend when set to "off" (or "0", "false"): compute's own kernels then run every
// product, as in plain GoMLX. Read when the first "go" backend is made.
const MatmulEnv = "ATTNBOOK_SGEMM"

// sgemmMinFMAs is the smallest product (batch·m·n·k multiply-adds) handed to internal/sgemm;
// below it compute's kernels are as fast or faster (BenchmarkDotShapes in this package, on a
// 2-core Zen 5: 32³ takes 1.8 µs on compute's, 1.9 on sgemm; 64³ 10.8 against 5.3).
const sgemmMinFMAs = 1 << 18

// useSgemm is the rule for a float32 product [batch, m, k]·[batch, k, n]: large enough, and not
// so thin that sgemm's 12×32 tiles would be mostly padding (one row of 768×768: compute's kernel
// 43 µs, sgemm 340; eight rows: 122 against 145).
func useSgemm(batch, m, n, k int) bool {
	return batch*m*n*k >= sgemmMinFMAs && m >= 12 && n >= 16
}

// matmulSwitchedOff reports whether $ATTNBOOK_SGEMM asks for compute's kernels only.
func matmulSwitchedOff() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(MatmulEnv))) {
	case "off", "0", "false", "no":
		return true
	}
	return false
}

// sgemmOff starts sgemmState when the kernel is not in.
const sgemmOff = "attnbook's matrix kernels (internal/sgemm) off: "

// Sgemm reports whether the pure-Go backend runs large float32 matrix products on attnbook's
// kernels (internal/sgemm) in this program, in one clause for `kernel doctor`, notebook 00 and
// the benchmark: e.g. "float32 products of 262144 multiply-adds or more (…) on attnbook's
// AVX-512 (12×32 tiles) kernel (internal/sgemm), …" (the products useSgemm accepts) or
// "attnbook's matrix kernels (internal/sgemm) off: the CPU has neither AVX-512 nor AVX2 with FMA".
// The kernel is put in when the first "go" backend is made (or by this call): on amd64 CPUs
// with AVX-512 or AVX2+FMA, unless $ATTNBOOK_SGEMM is "off"; it needs no GOEXPERIMENT.
func Sgemm() (on bool, detail string) {
	installSgemm()
	return !strings.HasPrefix(sgemmState, sgemmOff), sgemmState
}
