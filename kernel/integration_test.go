package main

// Integration tests: `kernel run` through real Jupyter (nbclient) and GoNB. Without Jupyter they
// are skipped loudly — unless CI=true, where they fail.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
	"github.com/attnbook/attnbook/internal/nbrun/ipynb"
)

// runKernel runs `kernel run args...` in-process from the working directory.
func runKernel(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(context.Background(), append([]string{"run"}, args...), &out, &errOut)
	if code == exitMissing {
		nbrun.Missing(t, strings.TrimSpace(errOut.String()))
	}
	return code, out.String(), errOut.String()
}

// makeNotebook writes a notebook for the attnbook kernel with the given code cells.
func makeNotebook(t *testing.T, path string, sources ...string) []byte {
	t.Helper()
	var cells []map[string]any
	for i, src := range sources {
		cells = append(cells, map[string]any{"cell_type": "code", "id": fmt.Sprintf("c%d", i), "metadata": map[string]any{},
			"source": src, "outputs": []any{}, "execution_count": nil})
	}
	data, err := json.MarshalIndent(map[string]any{
		"cells": cells, "nbformat": 4, "nbformat_minor": 5,
		"metadata": map[string]any{"kernelspec": map[string]any{"name": KernelName, "display_name": KernelDisplayName, "language": "go"}},
	}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(data))
	return data
}

func loadExecuted(t *testing.T, path string) *ipynb.Notebook {
	t.Helper()
	nb, err := ipynb.Load(path)
	if err != nil {
		t.Fatalf("executed copy: %v", err)
	}
	return nb
}

func streams(c ipynb.Cell, name string) string {
	var s string
	for _, o := range c.Outputs {
		if o.OutputType == "stream" && o.Name == name {
			s += string(o.Text)
		}
	}
	return s
}

func TestRunStartHereNotebook(t *testing.T) {
	root, err := findRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "notebooks", "00_start_here.ipynb")
	before, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, stderr := runKernel(t, "-o", out, src)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if after, _ := os.ReadFile(src); !bytes.Equal(before, after) {
		t.Errorf("kernel run changed the source notebook")
	}
	nb := loadExecuted(t, filepath.Join(out, "00_start_here.ipynb"))
	timing := regexp.MustCompile(`(?m)^  cell +(\d+) +\d+\.\d\ds  \S`)
	lines := timing.FindAllStringSubmatch(stdout, -1)
	var codeCells []string
	for i, c := range nb.Cells {
		if c.CellType == "code" {
			codeCells = append(codeCells, fmt.Sprint(i))
			if c.ExecutionCount == nil || len(c.Outputs) == 0 {
				t.Errorf("executed copy: cell %d has no outputs", i)
			}
		}
	}
	var timed []string
	for _, l := range lines {
		timed = append(timed, l[1])
	}
	if strings.Join(timed, ",") != strings.Join(codeCells, ",") {
		t.Errorf("timed cells %v, want every code cell %v; stdout:\n%s", timed, codeCells, stdout)
	}
	if !strings.Contains(stdout, "run: ok ") || stderr != "" {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}

func TestRunFailingCells(t *testing.T) {
	dir := t.TempDir()
	compile := filepath.Join(dir, "compile.ipynb")
	srcBytes := makeNotebook(t, compile,
		"%%\nfmt.Println(\"before\")",
		"func broken() { fmt.Println(nope) }",
		"%%\nfmt.Println(\"after\")")
	panics := filepath.Join(dir, "panics.ipynb")
	makeNotebook(t, panics, "func main() { panic(\"boom\") }")
	exits := filepath.Join(dir, "exits.ipynb")
	makeNotebook(t, exits, "import \"os\"\n\nfunc main() { os.Exit(3) }")
	good := filepath.Join(dir, "good.ipynb")
	makeNotebook(t, good, "%%\nfmt.Println(\"fine\")")

	out := filepath.Join(dir, "out")
	code, stdout, stderr := runKernel(t, "-o", out, compile, panics, good, exits)
	if code != exitFail {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFail, stdout, stderr)
	}
	want := []string{
		fmt.Sprintf(`run: FAIL %s cell 1 ("func broken() { fmt.Println(nope) }"): undefined: nope`, compile),
		fmt.Sprintf(`run: FAIL %s cell 0 ("func main() { panic(\"boom\") }"): panic: boom (exit status 2)`, panics),
		fmt.Sprintf(`run: FAIL %s cell 0 ("import \"os\""): exit status 3 — executed copy: `, exits),
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) != len(want) {
		t.Fatalf("stderr has %d lines, want one per failing notebook:\n%s", len(lines), stderr)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("stderr line %d:\n  %s\nwant prefix:\n  %s", i, lines[i], w)
		}
	}
	if after, _ := os.ReadFile(compile); !bytes.Equal(after, srcBytes) {
		t.Errorf("the failing notebook's source changed")
	}

	nb := loadExecuted(t, filepath.Join(out, "compile.ipynb"))
	if got := streams(nb.Cells[0], "stdout"); got != "before\n" {
		t.Errorf("cell 0 printed %q", got)
	}
	if len(nb.Cells[1].Outputs) == 0 || nb.Cells[1].Outputs[len(nb.Cells[1].Outputs)-1].OutputType != "error" {
		t.Errorf("cell 1 outputs %+v: want an error", nb.Cells[1].Outputs)
	}
	if nb.Cells[2].ExecutionCount != nil || len(nb.Cells[2].Outputs) > 0 {
		t.Errorf("cell 2 ran after the failure")
	}
	if got := streams(loadExecuted(t, filepath.Join(out, "good.ipynb")).Cells[0], "stdout"); got != "fine\n" {
		t.Errorf("the good notebook printed %q (a failing notebook must not stop the others)", got)
	}
}

// TestEditsUnderPkgShowOnNextCell uses a stand-in repository (same module path, one package):
// a cell edits pkg/hello through $ATTNBOOK_ROOT, and the next cell in the same kernel sees it.
func TestEditsUnderPkgShowOnNextCell(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "go.mod"), "module "+Module+"\n\ngo 1.24\n")
	hello := `package hello

func Msg() string { return "%s" }
`
	writeFile(t, filepath.Join(root, "pkg", "hello", "hello.go"), fmt.Sprintf(hello, "v1"))
	nbPath := filepath.Join(root, "notebooks", "edit.ipynb")
	makeNotebook(t, nbPath,
		"import \"github.com/attnbook/attnbook/pkg/hello\"\n\n%%\nfmt.Println(hello.Msg())",
		fmt.Sprintf("import (\n\t\"os\"\n\t\"path/filepath\"\n)\n\n%%%%\nfmt.Println(os.Getenv(%q))\n"+
			"if err := os.WriteFile(filepath.Join(os.Getenv(%q), \"pkg\", \"hello\", \"hello.go\"), []byte(%q), 0o644); err != nil {\n\tpanic(err)\n}",
			RootEnv, RootEnv, fmt.Sprintf(hello, "v2")),
		"%%\nfmt.Println(hello.Msg())")
	t.Chdir(root)
	code, stdout, stderr := runKernel(t, "notebooks/edit.ipynb")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	nb := loadExecuted(t, filepath.Join(root, "out", "executed", "edit.ipynb"))
	for i, want := range []string{"v1\n", root + "\n", "v2\n"} {
		if got := streams(nb.Cells[i], "stdout"); got != want {
			t.Errorf("cell %d printed %q, want %q", i, got, want)
		}
	}
}
