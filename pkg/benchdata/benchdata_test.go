package benchdata

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeReport has two formulations on GoMLX's go backend and two PyTorch builds, forward only.
func fakeReport() *Report {
	r := &Report{Schema: Schema, Label: "quick", Size: Quick, Threads: 2,
		Machine: Machine{CPU: "Test CPU", Cores: 2, GOMAXPROCS: 2, OS: "linux/amd64"},
		Series: []Series{{Framework: "go", Backend: "go", Name: "GoMLX go (SIMD)"}, {Framework: "pytorch", Backend: "reference-blas", Name: "PyTorch (reference BLAS)"},
			{Framework: "pytorch", Backend: "openblas", Name: "PyTorch (OpenBLAS)"}}}
	addForward(r, "chapter", "chapter", "go/go", 30, 20, 40)
	addForward(r, "chapter", "chapter", "pytorch/reference-blas", 60, 60, 60)
	addForward(r, "chapter", "chapter", "pytorch/openblas", 15, 15, 15)
	addForward(r, "fast", "fast", "go/go", 10, 11, 9)
	addForward(r, "fast", "fast", "pytorch/reference-blas", 50, 50)
	r.Results = append(r.Results, &Result{Impl: "fast", Framework: "pytorch", Backend: "openblas", Mode: Forward, Error: "unsupported: not here"})
	r.Checks = []Check{{What: "a vs b", RelErr: 1e-7, OK: true}}
	r.Finish()
	return r
}

func TestTables(t *testing.T) {
	r := fakeReport()
	if got := r.Find("chapter", "go/go", Forward); got == nil || got.MedianMS != 30 || got.MinMS != 20 || got.MaxMS != 40 {
		t.Fatalf("Find = %+v, want median 30, min 20, max 40", got)
	}
	if got, want := r.Find("chapter", "go/go", Forward).GFLOPS, Quick.FLOPs()/0.030/1e9; math.Abs(got-want) > 1e-3 {
		t.Errorf("GFLOPS = %g, want %g", got, want)
	}
	if r.Find("fast", "pytorch/openblas", Forward) != nil {
		t.Error("Find returned an untimed result")
	}
	if got := r.Ratio("chapter", "go/go", "pytorch/openblas", Forward); got != 2 {
		t.Errorf("Ratio = %g, want 2", got)
	}
	tables := r.Tables()
	if len(tables) != 2 {
		t.Fatalf("%d tables, want the forward table and its best against best", len(tables))
	}
	best := [][]string{
		{"PyTorch (reference BLAS)", "fast 50.0", "n/a", "0.20x", "—"},
		{"PyTorch (OpenBLAS)", "chapter 15.0", "n/a", "0.67x", "—"},
	}
	if got := fmt.Sprint(tables[1].Rows); got != fmt.Sprint(best) || !strings.Contains(tables[1].Title, "GoMLX go (SIMD)'s fastest formulation, fast (10.0 ms)") {
		t.Errorf("best against best %q:\n%v\nwant\n%v", tables[1].Title, got, best)
	}
	want := [][]string{
		{"chapter", "30.0 (20.0)", "60.0 (60.0)", "15.0 (15.0)", "3.0x", "0.50x", "2.0x"},
		{"fast", "10.0 (9.00)", "50.0 (50.0)", "n/a", "1.00x", "0.20x", "—"},
	}
	if got := fmt.Sprint(tables[0].Rows); got != fmt.Sprint(want) {
		t.Errorf("rows\n%v\nwant\n%v", got, want)
	}
	if h := strings.Join(tables[0].Header, " | "); h != "formulation | GoMLX go (SIMD) | PyTorch (reference BLAS) | PyTorch (OpenBLAS) | vs fastest | ÷ PyTorch (reference BLAS) | ÷ PyTorch (OpenBLAS)" {
		t.Errorf("header %q", h)
	}
	md := r.Markdown()
	for _, s := range []string{"| chapter | 30.0 (20.0) | 60.0 (60.0) | 15.0 (15.0) | 3.0x | 0.50x | 2.0x |", "Test CPU, 2 cores",
		"1 of 1 comparisons agree", "GOEXPERIMENT none"} {
		if !strings.Contains(md, s) {
			t.Errorf("Markdown() lacks %q:\n%s", s, md)
		}
	}
	if txt := r.Text(); !strings.Contains(txt, "  fast             10.0 (9.00)") || !strings.Contains(txt, "Checks before timing: 1 of 1") {
		t.Errorf("Text():\n%s", txt)
	}
	if got := fmt.Sprint(r.Medians("pytorch/openblas", Forward)); got != "[15 NaN]" {
		t.Errorf("Medians = %s, want [15 NaN]", got)
	}
}

