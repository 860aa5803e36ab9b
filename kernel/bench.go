package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"

	"github.com/attnbook/attnbook/internal/bench"
)

// benchChildEnv marks the `go run ./kernel bench` that cmdBench starts, so it runs the benchmark
// itself whatever its environment.
const benchChildEnv = "ATTNBOOK_BENCH_CHILD"

// cmdBench runs internal/bench in the repository root (out/bench/, docs/benchmarks.md,
// notebooks/ are under it). The benchmark runs in this process, so the process must have been
// built and started as the notebooks' programs are: when its GOEXPERIMENT or GODEBUG differs from
// e.Go's (`go run ./kernel bench` without `export GOEXPERIMENT=simd` builds a kernel without
// GoMLX's SIMD kernels), it runs `go run ./kernel bench ARGS` again with e.Go.Environ().
// `--cells` runs here whatever the environment: its timings are the notebooks', executed by this
// binary's own `run` (so /tmp/kernel-old bench --cells times the old build's cells).
//
// Bad flags are reported here, before the child starts, so that their exit code (2) reaches the
// caller: the child's would be go run's 1.
func cmdBench(ctx context.Context, e *env, args []string) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(e.Stderr, "bench: %v\n", err)
		return 1
	}
	if _, _, err := checkGo(e); err != nil && !wantsHelp(args) {
		fmt.Fprintf(e.Stderr, "bench: %v\n", err)
		return exitMissing
	}
	if os.Getenv(benchChildEnv) == "" && (os.Getenv("GOEXPERIMENT") != e.Go.Experiment() || os.Getenv("GODEBUG") != e.Go.GODEBUG()) {
		if o, err := bench.ParseFlags(e.Root, args, io.Discard); err != nil || o.Cells || o.Render {
			return bench.Main(e.Root, self, args, e.Stdout, e.Stderr) // bad flags, help, or nothing timed in this process
		}
		fmt.Fprintf(e.Stderr, "bench: running under GOEXPERIMENT=%s GODEBUG=%s, as notebook cells do: go run ./kernel bench …\n", e.Go.Experiment(), e.Go.GODEBUG())
		cmd := exec.CommandContext(ctx, e.Go.GoBinary(), append([]string{"run", "./kernel", "bench"}, args...)...)
		cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = e.Root, os.Stdin, e.Stdout, e.Stderr
		cmd.Env = append(e.Go.Environ(), benchChildEnv+"=1")
		if err := cmd.Run(); err != nil {
			if exit, ok := err.(*exec.ExitError); ok {
				return exit.ExitCode()
			}
			fmt.Fprintf(e.Stderr, "bench: %v\n", err)
			return 1
		}
		return 0
	}
	return bench.Main(e.Root, self, args, e.Stdout, e.Stderr)
}
