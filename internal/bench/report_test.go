package bench

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/pkg/benchdata"
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
	want := []benchdata.CellTime{{Index: 1, FirstLine: `import "fmt"`, Seconds: 4.5}, {Index: 2, FirstLine: "%%", Seconds: 0.75}, {Index: 4, FirstLine: "%%", Seconds: 1.25}}
	if len(cells) != len(want) {
		t.Fatalf("got %d cells %+v, want %d", len(cells), cells, len(want))
	}
	for i, c := range cells {
		if c.Index != want[i].Index || c.FirstLine != want[i].FirstLine || math.Abs(c.Seconds-want[i].Seconds) > 1e-9 {
			t.Errorf("cell %d = %+v, want %+v", i, c, want[i])
		}
	}
	st := benchdata.SummarizeCells([]benchdata.NotebookCells{{Notebook: "a", Cells: cells}, {Notebook: "b", Cells: cells[:2]}})
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
	if a[0] != (benchdata.CellTime{Index: 2, FirstLine: "import (", Seconds: 0.69}) || a[1] != (benchdata.CellTime{Index: 4, FirstLine: `import "x"`, Seconds: 12.7}) || b[0] != (benchdata.CellTime{Index: 10, FirstLine: "%%", Seconds: 1.1}) {
		t.Errorf("ParseRunOutput = %+v", got)
	}
}

func TestReplaceSection(t *testing.T) {
	doc := "# Benchmarks\n\nintro\n"
	doc = ReplaceSection(doc, "quick", "one")
	doc = ReplaceSection(doc, "full", "two")
	doc = ReplaceSection(doc, "quick", "three\n")
	want := "# Benchmarks\n\nintro\n\n<!-- bench:quick:begin -->\nthree\n<!-- bench:quick:end -->\n\n" +
		"<!-- bench:full:begin -->\ntwo\n<!-- bench:full:end -->\n"
	if doc != want {
		t.Errorf("got\n%s\nwant\n%s", doc, want)
	}
}

// TestWriteDocs: a report lands under its label in docs/benchmarks.json (which benchdata.Load
// reads back) and in its section of docs/benchmarks.md; a file of the old schema is replaced.
func TestWriteDocs(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(root+"/docs", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(benchdata.Path(root), []byte(`{"schema": 1, "runs": {"quick": {}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &benchdata.Report{Label: "quick", Size: benchdata.Quick, Series: []benchdata.Series{{Framework: "go", Backend: "go", Name: "GoMLX go (SIMD)"}},
		Results: []*benchdata.Result{{Impl: "chapter", Framework: "go", Backend: "go", Mode: Forward, RunsMS: []float64{2, 3, 4}}}}
	r.Finish()
	if err := WriteDocs(root, r); err != nil {
		t.Fatal(err)
	}
	f, err := benchdata.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Runs["quick"].Find("chapter", "go/go", Forward); got == nil || got.MedianMS != 3 {
		t.Errorf("loaded %+v", got)
	}
	md, _ := os.ReadFile(root + "/docs/benchmarks.md")
	if !strings.Contains(string(md), "<!-- bench:quick:begin -->") || !strings.Contains(string(md), "| chapter | 3.00 (2.00) | 1.00x |") {
		t.Errorf("benchmarks.md:\n%s", md)
	}
}

func TestFLOPPerCycle(t *testing.T) {
	for _, c := range []struct {
		cpu  cpuInfo
		want int
	}{
		{cpuInfo{vendor: "AuthenticAMD", family: 25, flags: []string{"avx2", "fma", "avx512f"}}, 32}, // Zen 4
		{cpuInfo{vendor: "AuthenticAMD", family: 26, flags: []string{"avx2", "fma", "avx512f"}}, 64}, // Zen 5
		{cpuInfo{vendor: "GenuineIntel", family: 6, flags: []string{"avx2", "fma", "avx512f"}}, 64},
		{cpuInfo{vendor: "AuthenticAMD", family: 23, flags: []string{"avx2", "fma"}}, 32},
		{cpuInfo{flags: []string{"sse2"}}, 8},
	} {
		if got, how := flopPerCycle(c.cpu); got != c.want || how == "" {
			t.Errorf("flopPerCycle(%+v) = %d, %q; want %d", c.cpu, got, how, c.want)
		}
	}
}

// TestMeasureFMA: with the SIMD kernels on an AVX-512 machine, the measured FMA throughput is
// at least one 16-lane FMA per 4 cycles at 1 GHz per core, and no more than 2 per cycle at 6 GHz.
func TestMeasureFMA(t *testing.T) {
	g, what := measureFMA()
	if g == 0 {
		t.Skip("no measurement in this build or on this CPU (needs GOEXPERIMENT=simd and AVX-512)")
	}
	procs := float64(runtime.GOMAXPROCS(0))
	if low, high := procs*1*16*2/4, procs*6*2*16*2; g < low || g > high || what == "" {
		t.Errorf("measureFMA() = %.1f GFLOP/s (%s), want within [%.0f, %.0f]", g, what, low, high)
	}
}

// TestRunCellsRunsItsKernel checks that --cells executes the notebooks with the kernel binary it
// was given (so two builds compare their own cells) and reads the times that binary printed.
func TestRunCellsRunsItsKernel(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake kernel is a shell script")
	}
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "notebooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, nb := range []string{"01-a.ipynb", "02-b.ipynb"} {
		if err := os.WriteFile(filepath.Join(root, "notebooks", nb), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	kernel := filepath.Join(t.TempDir(), "kernel-old")
	script := `#!/bin/sh
[ "$1" = run ] && [ "$2" = -o ] || { echo "fake kernel: unexpected arguments $*" >&2; exit 3; }
echo "run: notebooks/01-a.ipynb"
echo "  cell  1    3.00s  import"
echo "  cell  2    0.40s  %%"
echo "  cell  3    0.20s  %%"
echo "run: notebooks/02-b.ipynb"
echo "  cell  1    2.00s  import"
echo "  cell  2    0.30s  %%"
`
	if err := os.WriteFile(kernel, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	rep, err := RunCells(Options{Root: root, Kernel: kernel, Out: t.TempDir()}, &progress)
	if err != nil {
		t.Fatalf("RunCells: %v\n%s", err, progress.String())
	}
	if !strings.Contains(progress.String(), "bench: "+kernel+" run -o ") {
		t.Errorf("progress %q does not name the kernel binary it ran", progress.String())
	}
	st := rep.Cells
	if len(st.Notebooks) != 2 || st.WarmCells != 3 || st.WarmMedianS != 0.3 || st.ColdMedianS != 2.5 {
		t.Errorf("cells %+v: want 2 notebooks, 3 warm cells, warm median 0.30 s, cold median 2.50 s", st)
	}
	if _, err := RunCells(Options{Root: root, Out: t.TempDir()}, io.Discard); err == nil || !strings.Contains(err.Error(), "no kernel binary") {
		t.Errorf("no kernel: err %v, want one saying so", err)
	}
}