// TestTablesHTML: every table's title, header and cells, escaped, numbers right-aligned; the
// heading's lines first, then exactly TablesHTML("").
func TestTablesHTML(t *testing.T) {
	r := fakeReport()
	bare := r.TablesHTML("")
	got := r.TablesHTML("run <1>\non a CPU")
	if !strings.Contains(got, "run &lt;1&gt;<br>on a CPU") {
		t.Errorf("the heading is not escaped with its lines kept:\n%s", got)
	}
	if body := strings.TrimPrefix(bare, strings.SplitN(bare, "<p", 2)[0]); !strings.Contains(got, body) {
		t.Errorf("TablesHTML(heading) does not hold TablesHTML(\"\")'s tables:\n%s", got)
	}
	if n := strings.Count(bare, "<table"); n != len(r.Tables()) {
		t.Errorf("%d tables, want %d", n, len(r.Tables()))
	}
	for _, tb := range r.Tables() {
		for _, s := range append([]string{tb.Title}, tb.Header...) {
			if !strings.Contains(bare, ">"+strings.ReplaceAll(s, "'", "&#39;")+"<") {
				t.Errorf("TablesHTML lacks %q:\n%s", s, bare)
			}
		}
	}
	for _, s := range []string{`text-align:left;background:#ffffff">chapter</td>`, `text-align:right;background:#ffffff">30.0 (20.0)</td>`,
		`text-align:right;background:#ffffff">0.50x</td>`, `>÷ PyTorch (OpenBLAS)</th>`} {
		if !strings.Contains(bare, s) {
			t.Errorf("TablesHTML lacks %q:\n%s", s, bare)
		}
	}
}

// TestCurrentTorchColumns: the current PyTorch's columns (in its container) sit beside the host's
// with their own ratio columns; the fused row has their F.scaled_dot_product_attention, and the
// best-against-best table puts GoMLX's fastest against it. A container column that could not run
// stays in the tables, empty, and the text, the Markdown and the charts' note say why.
func TestCurrentTorchColumns(t *testing.T) {
	r := fakeReport()
	r.Versions = Versions{GoMLX: "v0", PyTorch: "1.13.0a0", Python: "3.11.2", PyTorchContainer: "2.6.0 (Python 3.13.5; attnbook/torch:x)"}
	r.Series = append(r.Series,
		Series{Framework: "pytorch", Backend: "container-openblas", Name: "PyTorch 2.6 (OpenBLAS)", Version: "2.6.0", Image: "attnbook/torch:x"},
		Series{Framework: "pytorch", Backend: "container-reference-blas", Name: "PyTorch 2.6 (reference BLAS)", Image: "attnbook/torch:x", Skipped: "docker is not installed"})
	addForward(r, "chapter", "chapter", "pytorch/container-openblas", 12, 12)
	addForward(r, "fast", "fast", "pytorch/container-openblas", 8, 8)
	addForward(r, "fused", "fused", "go/go", 40, 40)
	addForward(r, "fused", "sdpa", "pytorch/container-openblas", 5, 5)
	r.Finish()
	tables := r.Tables()
	if len(tables) != 2 {
		t.Fatalf("%d tables", len(tables))
	}
	if h := strings.Join(tables[0].Header, " | "); !strings.HasSuffix(h, "| PyTorch 2.6 (OpenBLAS) | PyTorch 2.6 (reference BLAS) | vs fastest | ÷ PyTorch (reference BLAS) | ÷ PyTorch (OpenBLAS) | ÷ PyTorch 2.6 (OpenBLAS) | ÷ PyTorch 2.6 (reference BLAS)") {
		t.Errorf("header %q", h)
	}
	want := [][]string{
		{"chapter", "30.0 (20.0)", "60.0 (60.0)", "15.0 (15.0)", "12.0 (12.0)", "—", "3.0x", "0.50x", "2.0x", "2.5x", "—"},
		{"fast", "10.0 (9.00)", "50.0 (50.0)", "n/a", "8.00 (8.00)", "—", "1.00x", "0.20x", "—", "1.25x", "—"},
		{"fused / F.scaled_dot_product_attention", "40.0 (40.0)", "—", "—", "5.00 (5.00)", "—", "4.0x", "—", "—", "8.0x", "—"},
	}
	if got := fmt.Sprint(tables[0].Rows); got != fmt.Sprint(want) {
		t.Errorf("rows\n%v\nwant\n%v", got, want)
	}
	best := [][]string{
		{"PyTorch (reference BLAS)", "fast 50.0", "n/a", "0.20x", "—"},
		{"PyTorch (OpenBLAS)", "chapter 15.0", "n/a", "0.67x", "—"},
		{"PyTorch 2.6 (OpenBLAS)", "sdpa 5.00", "5.00", "2.0x", "2.0x"},
	}
	if got := fmt.Sprint(tables[1].Rows); got != fmt.Sprint(best) {
		t.Errorf("best against best\n%v\nwant\n%v", got, best)
	}
	why := "PyTorch 2.6 (reference BLAS): no times: docker is not installed"
	if sk := r.Skipped(); len(sk) != 1 || sk[0] != why {
		t.Errorf("Skipped() = %q, want [%q]", sk, why)
	}
	md := r.Markdown()
	for _, s := range []string{"- " + why, "PyTorch 1.13.0a0 (Python 3.11.2), and in a container PyTorch 2.6.0 (Python 3.13.5; attnbook/torch:x)",
		"| PyTorch 2.6 (OpenBLAS) | sdpa 5.00 | 5.00 | 2.0x | 2.0x |"} {
		if !strings.Contains(md, s) {
			t.Errorf("Markdown() lacks %q:\n%s", s, md)
		}
	}
	if txt := r.Text(); !strings.Contains(txt, why) {
		t.Errorf("Text() lacks %q:\n%s", why, txt)
	}
	if got := r.NotTimed(Forward); !strings.HasPrefix(got, "PyTorch 2.6 (reference BLAS): docker is not installed; ") {
		t.Errorf("NotTimed = %q, want the skipped column's reason first", got)
	}
	if got := fmt.Sprint(r.Medians("pytorch/container-reference-blas", Forward)); got != "[NaN NaN NaN]" {
		t.Errorf("Medians of the skipped column = %s", got)
	}
}

