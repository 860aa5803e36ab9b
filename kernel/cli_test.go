package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		name     string
		rest     []string
		help, ok bool
	}{
		{args: nil},
		{args: []string{"Bench"}},
		{args: []string{"Setup"}},
		{args: []string{"-v", "setup"}},
		{args: []string{"help"}, help: true},
		{args: []string{"--help"}, help: true},
		{args: []string{"-h", "run"}, help: true},
		{args: []string{"help", "run"}, name: "run", rest: []string{"-h"}, ok: true},
		{args: []string{"help", "doctor"}, name: "doctor", rest: []string{"-h"}, ok: true},
		{args: []string{"help", "nosuch"}, rest: []string{"nosuch"}, help: true},
		{args: []string{"setup"}, name: "setup", ok: true},
		{args: []string{"run", "a.ipynb", "-o", "x"}, name: "run", rest: []string{"a.ipynb", "-o", "x"}, ok: true},
		{args: []string{"test", "-run", "X", "./pkg/..."}, name: "test", rest: []string{"-run", "X", "./pkg/..."}, ok: true},
		{args: []string{"doctor"}, name: "doctor", ok: true},
		{args: []string{"bench", "--quick"}, name: "bench", rest: []string{"--quick"}, ok: true},
		{args: []string{"up", "-port", "9999"}, name: "up", rest: []string{"-port", "9999"}, ok: true},
	} {
		cmd, rest, help, ok := parseCommand(tc.args)
		if cmd.Name != tc.name || help != tc.help || ok != tc.ok || strings.Join(rest, " ") != strings.Join(tc.rest, " ") {
			t.Errorf("parseCommand(%q) = %q %q help=%v ok=%v, want %q %q help=%v ok=%v",
				tc.args, cmd.Name, rest, help, ok, tc.name, tc.rest, tc.help, tc.ok)
		}
	}
}

func TestMainUsage(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		stdout     bool   // usage on stdout (help) rather than stderr
		wantStderr string // also on stderr
	}{
		{args: nil, code: exitUsage},
		{args: []string{"bench", "--frobnicate"}, code: exitUsage, wantStderr: "flag provided but not defined: -frobnicate"},
		{args: []string{"frobnicate", "x"}, code: exitUsage, wantStderr: `unknown subcommand "frobnicate"`},
		{args: []string{"help"}, code: exitOK, stdout: true},
		{args: []string{"run"}, code: exitUsage, wantStderr: "usage: go run ./kernel run"},
		{args: []string{"run", "-bogus", "x.ipynb"}, code: exitUsage, wantStderr: "flag provided but not defined: -bogus"},
		{args: []string{"setup", "extra"}, code: exitUsage, wantStderr: "usage: go run ./kernel setup"},
		{args: []string{"doctor", "extra"}, code: exitUsage, wantStderr: "usage: go run ./kernel doctor"},
		{args: []string{"up", "-port"}, code: exitUsage, wantStderr: "flag needs an argument"},
		// The precise reason, not only the format (issue 26).
		{args: []string{"bench", "--size", "0,0,0,0"}, code: exitUsage, wantStderr: `bench: -size "0,0,0,0": "0" is not a positive number; want b,t,d,h, e.g. 8,1024,768,12`},
		{args: []string{"bench", "--size", "8,1024,768"}, code: exitUsage, wantStderr: `bench: -size "8,1024,768": want 4 numbers, got 3; want b,t,d,h`},
		{args: []string{"bench", "--size", "8,x,768,12"}, code: exitUsage, wantStderr: `"x" is not a positive number`},
		{args: []string{"bench", "--mode", "sideways"}, code: exitUsage, wantStderr: `bench: -mode "sideways": want forward, backward, both or matmul`},
		{args: []string{"bench", "--matmul-sizes", "-5"}, code: exitUsage, wantStderr: `bench: -matmul-sizes "-5": "-5" is not a positive number`},
		{args: []string{"work", "extra"}, code: exitUsage, wantStderr: "usage: go run ./kernel work"},
		{args: []string{"work", "-take"}, code: exitUsage, wantStderr: "flag needs an argument: -take"},
		{args: []string{"work", "-take", "99_nope"}, code: exitFail, wantStderr: "work: workspace.Take: 99_nope.ipynb is not a course notebook (have 00_start_here.ipynb, "},
		{args: []string{"work", "-course", "/no/such/course"}, code: exitFail, wantStderr: "work: workspace: the course folder: open /no/such/course: no such file or directory"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), tc.args, &stdout, &stderr)
		if code != tc.code {
			t.Errorf("Main(%q) = %d, want %d; stderr:\n%s", tc.args, code, tc.code, stderr.String())
		}
		usageOut := stderr.String()
		if tc.stdout {
			usageOut = stdout.String()
		}
		if tc.wantStderr == "" && !strings.Contains(usageOut, "usage: go run ./kernel <subcommand>") {
			t.Errorf("Main(%q): want the usage, got stdout %q stderr %q", tc.args, stdout.String(), stderr.String())
		}
		if tc.wantStderr != "" && !strings.Contains(stderr.String(), tc.wantStderr) {
			t.Errorf("Main(%q): stderr %q lacks %q", tc.args, stderr.String(), tc.wantStderr)
		}
		if tc.wantStderr == "" && !tc.stdout && stdout.Len() > 0 {
			t.Errorf("Main(%q): usage errors go to stderr; stdout got %q", tc.args, stdout.String())
		}
	}
}

