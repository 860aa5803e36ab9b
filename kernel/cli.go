package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Exit codes of every subcommand.
const (
	exitOK      = 0
	exitFail    = 1 // a cell, a test or a check failed; bad input
	exitUsage   = 2 // unknown subcommand or bad flags
	exitMissing = 3 // something required is not installed (run setup)
)

type command struct {
	Name, Args, Summary string
	Run                 func(ctx context.Context, e *env, args []string) int
}

var commands = []command{
	{"setup", "", "install GoNB, goimports, gopls (pinned) and Jupyter if missing; register the attnbook kernel", cmdSetup},
	{"up", "[-port N] [-browser]", "setup, then start JupyterLab (or the classic Notebook) on your workspace work/ (copies of notebooks/) at 127.0.0.1", cmdUp},
	{"run", "[-o DIR] [-timeout D] NOTEBOOK...", "execute notebooks headless with the attnbook kernel; executed copies go to DIR (out/executed)", cmdRun},
	{"work", "[-take NOTEBOOK] [-course DIR] [-work DIR]", "bring your workspace (work/, copies of notebooks/) up to date with the course; -take: the course's version of one notebook, yours kept aside", cmdWork},
	{"doctor", "", "show versions, the GoMLX backend notebooks get and why, XLA plugins, GPU; exit 3 if something is missing", cmdDoctor},
	{"test", "[GO TEST ARGS]", "setup, then go test (./... unless packages are given), e.g. test -run X ./pkg/...", cmdTest},
	{"bench", "[--quick] [--cells] [--mode forward|backward|both|matmul] [--size b,t,d,h] [--write-docs] ...", "time the multi-head attention formulations against PyTorch (reference BLAS and OpenBLAS), a matrix product against the peak, or notebook cell latency (docs/benchmarks.md; --help for all flags)", cmdBench},
}

// parseCommand finds the subcommand named by args[0]. ok is false for none or an unknown one;
// help is true for help, -h and --help. `help CMD` is CMD's own help: cmd CMD with rest ["-h"].
func parseCommand(args []string) (cmd command, rest []string, help, ok bool) {
	if len(args) == 0 {
		return command{}, nil, false, false
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" {
			if c, _, _, ok := parseCommand(args[1:2]); ok {
				return c, []string{"-h"}, false, true
			}
			return command{}, args[1:], true, false
		}
		return command{}, nil, true, false
	}
	for _, c := range commands {
		if c.Name == args[0] {
			return c, args[1:], false, true
		}
	}
	return command{}, nil, false, false
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: go run ./kernel <subcommand> [flags]")
	fmt.Fprintln(w)
	for _, c := range commands {
		fmt.Fprintf(w, "  %s\n      %s\n", strings.TrimSpace(c.Name+" "+c.Args), c.Summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Start with: go run ./kernel up     Check everything: go run ./kernel test")
	fmt.Fprintln(w, "A subcommand's flags: go run ./kernel help SUBCOMMAND (or SUBCOMMAND -h).")
	fmt.Fprintln(w, "Exit codes: 0 ok, 1 failure, 2 usage, 3 something required is missing (see doctor).")
	fmt.Fprintln(w, "(go run itself exits 1 on any failure; its last line, \"exit status N\", is the code.)")
}

// wantsHelp reports whether a subcommand's args ask for its help (-h, -help or --help before any
// "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// parseFlags parses a subcommand's flags. With -h, -help or --help it prints the subcommand's
// help (fs.Usage) to stdout and returns exitOK; on a bad flag the flag package has printed the
// error and the usage to stderr, and it returns exitUsage. done tells the caller to return code.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (code int, done bool) {
	if wantsHelp(args) {
		errOut := fs.Output()
		fs.SetOutput(stdout)
		fs.Usage()
		fs.SetOutput(errOut)
		return exitOK, true
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage, true
	}
	return exitOK, false
}

// Main runs the command line args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd, rest, help, ok := parseCommand(args)
	if help && len(rest) > 0 {
		fmt.Fprintf(stderr, "kernel: no help for %q: not a subcommand\n\n", rest[0])
		usage(stderr)
		return exitUsage
	}
	if help {
		usage(stdout)
		return exitOK
	}
	if !ok {
		if len(args) > 0 {
			fmt.Fprintf(stderr, "kernel: unknown subcommand %q\n\n", args[0])
		}
		usage(stderr)
		return exitUsage
	}
	e, err := newEnv(ctx, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd.Name, err)
		if strings.Contains(err.Error(), "not on $PATH") {
			return exitMissing
		}
		return exitFail
	}
	return cmd.Run(ctx, e, rest)
}
