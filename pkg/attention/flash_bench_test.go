package attention

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/pkg/torchrand"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
)

// flashBenchTokens are the lengths BenchmarkFlashCausal runs: one GPT-2 layer's heads for one
// sequence, `[1, 12, T, 64]`.
var flashBenchTokens = []int{1024, 4096, 16384, 32768}

// chapterMaxBytes is the largest `[B, H, T, T]` float32 tensor the chapter's formulation is run
// with here: its graph holds about four of them at once (scores, masked, scaled, softmax; and
// their gradients backward), and the machines this runs on have 24 GiB or more.
const chapterMaxBytes = 4 << 30

// untimedFrom is the length from which the timed run is the first call (its graph compiled in
// it, a few milliseconds against minutes): no untimed warm-up.
const untimedFrom = 16384

// BenchmarkFlashCausal times the chapter's attention core (Scores, CausalMaskFill, ScaleScores,
// StableSoftmax, ContextVectors) against FlashCausal on q, k, v `[1, 12, T, 64]`, forward and
// forward+backward (the gradient of the output's sum with respect to q, k and v), and reports
// the process's peak resident memory during the timed runs (peak-MiB; Linux: VmHWM reset through
// /proc/self/clear_refs). The chapter is skipped where one `[1, 12, T, T]` float32 tensor is
// over 4 GiB (T = 16k is 12 GiB: the graph holds several), saying how much it would need. From
// T = 16k on, the one timed run is the first (no warm-up: it takes minutes on 2 cores):
//
//	GOEXPERIMENT=simd GODEBUG=cpu.fma=off go test -run XXX -bench FlashCausal -benchtime 1x ./pkg/attention/
func BenchmarkFlashCausal(b *testing.B) {
	const heads, hd = 12, 64
	for _, t := range flashBenchTokens {
		for _, mode := range []string{"forward", "fwd+bwd"} {
			for _, form := range []string{"chapter", "flash"} {
				b.Run(fmt.Sprintf("T=%d/%s/%s", t, mode, form), func(b *testing.B) {
					scores := int64(heads) * int64(t) * int64(t) * 4
					if form == "chapter" && scores > chapterMaxBytes {
						b.Skipf("one [1, %d, %d, %d] float32 tensor is %.1f GiB; the chapter's graph holds several at once",
							heads, t, t, float64(scores)/(1<<30))
					}
					core := flashReference
					if form == "flash" {
						core = FlashCausal
					}
					g := torchrand.New(1)
					q, k, v := g.Randn(1, heads, t, hd), g.Randn(1, heads, t, hd), g.Randn(1, heads, t, hd)
					exec := MustNewExec(testBackend(b), func(q, k, v *Node) []*Node {
						out := core(q, k, v)
						if mode == "forward" {
							return []*Node{out}
						}
						return Gradient(ReduceAllSum(out), q, k, v)
					})
					defer exec.Finalize()
					if t < untimedFrom {
						exec.MustExec(q, k, v) // compile, and a warm-up
					}
					resetPeak()
					b.ResetTimer()
					for range b.N {
						for _, out := range exec.MustExec(q, k, v) {
							out.FinalizeAll()
						}
					}
					b.StopTimer()
					if peak := peakMiB(); peak > 0 {
						b.ReportMetric(peak, "peak-MiB")
					}
				})
			}
		}
	}
}

// resetPeak collects garbage, returns it to the OS and resets the process's peak resident set
// size (VmHWM) to the current one, where Linux allows it.
func resetPeak() {
	runtime.GC()
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// peakMiB is the process's peak resident set size (VmHWM) in MiB, or 0 where unknown.
func peakMiB() float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}
