package coursetest

import (
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/attnbook/attnbook/internal/nbrun"
	"github.com/attnbook/attnbook/internal/nbrun/ipynb"
	"github.com/attnbook/attnbook/pkg/backend"
)

func TestStartHere(t *testing.T) {
	r := nbrun.Execute(t, "notebooks/00_start_here.ipynb")
	for _, c := range r.Code() {
		if !c.Executed {
			t.Errorf("cell %d did not run", c.Index)
		}
		if len(c.Errors) > 0 || c.Stderr != "" {
			t.Errorf("cell %d: errors %v, stderr %q", c.Index, c.Errors, c.Stderr)
		}
	}
	CheckOutputWidth(t, r)

	// The first line a student reads: one plain line, the backend and whether the fast kernels are
	// on, as backend.SIMD and backend.Sgemm say in a binary built like the kernel's cells
	// (GOEXPERIMENT=simd in the kernel spec); compared when this test binary is built the same way.
	goCell := r.Find(t, "runtime.Version()")
	first, rest, _ := strings.Cut(goCell.Stdout, "\n")
	m := regexp.MustCompile(`^backend: (.+), fast kernels (on|off \(everything works, more slowly\))$`).FindStringSubmatch(first)
	if m == nil || len(first) > 80 {
		t.Errorf("first line %q: want one plain line (at most 80 characters) \"backend: NAME, fast kernels on|off …\"", first)
	} else {
		wantName, _, _ := strings.Cut(backend.Choose().String(), " — ")
		if "backend: "+m[1] != wantName {
			t.Errorf("first line names %q, want %q", "backend: "+m[1], wantName)
		}
		simd, _ := backend.SIMD()
		if strings.Contains(runtime.Version(), "X:simd") == strings.Contains(rest, "X:simd") && (m[2] == "on") != simd {
			t.Errorf("first line says fast kernels %q; backend.SIMD %v in a binary built the same way", m[2], simd)
		}
	}
	goVersion, _, _ := strings.Cut(runtime.Version(), " ") // the cell's may add " X:simd"
	if want := "; attnbook's packages import fine ($" + backend.EnvVar + " picks another backend)\n"; !strings.HasPrefix(rest, "Go version: "+goVersion) || !strings.HasSuffix(rest, want) {
		t.Errorf("Go cell's second line %q, want \"Go version: %s…%s\"", rest, goVersion, want)
	}

	// Same machine, same rule: the notebook names the backend this process would choose.
	// When this machine would pick the pure-Go backend anyway, the kernel builds cells with -tags
	// noxla (kernel setup), and the line says so instead of "no plugin installed".
	want := backend.Choose().String() + "\n"
	if backend.Choose().Name() == "go" && os.Getenv(backend.EnvVar) == "" {
		want = "backend: go (pure Go) — built without XLA (-tags noxla): no PJRT plugin was installed at setup\n"
	}
	if got := r.Find(t, "fmt.Println(backend.Choose())").Stdout; got != want {
		t.Errorf("backend cell printed %q, want %q", got, want)
	}

	tensorCell := r.Find(t, "tensors.FromValue")
	for _, want := range []string{"shape: (Float32)[2, 3]\n", "(Float32)[2, 3]: [][]float32{{1, 2, 3}, {4, 5, 6}}\n", "tensor([[1., 2., 3.],\n        [4., 5., 6.]])\n"} {
		if !strings.Contains(tensorCell.Stdout, want) {
			t.Errorf("tensor cell printed %q, want it to contain %q", tensorCell.Stdout, want)
		}
	}

	// softmax([1 2 3]) = [0.09003 0.2447 0.6652]; softmax([2 2 0]) = [0.4683 0.4683 0.06338].
	softmaxCell := r.Find(t, "func softmax")
	for _, want := range []string{"tensor([[0.0900, 0.2447, 0.6652],\n        [0.4683, 0.4683, 0.0634]])\n", "row 0 sums to 1.0000\nrow 1 sums to 1.0000\n"} {
		if !strings.Contains(softmaxCell.Stdout, want) {
			t.Errorf("softmax cell printed %q, want it to contain %q", softmaxCell.Stdout, want)
		}
	}

	htmlCell := r.Find(t, "display.Table(weights)")
	if len(htmlCell.HTML) != 1 {
		t.Fatalf("table cell displayed %d HTML outputs, want 1 (outputs: %+v)", len(htmlCell.HTML), htmlCell.Outputs)
	}
	html := htmlCell.HTML[0]
	for _, want := range []string{"<table", "softmax of each row", "torch.Size([2, 3])", ">0.6652</td>", ">0.0634</td>"} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML output %q lacks %q", html, want)
		}
	}
	for _, c := range r.Code() {
		if c.Index != htmlCell.Index && len(c.HTML)+len(c.SVG) > 0 {
			t.Errorf("cell %d displayed a picture; only the table cell should", c.Index)
		}
	}
}

