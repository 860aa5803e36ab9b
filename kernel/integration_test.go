package main

// Integration tests: `kernel run` through real Jupyter (nbclient) and GoNB. Without Jupyter they
// are skipped loudly — unless CI=true, where they fail.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/attnbook/attnbook/internal/nbrun"
	"github.com/attnbook/attnbook/internal/nbrun/ipynb"
	"golang.org/x/mod/modfile"
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
			codeCells = append(codeCells, fmt.Sprint(i+1)) // numbered from 1, markdown cells counted
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
	wrapped := filepath.Join(dir, "wrapped.ipynb")
	makeNotebook(t, wrapped, "%%\n\nos.Exit(4)")

	out := filepath.Join(dir, "out")
	code, stdout, stderr := runKernel(t, "-o", out, compile, panics, good, exits, wrapped)
	if code != exitFail {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFail, stdout, stderr)
	}
	// Cells are numbered from 1, as a reader counts them, and named by their first meaningful line.
	want := []string{
		fmt.Sprintf(`run: FAIL %s cell 2 ("func broken() { fmt.Println(nope) }"): undefined: nope`, compile),
		fmt.Sprintf(`run: FAIL %s cell 1 ("func main() { panic(\"boom\") }"): panic: boom (exit status 2)`, panics),
		fmt.Sprintf(`run: FAIL %s cell 1 ("import \"os\""): exit status 3 — executed copy: `, exits),
		fmt.Sprintf(`run: FAIL %s cell 1 ("os.Exit(4)"): exit status 4 — executed copy: `, wrapped),
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
	// The cell builder's one requirement (thptools reads go.mod files with golang.org/x/mod), at
	// this repository's version, with its go.sum.
	repoMod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.ParseLax("go.mod", repoMod, nil)
	if err != nil {
		t.Fatal(err)
	}
	gomod := "module " + Module + "\n\ngo " + mf.Go.Version + "\n"
	for _, r := range mf.Require {
		if r.Mod.Path == "golang.org/x/mod" {
			gomod += "\nrequire " + r.Mod.Path + " " + r.Mod.Version + "\n"
		}
	}
	writeFile(t, filepath.Join(root, "go.mod"), gomod)
	repoSum, err := os.ReadFile(filepath.Join("..", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "go.sum"), string(repoSum))
	hello := `package hello

func Msg() string { return "%s" }
`
	writeFile(t, filepath.Join(root, "pkg", "hello", "hello.go"), fmt.Sprintf(hello, "v1"))
	// run builds the kernel spec's cell builder (and the packages it imports, with the files they
	// embed) from the checkout it serves.
	var src []string
	for _, pattern := range []string{"cellbuild/*.go", "thptools/*.go", "thptools/*.txt", "linkd/*.go", "linkd/patch/*.txt", "srcedit/*.go", "goenvcache/*.go"} {
		files, err := filepath.Glob(filepath.Join("internal", pattern))
		if err != nil || len(files) == 0 {
			t.Fatalf("kernel/internal/%s: %v", pattern, err)
		}
		src = append(src, files...)
	}
	for _, f := range src {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, "kernel", f), string(data))
	}
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

// leftovers lists what is in a temp folder (run's own, and GoNB's gonb_<id>/ and gonb_pipe_*
// when a kernel leaves them).
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestRunTimeoutCleansUp: a cell past -timeout is interrupted and fails naming the timeout, the
// executed copy keeps what the cell printed, the next notebook still runs, and no gonb_pipe_* or
// gonb_<id> folder is left in the temp folder.
func TestRunTimeoutCleansUp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // run's temp folder, and through it the kernel's
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow.ipynb")
	makeNotebook(t, slow,
		"%%\nfmt.Println(\"first\")",
		"import \"time\"\n\n%%\nfmt.Println(\"sleeping\")\ntime.Sleep(time.Hour)",
		"%%\nfmt.Println(\"never\")")
	good := filepath.Join(dir, "good.ipynb")
	makeNotebook(t, good, "%%\nfmt.Println(\"fine\")")
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runKernel(t, "-o", out, "-timeout", "20s", slow, good)
	if code != exitFail {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFail, stdout, stderr)
	}
	if want := fmt.Sprintf(`run: FAIL %s cell 2 ("import \"time\""): no result after 20s`, slow); !strings.HasPrefix(stderr, want) {
		t.Errorf("stderr:\n%s\nwant prefix:\n%s", stderr, want)
	}
	nb := loadExecuted(t, filepath.Join(out, "slow.ipynb"))
	if got := streams(nb.Cells[1], "stdout"); got != "sleeping\n" {
		t.Errorf("the timed-out cell's output in the executed copy = %q, want %q", got, "sleeping\n")
	}
	if got := streams(loadExecuted(t, filepath.Join(out, "good.ipynb")).Cells[0], "stdout"); got != "fine\n" {
		t.Errorf("the notebook after the timeout printed %q", got)
	}
	if left := leftovers(t, tmp); len(left) > 0 {
		t.Errorf("left behind in $TMPDIR: %q", left)
	}
}