// addForward adds a forward result of impl (the framework's name) to r's series key ("go/go").
func addForward(r *Report, impl, name, key string, runs ...float64) {
	fw, be, _ := strings.Cut(key, "/")
	r.Results = append(r.Results, &Result{Impl: impl, Name: name, Framework: fw, Backend: be, Mode: Forward, RunsMS: runs})
}

// TestSDPAInFlashRow: a run without the fused row still finds PyTorch's
// F.scaled_dot_product_attention where it timed the same call for flash attention.
func TestSDPAInFlashRow(t *testing.T) {
	r := &Report{Series: []Series{{Framework: "go", Backend: "go", Name: "GoMLX go (SIMD)"},
		{Framework: "pytorch", Backend: "container-openblas", Name: "PyTorch 2.6 (OpenBLAS)"}}}
	addForward(r, "chapter", "chapter", "go/go", 480, 490)
	addForward(r, "flash", "flash", "go/go", 690, 700)
	addForward(r, "chapter", "chapter", "pytorch/container-openblas", 1480, 1490)
	addForward(r, "flash", "sdpa", "pytorch/container-openblas", 470, 490)
	r.Finish()
	if res := r.SDPA("pytorch/container-openblas", Forward); res == nil || res.Impl != "flash" {
		t.Fatalf("SDPA = %+v, want the flash row's sdpa", res)
	}
	if r.SDPA("go/go", Forward) != nil {
		t.Error("GoMLX has an SDPA result")
	}
	best, ok := r.BestTable(Forward)
	if want := "[[PyTorch 2.6 (OpenBLAS) sdpa 480 480 1.01x 1.01x]]"; !ok || fmt.Sprint(best.Rows) != want {
		t.Errorf("best against best %v, want %s", best.Rows, want)
	}
}

func TestMatmulTable(t *testing.T) {
	r := &Report{Label: "matmul", Peak: &Peak{GFLOPS: 200},
		Series: []Series{{Framework: "go", Backend: "go", Name: "GoMLX go (SIMD)"}, {Framework: "go", Backend: "go-nosimd", Name: "GoMLX go (no SIMD)"}}}
	r.Results = []*Result{
		{Impl: "1024", Framework: "go", Backend: "go", Mode: Matmul, RunsMS: []float64{21.47483648}}, // 2·1024³ FLOP in 21.47 ms: 100 GFLOP/s
		{Impl: "1024", Framework: "go", Backend: "go-nosimd", Mode: Matmul, RunsMS: []float64{1073.741824}},
	}
	r.Finish()
	if g := r.Results[0].GFLOPS; math.Abs(g-100) > 0.01 {
		t.Fatalf("GFLOPS %g, want 100", g)
	}
	rows := r.Tables()[0].Rows
	if want := "[[1024 100.0 (21.5 ms) 2.0 (1074 ms) 50% 1%]]"; fmt.Sprint(rows) != want {
		t.Errorf("rows %v, want %s", rows, want)
	}
}

