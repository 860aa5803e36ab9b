package main

import (
	"context"
	"fmt"
	"os"

	"github.com/attnbook/attnbook/internal/mhabench"
)

// cmdBench runs internal/mhabench from the repository root, where its defaults (out/bench/,
// docs/benchmarks.md, notebooks/) point.
func cmdBench(_ context.Context, e *env, args []string) int {
	if err := os.Chdir(e.Root); err != nil {
		fmt.Fprintf(e.Stderr, "bench: %v\n", err)
		return exitFail
	}
	return mhabench.Main(args, e.Stdout, e.Stderr)
}
