package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/attnbook/attnbook/pkg/backend"
)

func cmdTest(ctx context.Context, e *env, args []string) int {
	if len(args) == 1 && wantsHelp(args) {
		fmt.Fprintf(e.Stdout, `usage: go run ./kernel test [GO TEST ARGS]

Runs setup, then go test: ./... unless ARGS name packages, -timeout=75m unless ARGS set one,
GOEXPERIMENT=%s and GODEBUG=%s on amd64 (GoMLX's SIMD kernels, as in the notebooks). ARGS are go test's flags
(go help testflag), e.g. test -run Start ./internal/coursetest/. With CI=true, a setup step that warns
fails the run, and tests that need Jupyter or Docker fail instead of skipping.
`, SIMDExperiment, backend.ExpGODEBUG)
		return exitOK
	}
	warned, err := setup(ctx, e)
	if err != nil {
		fmt.Fprintf(e.Stderr, "test: %v\n", err)
		return exitMissing
	}
	if len(warned) > 0 && os.Getenv("CI") == "true" {
		// A warning leaves a user with a slower or partial setup that every test would still pass
		// on (e.g. cells on the stock compiler when the THP tools did not build): CI fails.
		fmt.Fprintf(e.Stderr, "test: CI=true: setup warned (%s): fix it (see above) before testing\n", strings.Join(warned, ", "))
		return exitMissing
	}
	goArgs := goTestArgs(args)
	fmt.Fprintf(e.Stdout, "test: go %s\n", strings.Join(goArgs, " "))
	cmd := exec.CommandContext(ctx, e.Go.GoBinary(), goArgs...)
	cmd.Dir = e.Root
	cmd.Env = e.Go.Environ() // GOEXPERIMENT=simd and GODEBUG=cpu.fma=off on amd64, as in the notebooks
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, e.Stdout, e.Stderr
	// go test shares the terminal: Ctrl-C reaches it directly, and its summary stays the last output.
	_, err = runChild(cmd, relay{})
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &exitErr):
		if code := exitErr.ExitCode(); code > 0 {
			return code
		}
		return exitFail
	default:
		fmt.Fprintf(e.Stderr, "test: %v\n", err)
		return exitFail
	}
}

// defaultTimeout replaces go test's 10 minutes: executing every notebook and building the
// classroom image (CI) take longer than that on a 2-core machine.
const defaultTimeout = "-timeout=75m"

// goTestArgs is `test` followed by args, with ./... added (before any -args) when args name no
// package, and defaultTimeout unless args set one.
func goTestArgs(args []string) []string {
	out := []string{"test"}
	if !slices.ContainsFunc(args, func(a string) bool {
		return strings.HasPrefix(a, "-timeout") || strings.HasPrefix(a, "--timeout")
	}) {
		out = append(out, defaultTimeout)
	}
	if namesPackages(args) {
		return append(out, args...)
	}
	i := slices.IndexFunc(args, func(a string) bool { return a == "-args" || a == "--args" })
	if i < 0 {
		i = len(args)
	}
	out = append(out, args[:i]...)
	out = append(out, "./...")
	return append(out, args[i:]...)
}

// namesPackages reports whether go test args (before -args) include a package pattern: ".",
// "./x", "../x", "all", "std" or an import path of this module.
func namesPackages(args []string) bool {
	for _, a := range args {
		switch {
		case a == "-args" || a == "--args":
			return false
		case a == "." || a == ".." || a == "all" || a == "std",
			strings.HasPrefix(a, "./"), strings.HasPrefix(a, "../"),
			a == Module, strings.HasPrefix(a, Module+"/"):
			return true
		}
	}
	return false
}