// Committed notebooks carry no outputs: outputs depend on the machine (backend, timings), would
// make every run a diff, and an executed notebook is what `kernel run` writes to out/executed/.
func TestCommittedNotebooksHaveNoOutputs(t *testing.T) {
	for p, nb := range courseNotebooks(t) {
		if cells := nb.CellsWithOutputs(); len(cells) > 0 {
			t.Errorf("%s: cells %v have outputs or execution counts; strip them with:\n\tjupyter nbconvert --clear-output --inplace notebooks/%s", p, cells, p)
		}
		if got := nb.KernelName(); got != "attnbook" {
			t.Errorf("%s: kernelspec %q, want \"attnbook\" (the kernel `go run ./kernel setup` registers)", p, got)
		}
	}
}

// TestRichOutputWaitsForGoNB: GoNB reads a cell's display data asynchronously, and a cell that
// exits right after gonbui.DisplaySVG can lose the picture (CI lost notebook 12's second tile
// picture under load). Notebook cells show pictures through pkg/display, whose Show helpers wait
// until GoNB has taken the output; a cell that calls gonbui's Display functions itself must
// also call gonbui.Sync.
func TestRichOutputWaitsForGoNB(t *testing.T) {
	direct := regexp.MustCompile(`gonbui\.(Display|Update)[A-Za-z]*\(`)
	for name, nb := range courseNotebooks(t) {
		for i, c := range nb.Cells {
			src := string(c.Source)
			if c.CellType == "code" && direct.MatchString(src) && !strings.Contains(src, "gonbui.Sync()") {
				t.Errorf("%s: cell %d (%q) calls %s without gonbui.Sync(): show it with display.ShowSVG / ShowHTML, which wait for GoNB",
					name, i, c.FirstLine(), direct.FindString(src))
			}
		}
	}
}

// TestFoldedBlocksLookClickable: every folded hint or solution in every notebook is summarized as
// notebook 08's are, which the browser test checks in the classic Notebook and JupyterLab (a ▸
// marker, a hand cursor, the link colour, "(click to open)"). A bare <summary> shows in the classic
// Notebook as plain text: nothing says it opens.
func TestFoldedBlocksLookClickable(t *testing.T) {
	summary := regexp.MustCompile(`<summary[^>]*>.*?</summary>`)
	clickable := regexp.MustCompile(`^<summary style="display:list-item;cursor:pointer;color:#0b5cad"><b>[^<]+</b> \(click to open\)</summary>$`)
	folded := 0
	for name, nb := range courseNotebooks(t) {
		for i, c := range nb.Cells {
			if c.CellType != "markdown" {
				continue
			}
			for _, s := range summary.FindAllString(string(c.Source), -1) {
				folded++
				if !clickable.MatchString(s) {
					t.Errorf("%s: cell %d folds a block under %s; write it as notebook 08 does: "+
						`<summary style="display:list-item;cursor:pointer;color:#0b5cad"><b>Hint 1</b> (click to open)</summary>`,
						name, i, s)
				}
			}
		}
	}
	if folded < 20 {
		t.Errorf("%d folded blocks in all notebooks, want notebook 08's ten hints and more: is the pattern still right?", folded)
	}
}

