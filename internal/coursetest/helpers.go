// Package coursetest runs the course notebooks (notebooks/*.ipynb) through the real kernel and
// checks what their cells print and draw: the numbers of the seed documents, the exercises' checks,
// clear errors for bad input. Its tests live here, not beside the notebooks, so that Jupyter's file
// list shows only notebooks; the helpers below are exported for tests in other packages.
package coursetest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
	"github.com/attnbook/attnbook/pkg/backend"
)

// Printed is what one Go cell must print: the cell (found by a line or a fragment of its source)
// and text whose non-blank lines must all be lines of the cell's stdout, in this order.
type Printed struct {
	Cell  string
	Text  string
	Fixes []string // old, new, old, new…: each old is replaced once, where the notebook differs on purpose
}

// Picture is a cell (found like Printed's) that displays HTML or SVG containing every string of
// contains.
type Picture struct {
	Cell     string
	Contains []string
}

// CheckClean fails the test for every code cell that did not run, raised an error or wrote to
// stderr, and stops it when the notebook has no code cells.
func CheckClean(t *testing.T, r *nbrun.Result) {
	t.Helper()
	if len(r.Code()) == 0 {
		t.Fatalf("%s: no code cells", r.Notebook)
	}
	for _, c := range r.Code() {
		if !c.Executed {
			t.Errorf("%s cell %d did not run", r.Notebook, c.Index)
		}
		if len(c.Errors) > 0 || c.Stderr != "" {
			t.Errorf("%s cell %d: errors %v, stderr %q", r.Notebook, c.Index, c.Errors, c.Stderr)
		}
	}
	CheckOutputWidth(t, r)
}

// maxOutputColumns is the widest line a cell may print. The classic Notebook's output area shows
// 113 columns of its monospace font (its page is 1140 px wide at any window of 1200 px or more) and
// breaks a longer line at that column, mid-word (seen in Chromium: "…counted from the righ|t…").
const maxOutputColumns = 110

// CheckOutputWidth fails for every line of a code cell's printed text (stdout, and the text/plain
// of its results) wider than maxOutputColumns, but in the cells whose source contains one of
// samples: they print a model's generated text, whose lines are the model's.
func CheckOutputWidth(t *testing.T, r *nbrun.Result, samples ...string) {
	t.Helper()
	for _, w := range wideLines(r, samples) {
		t.Errorf("%s, want at most %d columns: the classic Notebook breaks it mid-word", w, maxOutputColumns)
	}
}

// wideLines describes each line wider than maxOutputColumns that r's code cells print, but those
// whose source contains one of samples.
func wideLines(r *nbrun.Result, samples []string) []string {
	var wide []string
	for _, c := range r.Code() {
		if slices.ContainsFunc(samples, func(s string) bool { return strings.Contains(c.Source, s) }) {
			continue
		}
		for _, text := range append([]string{c.Stdout}, c.Text...) {
			for line := range strings.Lines(text) {
				line = strings.TrimSuffix(line, "\n")
				if n := columns(line); n > maxOutputColumns {
					wide = append(wide, fmt.Sprintf("%s cell %d prints a line %d columns wide (%q)", r.Notebook, c.Index, n, line))
				}
			}
		}
	}
	return wide
}

// columns is the width of line in a monospace font: a column a rune, tabs to the next multiple of 8.
func columns(line string) int {
	n := 0
	for _, r := range line {
		if r == '\t' {
			n += 8 - n%8
		} else {
			n++
		}
	}
	return n
}

// CheckBackendLine fails unless the first code cell's stdout starts with "backend: <name> ", the
// name of the backend this process would choose. Only the name is compared: the reason after it
// depends on how the binary was built (the kernel links cells with -tags noxla when no PJRT
// plugin is installed; this test binary may not be).
func CheckBackendLine(t *testing.T, r *nbrun.Result) {
	t.Helper()
	if want := "backend: " + backend.Choose().Name() + " "; !strings.HasPrefix(r.Code()[0].Stdout, want) {
		t.Errorf("first cell printed %q, want it to start with the backend line %q…", r.Code()[0].Stdout, want)
	}
}