// TestSubcommandHelp: `help CMD`, `CMD -h` and `CMD --help` print CMD's own usage and flags to
// stdout and exit 0.
func TestSubcommandHelp(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want []string // on stdout
	}{
		{"run", []string{"usage: go run ./kernel run", "-timeout", "-startup-timeout", "-o string"}},
		{"up", []string{"usage: go run ./kernel up", "-port", "-browser", "-lab"}},
		{"setup", []string{"usage: go run ./kernel setup"}},
		{"doctor", []string{"usage: go run ./kernel doctor", "MISSING"}},
		{"test", []string{"usage: go run ./kernel test", "go help testflag"}},
		{"work", []string{"usage: go run ./kernel work", "-take"}},
	} {
		for _, args := range [][]string{{"help", tc.cmd}, {tc.cmd, "-h"}, {tc.cmd, "--help"}} {
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), args, &stdout, &stderr)
			if code != exitOK {
				t.Errorf("Main(%q) = %d, want 0; stderr:\n%s", args, code, stderr.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("Main(%q) stdout lacks %q:\n%s", args, w, stdout.String())
				}
			}
			if strings.Contains(stdout.String(), "usage: go run ./kernel <subcommand>") {
				t.Errorf("Main(%q) printed the general usage, want %s's own", args, tc.cmd)
			}
		}
	}
	var stdout, stderr bytes.Buffer
	if code := Main(context.Background(), []string{"help", "nosuch"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), `no help for "nosuch"`) {
		t.Errorf("help nosuch = %d, stderr %q; want exit 2 naming it", code, stderr.String())
	}
}

func TestCheckMarks(t *testing.T) {
	// One style: ok in place, -- optional and missing (both XLA plugins alike), MISSING required.
	for _, tc := range []struct {
		c    check
		want string
	}{
		{check{Name: "gonb"}, "ok"},
		{check{Name: "XLA CPU", Optional: true, Problem: "optional: ..."}, "--"},
		{check{Name: "XLA CUDA", Optional: true, Problem: "optional: needs an NVIDIA GPU"}, "--"},
		{check{Name: "gonb", Problem: "want v0.11.5"}, "MISSING"},
	} {
		if got := tc.c.Mark(); got != tc.want {
			t.Errorf("%+v.Mark() = %q, want %q", tc.c, got, tc.want)
		}
	}
}

func TestUsageListsEverySubcommand(t *testing.T) {
	var b bytes.Buffer
	usage(&b)
	for _, name := range []string{"setup", "up", "work", "run", "doctor", "test", "bench"} {
		if !regexp.MustCompile(`\n  ` + name + `[ \n]`).MatchString(b.String()) {
			t.Errorf("usage lacks %q:\n%s", name, b.String())
		}
	}
}

// TestGoRunShowsExitCode: go run exits 1 whatever the command's code, but its last line names the
// code, as the usage and the README say.
func TestGoRunShowsExitCode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the kernel with go run")
	}
	root, err := findRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		last string
	}{
		{[]string{"frobnicate"}, "exit status 2"},
		{[]string{"bench", "--size", "0,0,0,0"}, "exit status 2"},
	} {
		cmd := exec.Command("go", append([]string{"run", "./kernel"}, tc.args...)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("go run ./kernel %q: %v, want go run's exit 1", tc.args, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if got := lines[len(lines)-1]; got != tc.last {
			t.Errorf("go run ./kernel %q: last line %q, want %q; output:\n%s", tc.args, got, tc.last, out)
		}
	}
}