// courseNotebooks loads every notebook in notebooks/, by file name; one that does not load fails
// the test.
func courseNotebooks(t *testing.T) map[string]*ipynb.Notebook {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(nbrun.Root(t), "notebooks", "*.ipynb"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no notebooks found (%v)", err)
	}
	nbs := make(map[string]*ipynb.Notebook, len(paths))
	for _, path := range paths {
		nb, err := ipynb.Load(path)
		if err != nil {
			t.Error(err)
			continue
		}
		nbs[filepath.Base(path)] = nb
	}
	return nbs
}

// TestNotebookFolderHoldsOnlyNotebooks keeps Jupyter's file list to the learning path: every file in
// notebooks/ is a numbered notebook NN_topic.ipynb.
func TestNotebookFolderHoldsOnlyNotebooks(t *testing.T) {
	dir := filepath.Join(nbrun.Root(t), "notebooks")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	numbered := regexp.MustCompile(`^\d\d_[a-z0-9_]+\.ipynb$`)
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir() && (name == "out" || name == ".ipynb_checkpoints" || name == "gpt-checkpoints"):
			// git-ignored work areas: out/ (kernel run -o), Jupyter's own checkpoints, and the
			// trained weights notebook 10 saves for later runs
		case numbered.MatchString(name):
		default:
			t.Errorf("notebooks/%s: only NN_topic.ipynb notebooks belong in notebooks/ (tests go to internal/coursetest)", name)
		}
	}
}

// TestNotebookCodeFitsTheCell: every code cell reads as gofmt writes it, and no code line is longer
// than 100 characters (a URL may be), so that a student reads it in the classic Notebook and in
// JupyterLab without scrolling sideways. A cell is checked as GoNB builds it: its declarations as a
// file, the statements after %% as a function body; a cell with other magics is skipped.
func TestNotebookCodeFitsTheCell(t *testing.T) {
	const maxLine = 100
	checked := 0
	for name, nb := range courseNotebooks(t) {
		for i, c := range nb.Cells {
			if c.CellType != "code" {
				continue
			}
			src := string(c.Source)
			for n, line := range strings.Split(src, "\n") {
				if utf8.RuneCountInString(line) > maxLine && !strings.Contains(line, "://") {
					t.Errorf("%s: cell %d line %d has %d characters, want at most %d: %q",
						name, i, n+1, utf8.RuneCountInString(line), maxLine, line)
				}
			}
			want, ok := gofmtCell(src)
			if !ok {
				continue
			}
			checked++
			if want != src {
				t.Errorf("%s: cell %d (%q) is not as gofmt writes it; want:\n%s", name, i, c.FirstLine(), want)
			}
		}
	}
	if checked < 200 {
		t.Errorf("%d code cells checked with gofmt, want the ~210 without magics: does gofmtCell still parse them?", checked)
	}
}

// gofmtCell returns a GoNB cell as gofmt writes it, or false where the cell has magics other than
// %% or does not parse: declarations before %% are formatted as a file, the statements after it
// as the body of a function.
func gofmtCell(src string) (string, bool) {
	for _, l := range strings.Split(src, "\n") {
		if (strings.HasPrefix(l, "%") && l != "%%") || strings.HasPrefix(l, "!") {
			return "", false
		}
	}
	decl, body, hasBody := strings.Cut("\n"+src, "\n%%\n")
	var out []string
	if strings.TrimSpace(decl) != "" {
		f, err := format.Source([]byte("package main\n" + decl + "\n"))
		if err != nil {
			return "", false
		}
		out = append(out, strings.Trim(strings.TrimPrefix(string(f), "package main\n"), "\n"))
	}
	if hasBody {
		f, err := format.Source([]byte("package main\n\nfunc main() {\n" + body + "\n}\n"))
		if err != nil {
			return "", false
		}
		inner := strings.TrimPrefix(string(f), "package main\n\nfunc main() {\n")
		inner = strings.TrimSuffix(strings.TrimRight(inner, "\n"), "}")
		lines := strings.Split(strings.TrimRight(inner, "\n"), "\n")
		for i, l := range lines {
			lines[i] = strings.TrimPrefix(l, "\t")
		}
		out = append(out, "%%\n"+strings.Join(lines, "\n"))
	}
	return strings.Join(out, "\n\n"), true
}
