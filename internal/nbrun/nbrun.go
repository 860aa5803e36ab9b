// Package nbrun executes notebooks for tests, the way a user does: it runs
// `go run ./kernel run` (Jupyter's nbclient driving the attnbook kernel) on a notebook and reads
// back the executed copy, so a test can assert what each cell printed and displayed.
//
//	r := nbrun.Execute(t, "notebooks/00_start_here.ipynb")
//	c := r.Find(`backend.Choose()`)        // the first code cell whose source contains this
//	if !strings.HasPrefix(c.Stdout, "backend: ") { … }
//
// When Jupyter, nbclient or GoNB is missing, the test is skipped with a loud message — unless
// $CI is "true", where it fails: CI must run the notebooks.
package nbrun

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun/ipynb"
)

// Module is the module whose root the notebooks' paths are relative to.
const Module = "github.com/attnbook/attnbook"

// exitMissing is `kernel run`'s exit code when something it needs is not installed.
const exitMissing = 3

// Result is an executed notebook.
type Result struct {
	Notebook string // the source, as given
	Executed string // path of the executed copy
	Output   string // what `kernel run` printed (per-cell times, errors)
	Cells    []Cell // every cell, in order (markdown ones have no outputs)
}

// Cell is one cell of the executed notebook with its outputs sorted by kind.
type Cell struct {
	Index    int
	Type     string // "code", "markdown" or "raw"
	Source   string
	Executed bool   // it has an execution count: the kernel ran it
	Stdout   string // all stdout stream text
	Stderr   string // all stderr stream text
	HTML     []string
	SVG      []string
	Markdown []string
	Text     []string // text/plain of display_data and execute_result outputs
	Errors   []Error
	Outputs  []ipynb.Output // everything, as stored
}

// Error is an error output of a cell.
type Error struct {
	Name, Value string
	Traceback   []string
}

// Code returns the code cells.
func (r *Result) Code() []Cell {
	var cs []Cell
	for _, c := range r.Cells {
		if c.Type == "code" {
			cs = append(cs, c)
		}
	}
	return cs
}

// Find returns the first code cell whose source contains substr; it fails the test when none does.
func (r *Result) Find(t testing.TB, substr string) Cell {
	t.Helper()
	for _, c := range r.Code() {
		if strings.Contains(c.Source, substr) {
			return c
		}
	}
	t.Fatalf("%s: no code cell contains %q", r.Notebook, substr)
	return Cell{}
}

// Stdout is the stdout of all code cells, in order.
func (r *Result) Stdout() string {
	var b strings.Builder
	for _, c := range r.Code() {
		b.WriteString(c.Stdout)
	}
	return b.String()
}

// Execute runs the notebook (a path relative to the repository root) and fails the test when a
// cell fails. Extra args go to `kernel run` (e.g. "-timeout", "20m").
func Execute(t testing.TB, notebook string, args ...string) *Result {
	t.Helper()
	r, err := Run(t, notebook, args...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return r
}

// Run runs the notebook like Execute but returns a cell error (with the partly executed notebook)
// instead of failing the test, for tests that expect one.
func Run(t testing.TB, notebook string, args ...string) (*Result, error) {
	t.Helper()
	root := Root(t)
	src := notebook
	if !filepath.IsAbs(src) {
		src = filepath.Join(root, notebook)
	}
	outDir := t.TempDir()
	cmdArgs := append([]string{"run", "./kernel", "run", "-o", outDir}, args...)
	cmdArgs = append(cmdArgs, src)
	cmd := exec.Command("go", cmdArgs...)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	output := stdout.String() + stderr.String()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.ExitCode() == exitMissing {
		Missing(t, strings.TrimSpace(stderr.String()))
	}
	r := &Result{Notebook: notebook, Executed: filepath.Join(outDir, filepath.Base(src)), Output: output}
	if nb, loadErr := ipynb.Load(r.Executed); loadErr == nil {
		r.Cells = cells(nb)
	} else if err == nil {
		return nil, fmt.Errorf("kernel run %s succeeded but its executed copy is unreadable: %v\n%s", notebook, loadErr, output)
	}
	if err != nil {
		return r, fmt.Errorf("kernel run %s: %v\n%s", notebook, err, output)
	}
	return r, nil
}

func cells(nb *ipynb.Notebook) []Cell {
	var cs []Cell
	for i, c := range nb.Cells {
		cell := Cell{Index: i, Type: c.CellType, Source: string(c.Source), Executed: c.ExecutionCount != nil, Outputs: c.Outputs}
		for _, o := range c.Outputs {
			switch o.OutputType {
			case "stream":
				if o.Name == "stderr" {
					cell.Stderr += string(o.Text)
				} else {
					cell.Stdout += string(o.Text)
				}
			case "error":
				cell.Errors = append(cell.Errors, Error{Name: o.EName, Value: o.EValue, Traceback: o.Traceback})
			case "display_data", "execute_result", "update_display_data":
				for mime, dst := range map[string]*[]string{"text/html": &cell.HTML, "image/svg+xml": &cell.SVG, "text/markdown": &cell.Markdown, "text/plain": &cell.Text} {
					if s, ok := o.DataText(mime); ok {
						*dst = append(*dst, s)
					}
				}
			}
		}
		cs = append(cs, cell)
	}
	return cs
}

// Missing skips the test loudly because something notebooks need is not installed, or fails it
// when $CI is "true".
func Missing(t testing.TB, why string) {
	t.Helper()
	msg := fmt.Sprintf("notebook test cannot run: %s\n"+
		"Install what is missing with `go run ./kernel setup`, or run the tests with `go run ./kernel test`.", why)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s\n(CI=true: a missing prerequisite is a failure, not a skip)", msg)
	}
	bar := strings.Repeat("!", 78)
	fmt.Fprintf(os.Stderr, "\n%s\n!!! SKIPPING %s: %s\n%s\n\n", bar, t.Name(), msg, bar)
	t.Skipf("\n%s\n!!! SKIPPED: %s\n%s", bar, msg, bar)
}

// Root is the repository root: the nearest directory above the working directory whose go.mod
// declares Module.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if declares(filepath.Join(d, "go.mod"), Module) {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod for %s above %s", Module, dir)
		}
	}
}

// declares reports whether the go.mod file declares module mod.
func declares(gomod, mod string) bool {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == mod {
			return true
		}
	}
	return false
}
