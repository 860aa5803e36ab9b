package mhabench

import (
	"encoding/xml"
	"math"
	"os"
	"strings"
	"testing"
)

func TestParseCellTimes(t *testing.T) {
	data, err := os.ReadFile("testdata/executed.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	cells, err := ParseCellTimes(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []CellTime{{1, `import "fmt"`, 4.5}, {2, "%%", 0.75}, {4, "%%", 1.25}}
	if len(cells) != len(want) {
		t.Fatalf("got %d cells %+v, want %d", len(cells), cells, len(want))
	}
	for i, c := range cells {
		if c.Index != want[i].Index || c.FirstLine != want[i].FirstLine || math.Abs(c.Seconds-want[i].Seconds) > 1e-9 {
			t.Errorf("cell %d = %+v, want %+v", i, c, want[i])
		}
	}
	st := SummarizeCells([]NotebookCells{{Notebook: "a", Cells: cells}, {Notebook: "b", Cells: cells[:2]}})
	if st.ColdMedianS != 4.5 || st.WarmCells != 3 || st.WarmMedianS != 0.75 || st.WarmP90S != 1.15 {
		t.Errorf("stats %+v: want cold 4.5, 3 warm cells, median 0.75, p90 1.15", st)
	}
	if _, err := ParseCellTimes([]byte("not json")); err == nil {
		t.Error("no error for a broken notebook")
	}
	bad := strings.Replace(string(data), "2025-11-21T00:10:05.350000Z", "yesterday", 1)
	if _, err := ParseCellTimes([]byte(bad)); err == nil || !strings.Contains(err.Error(), "cell 2") {
		t.Errorf("bad timestamp: err %v, want one naming cell 2", err)
	}
}

func TestReplaceSection(t *testing.T) {
	doc := "# Benchmarks\n\nintro\n"
	doc = ReplaceSection(doc, "quick", "one")
	doc = ReplaceSection(doc, "full", "two")
	doc = ReplaceSection(doc, "quick", "three\n")
	want := "# Benchmarks\n\nintro\n\n<!-- mhabench:quick:begin -->\nthree\n<!-- mhabench:quick:end -->\n\n" +
		"<!-- mhabench:full:begin -->\ntwo\n<!-- mhabench:full:end -->\n"
	if doc != want {
		t.Errorf("got\n%s\nwant\n%s", doc, want)
	}
}

// fakeReport is a report with two formulations on the Go backend and PyTorch, forward only.
func fakeReport() *Report {
	r := &Report{Label: "quick", Size: Quick, Threads: 2, Backends: []string{"go"}, Device: "cpu",
		Machine: Machine{CPU: "Test CPU", Cores: 2, GOMAXPROCS: 2, OS: "linux/amd64"}, Reps: 3}
	add := func(impl, fw, be string, runs ...float64) {
		res := r.addResult(impl, impl, fw, be, Forward)
		res.RunsMS = runs
	}
	add("chapter", "go", "go", 30, 20, 40)
	add("chapter", "pytorch", "cpu", 10, 10, 10)
	add("fast", "go", "go", 10, 11, 9)
	add("fast", "pytorch", "cpu", 5, 5, 5)
	r.addCheck("a vs b", 1e-7)
	r.finish(0)
	return r
}

func TestReportTablesAndSummary(t *testing.T) {
	r := fakeReport()
	if got := r.Find("chapter", "go", "go", Forward).MedianMS; got != 30 {
		t.Errorf("median %g, want 30", got)
	}
	// chapter is 3x the fastest (fast, 10 ms); Go/PyTorch is 3 and 2: geometric mean √6.
	want := "quick: fastest=fast 1.00x; chapter 3.0x; go/pytorch=2.4x"
	if got := r.Summary(); got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
	md := r.Markdown()
	for _, s := range []string{"| formulation | go/go ms (min) | pytorch/cpu ms (min) | vs fastest (go) | go/pytorch |",
		"| chapter | 30.0 (20.0) | 10.0 (10.0) | 3.0x | 3.0x |", "| fast | 10.0 (9.00) | 5.00 (5.00) | 1.00x | 2.0x |", "Test CPU, 2 cores",
		"1 of 1 comparisons agree"} {
		if !strings.Contains(md, s) {
			t.Errorf("Markdown() lacks %q:\n%s", s, md)
		}
	}
	csv := string(r.CSV())
	if !strings.Contains(csv, "quick,chapter,chapter,go,go,forward,2,128,256,4,2,30.000,20.000,40.000") {
		t.Errorf("CSV:\n%s", csv)
	}
}

func TestSVGIsWellFormed(t *testing.T) {
	svg := fakeReport().SVG()
	d := xml.NewDecoder(strings.NewReader(svg))
	rects := 0
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("SVG does not parse: %v\n%s", err, svg)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			rects++
		}
	}
	// background + 2 legend squares + 4 bars
	if rects != 7 {
		t.Errorf("%d rects, want 7:\n%s", rects, svg)
	}
	if !strings.Contains(svg, `width="440"`) { // the slowest bar spans the bar area
		t.Errorf("no full-width bar for the slowest result:\n%s", svg)
	}
}

func TestParseRunOutput(t *testing.T) {
	out := `run: notebooks/00_start_here.ipynb
  kernel attnbook started in 0.47s
  cell  2    0.69s  import (
  cell  4   12.70s  FAILED import "x"
      | main.go:3: something
run: ok notebooks/00_start_here.ipynb: 5 code cells in 5.2s (median 0.70s per cell) → out/x.ipynb
run: notebooks/09_mha_implementations.ipynb
  cell 10    1.10s  %%
`
	got := ParseRunOutput(out)
	a, b := got["notebooks/00_start_here.ipynb"], got["notebooks/09_mha_implementations.ipynb"]
	if len(got) != 2 || len(a) != 2 || len(b) != 1 {
		t.Fatalf("ParseRunOutput = %+v", got)
	}
	if a[0] != (CellTime{2, "import (", 0.69}) || a[1] != (CellTime{4, `import "x"`, 12.7}) || b[0] != (CellTime{10, "%%", 1.1}) {
		t.Errorf("ParseRunOutput = %+v", got)
	}
}

// TestCheckAgreement: a program whose output differs from the chapter's by more than the
// tolerance is taken out of the timing, and one within it is kept.
func TestCheckAgreement(t *testing.T) {
	r := &Report{}
	s := &series{framework: "go", backend: "go"}
	mk := func(impl string) *job {
		return &job{impl: impl, mode: Forward, s: s, res: r.addResult(impl, impl, "go", "go", Forward)}
	}
	wrapper, chapter, fast := mk("wrapper"), mk("chapter"), mk("fast")
	first := map[*job][]float32{
		wrapper: {1, 2, 3.00001},
		chapter: {1, 2, 3},
		fast:    {1, 2, 3.1},
	}
	failed := r.checkAgreement([]*job{wrapper, chapter, fast}, first)
	if len(failed) != 1 || failed[0] != fast || !fast.failed || wrapper.failed || chapter.failed {
		t.Errorf("failed = %v; want only fast", failed)
	}
	if len(r.Checks) != 2 || r.Checks[0].What != "go go output: wrapper vs chapter" || !r.Checks[0].OK || r.Checks[1].OK {
		t.Errorf("checks %+v", r.Checks)
	}
	if !strings.Contains(fast.res.Error, "differs from chapter") {
		t.Errorf("error %q", fast.res.Error)
	}
}