func TestLoad(t *testing.T) {
	root := t.TempDir()
	if _, err := Load(root); err == nil {
		t.Error("no error for a missing file")
	}
	os.Mkdir(filepath.Join(root, "docs"), 0o755)
	os.WriteFile(Path(root), []byte(`{"schema": 1, "runs": {}}`), 0o644)
	if _, err := Load(root); err == nil || !strings.Contains(err.Error(), "schema 1") {
		t.Errorf("old schema: err %v", err)
	}
	os.WriteFile(Path(root), []byte(`{"schema": 2, "runs": {"quick": {"label": "quick", "results": [{"impl": "chapter", "framework": "go", "backend": "go", "mode": "forward", "median_ms": 5}]}}}`), 0o644)
	f, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if r := f.Runs["quick"].Find("chapter", "go/go", Forward); r == nil || r.MedianMS != 5 {
		t.Errorf("Find after Load = %+v", r)
	}
}

func TestSizeAndStats(t *testing.T) {
	if got := Full.FLOPs(); math.Abs(got-64.4e9) > 0.1e9 {
		t.Errorf("Full.FLOPs() = %g, want 64.4e9", got)
	}
	for _, tc := range []struct {
		s  Size
		ok bool
	}{{Full, true}, {Quick, true}, {Size{1, 1, 6, 4}, false}, {Size{0, 1, 4, 4}, false}} {
		if err := tc.s.Check(); (err == nil) != tc.ok {
			t.Errorf("%s: Check() = %v", tc.s, err)
		}
	}
	if m := Median([]float64{3, 1, 2, 10}); m != 2.5 {
		t.Errorf("Median = %g", m)
	}
	if q := Quantile([]float64{1, 2, 3, 4, 5}, 0.9); math.Abs(q-4.6) > 1e-12 {
		t.Errorf("Quantile = %g", q)
	}
	for x, want := range map[float64]string{0.834: "0.83x", 3.14: "3.1x", 12.4: "12x", 0: "—"} {
		if got := FormatRatio(x); got != want {
			t.Errorf("FormatRatio(%g) = %q, want %q", x, got, want)
		}
	}
}

// TestTimedAndNotTimed: a chart of a mode has a group per formulation timed in that mode, and
// its note names why the bars it lacks are missing.
func TestTimedAndNotTimed(t *testing.T) {
	r := fakeReport() // fast in PyTorch (OpenBLAS): unsupported; every row timed forward
	r.Results = append(r.Results, &Result{Impl: "chapter", Framework: "go", Backend: "go", Mode: Backward, RunsMS: []float64{70}})
	r.Results = append(r.Results, &Result{Impl: "chapter", Framework: "pytorch", Backend: "openblas", Mode: Backward, RunsMS: []float64{35}})
	r.Finish()
	for _, c := range []struct {
		mode    Mode
		rows    string
		medians string
		note    string
	}{
		{Forward, "[chapter fast]", "[15 NaN]", "fast in PyTorch (OpenBLAS): not here"},
		{Backward, "[chapter]", "[35]", "not timed in this run"},
	} {
		if got := fmt.Sprint(r.Timed(c.mode)); got != c.rows {
			t.Errorf("Timed(%s) = %s, want %s", c.mode, got, c.rows)
		}
		if got := fmt.Sprint(r.Medians("pytorch/openblas", c.mode)); got != c.medians {
			t.Errorf("Medians(pytorch/openblas, %s) = %s, want %s", c.mode, got, c.medians)
		}
		if got := r.NotTimed(c.mode); got != c.note {
			t.Errorf("NotTimed(%s) = %q, want %q", c.mode, got, c.note)
		}
	}
	r.Results = append(r.Results, &Result{Impl: "fast", Framework: "go", Backend: "go", Mode: Backward, RunsMS: []float64{20}})
	r.Finish()
	if got, want := r.NotTimed(Backward), "not timed in this run"; got != want {
		t.Errorf("NotTimed(backward) with fast timed by Go only = %q, want %q", got, want)
	}
	r.Results = append(r.Results, &Result{Impl: "fast", Framework: "pytorch", Backend: "openblas", Mode: Backward, Error: "failed: boom"})
	if got, want := r.NotTimed(Backward), "fast in PyTorch (OpenBLAS): failed: boom; the others were not timed in this run"; got != want {
		t.Errorf("NotTimed(backward) = %q, want %q", got, want)
	}
	if got := (&Report{}).NotTimed(Forward); got != "" {
		t.Errorf("NotTimed of an empty report = %q", got)
	}
}