// CheckPictures fails unless every picture's cell (looked up with find) displayed HTML or SVG
// containing all its strings, and no other code cell displayed any.
func CheckPictures(t *testing.T, r *nbrun.Result, pictures []Picture, find func(*testing.T, *nbrun.Result, string) nbrun.Cell) {
	t.Helper()
	drawn := map[int]bool{}
	for _, p := range pictures {
		c := find(t, r, p.Cell)
		drawn[c.Index] = true
		markup := strings.Join(append(append([]string{}, c.HTML...), c.SVG...), "\n")
		if markup == "" {
			t.Errorf("cell %d (%q) displayed no HTML or SVG; outputs: %+v", c.Index, p.Cell, c.Outputs)
			continue
		}
		for _, want := range p.Contains {
			if !strings.Contains(markup, want) {
				t.Errorf("cell %d (%q): the picture lacks %q", c.Index, p.Cell, want)
			}
		}
	}
	for _, c := range r.Code() {
		if !drawn[c.Index] && len(c.HTML)+len(c.SVG) > 0 {
			t.Errorf("cell %d displayed a picture the test does not know about: add it to the pictures table", c.Index)
		}
	}
}

// CellWith returns the one code cell whose source contains substr; none or several fail the test.
func CellWith(t *testing.T, r *nbrun.Result, substr string) nbrun.Cell {
	t.Helper()
	var found []nbrun.Cell
	for _, c := range r.Code() {
		if strings.Contains(c.Source, substr) {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d code cells contain %q, want exactly 1", r.Notebook, len(found), substr)
	}
	return found[0]
}

// CellWithLine returns the first code cell that has a source line equal to line (after trimming
// spaces); none fails the test. Unlike CellWith, "// PyTorch cell [8]" does not find the cell
// marked "// PyTorch cell [8], stack and .T".
func CellWithLine(t *testing.T, r *nbrun.Result, line string) nbrun.Cell {
	t.Helper()
	for _, c := range r.Code() {
		for _, l := range strings.Split(c.Source, "\n") {
			if strings.TrimSpace(l) == line {
				return c
			}
		}
	}
	t.Fatalf("%s: no code cell has the source line %q", r.Notebook, line)
	return nbrun.Cell{}
}

// LinesInOrder fails unless every line of want is a whole line of stdout, in want's order.
// Blank lines are skipped. A want line ending in "…" only has to start a line.
func LinesInOrder(t *testing.T, cell, stdout string, want []string) {
	t.Helper()
	got := strings.Split(stdout, "\n")
	i := 0
	for _, w := range want {
		if strings.TrimSpace(w) == "" {
			continue
		}
		prefix, isPrefix := strings.CutSuffix(w, "…")
		for i < len(got) && !(got[i] == w || isPrefix && strings.HasPrefix(got[i], prefix)) {
			i++
		}
		if i == len(got) {
			t.Errorf("%q: output lacks the line %q (in this order); it printed:\n%s", cell, w, stdout)
			return
		}
		i++
	}
}

var gradFnRe = regexp.MustCompile(`,?\s*grad_fn=<\w+>\)$`)

// WithoutGradFn turns PyTorch's print of a tensor that requires grad into the print of its
// values, split into lines: PyTorch appends ", grad_fn=<MmBackward0>" before the closing
// parenthesis, on the last line or, when that would be too long, on a line of its own after a
// trailing comma. The suffix is autograd metadata, not a value, and the notebooks don't print it.
func WithoutGradFn(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(strings.TrimSpace(l), "grad_fn="): // "       grad_fn=<SoftmaxBackward0>)"
			out[len(out)-1] = strings.TrimSuffix(out[len(out)-1], ",") + ")"
		case gradFnRe.MatchString(l): // "        [0.2990, 0.8040]], grad_fn=<MmBackward0>)"
			out = append(out, gradFnRe.ReplaceAllString(l, ")"))
		default:
			out = append(out, l)
		}
	}
	return out
}