// TestRunRefusesOtherKernels: a Python notebook is refused before anything runs, with a line that
// says which kernel it declares.
func TestRunRefusesOtherKernels(t *testing.T) {
	dir := t.TempDir()
	py := writeFile(t, filepath.Join(dir, "py.ipynb"), `{"cells": [{"cell_type": "code", "metadata": {}, "source": "print(1)", "outputs": [], "execution_count": null}],
 "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}, "nbformat": 4, "nbformat_minor": 5}`)
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"run", "-o", filepath.Join(dir, "out"), py}, &stdout, &stderr)
	want := fmt.Sprintf(`run: %s: declares kernel "python3" (Python 3), language python: kernel run executes Go notebooks with the attnbook kernel only`, py)
	if code != exitFail || !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and prefix:\n%s", code, stderr.String(), want)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("a refused notebook made the output folder")
	}
}

// TestRunInterrupted sends SIGINT to `kernel run` (a separate process, as a user's Ctrl-C) while a
// cell runs: it stops with exit 1, says it was interrupted, writes the executed copy of what ran,
// and leaves no GoNB files behind.
func TestRunInterrupted(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGINT")
	}
	root, err := findRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "kernel")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tmp := t.TempDir()
	dir := t.TempDir()
	slow := filepath.Join(dir, "slow.ipynb")
	makeNotebook(t, slow,
		"%%\nfmt.Println(\"first\")",
		"import \"time\"\n\n%%\nfmt.Println(\"sleeping\")\ntime.Sleep(time.Hour)",
		"%%\nfmt.Println(\"never\")")
	out := filepath.Join(dir, "out")
	cmd := exec.Command(bin, "run", "-o", out, slow)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for !strings.Contains(stdout.String(), "cell  1 ") && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if code := strings.Contains(stdout.String(), "cell  1 "); !code {
		cmd.Process.Kill()
		cmd.Wait()
		if strings.Contains(stderr.String(), "not installed") || strings.Contains(stderr.String(), "nbclient") {
			nbrun.Missing(t, strings.TrimSpace(stderr.String()))
		}
		t.Fatalf("the first cell did not finish within 5 minutes\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	time.Sleep(3 * time.Second) // the second cell is sleeping
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("kernel run did not stop within 90s of SIGINT\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitFail {
		t.Errorf("exit %d after SIGINT, want %d", code, exitFail)
	}
	if want := fmt.Sprintf(`run: FAIL %s cell 2 ("import \"time\""): stopped by SIGINT`, slow); !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr:\n%s\nwant prefix:\n%s", stderr.String(), want)
	}
	if !strings.Contains(stderr.String(), "executed copy of what ran: ") {
		t.Errorf("stderr does not point at the executed copy:\n%s", stderr.String())
	}
	nb := loadExecuted(t, filepath.Join(out, "slow.ipynb"))
	if got := streams(nb.Cells[0], "stdout"); got != "first\n" {
		t.Errorf("executed copy: cell 1 printed %q, want %q", got, "first\n")
	}
	if got := streams(nb.Cells[1], "stdout"); got != "sleeping\n" {
		t.Errorf("executed copy: the interrupted cell printed %q, want %q", got, "sleeping\n")
	}
	if nb.Cells[2].ExecutionCount != nil {
		t.Errorf("executed copy: cell 3 ran after the interrupt")
	}
	if left := leftovers(t, tmp); len(left) > 0 {
		t.Errorf("left behind in $TMPDIR: %q", left)
	}
}

// syncBuffer is a bytes.Buffer that a running command writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
