package main

import (
	"context"

	"github.com/attnbook/attnbook/internal/bench"
)

// cmdBench runs internal/bench in the repository root (out/bench/, docs/benchmarks.md,
// notebooks/ are under it).
func cmdBench(_ context.Context, e *env, args []string) int {
	return bench.Main(e.Root, args, e.Stdout, e.Stderr)
}
