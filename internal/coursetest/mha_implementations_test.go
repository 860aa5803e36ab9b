package coursetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
	"github.com/attnbook/attnbook/pkg/benchdata"
)

// TestMHAImplementations runs notebook 09: its tables are docs/benchmarks.json's runs, value
// by value; its charts draw a group per formulation timed in their mode and a bar per column, and
// say why bars are missing; its summary cell prints the ratios the prose quotes, computed from the
// same file; its current-PyTorch cell prints the run with PyTorch 2.6 beside 1.13 and GoMLX's
// fastest against 2.6's F.scaled_dot_product_attention.
func TestMHAImplementations(t *testing.T) {
	r := nbrun.Execute(t, "notebooks/09_mha_implementations.ipynb")
	CheckClean(t, r)
	docs, err := benchdata.Load(nbrun.Root(t))
	if err != nil {
		t.Fatalf("docs/benchmarks.json: %v", err)
	}
	full := docs.Runs["full"]
	if full == nil || docs.Runs["matmul"] == nil {
		t.Fatalf("docs/benchmarks.json has runs %v, want at least full and matmul", keys(docs.Runs))
	}

	tables := strings.Join(r.Find(t, "r.TablesHTML(heading)").HTML, "")
	for _, label := range []string{"full", "quick"} {
		run := docs.Runs[label]
		if run == nil {
			continue
		}
		if !strings.Contains(tables, tablesBody(run)) || !strings.Contains(tables, label+" run: "+run.Size.String()) {
			t.Errorf("the %s tables are not shown as pkg/benchdata renders them, under their run's line:\n%s", label, tables)
		}
		for _, res := range run.Results {
			if res.Framework == "go" && res.Mode == benchdata.Forward && !strings.Contains(tables, benchdata.FormatMS(res.MedianMS)) {
				t.Errorf("%s run: the table lacks %s's GoMLX time %s", label, res.Impl, benchdata.FormatMS(res.MedianMS))
			}
		}
	}

	charts := r.Find(t, "func timesChart")
	svgs := strings.Join(append(charts.HTML, charts.SVG...), "")
	if n := strings.Count(svgs, "<svg"); n != 2 {
		t.Errorf("the chart cell shows %d SVGs, want 2 (forward, fwd+bwd)", n)
	}
	for _, want := range append(full.Rows(), "PyTorch (OpenBLAS)", "PyTorch (reference BLAS)", "GoMLX go") {
		if !strings.Contains(svgs, want) {
			t.Errorf("the charts lack %q", want)
		}
	}
	for _, mode := range []benchdata.Mode{benchdata.Forward, benchdata.Backward} {
		if why := full.NotTimed(mode); why != "" && !strings.Contains(svgs, "n/a: "+why) {
			t.Errorf("the %s chart does not say why bars are missing (%q)", mode.Label(), why)
		}
	}

	summary := r.Find(t, "÷ PyTorch (OpenBLAS)").Stdout
	ratio := full.Ratio("chapter", "go/go", "pytorch/openblas", benchdata.Forward)
	if want := fmt.Sprintf("chapter, full size, forward:  GoMLX %8s ms   ÷ PyTorch (OpenBLAS) %-6s", benchdata.FormatMS(full.Find("chapter", "go/go", benchdata.Forward).MedianMS), benchdata.FormatRatio(ratio)); !strings.Contains(summary, want) {
		t.Errorf("summary lacks %q:\n%s", want, summary)
	}
	peak := docs.Runs["matmul"].Peak
	if want := fmt.Sprintf("peak: %.1f GFLOP/s, the larger of %d cores × %.3f GHz × %d FLOP/cycle", peak.GFLOPS, peak.Cores, peak.GHz, peak.FLOPPerCycle); !strings.Contains(summary, "% of peak") || !strings.Contains(summary, want) {
		t.Errorf("summary lacks the matmul against the peak:\n%s", summary)
	}

	// Section 4's prose quotes the summary's ratios: the chapter against PyTorch+OpenBLAS (full
	// size both ways, quick size fwd+bwd), best against best, and the matrix product's share of
	// the peak for GoMLX and for PyTorch+OpenBLAS.
	prose4 := markdown(r, "## 4. What the numbers say")
	quote := func(what, x string) {
		t.Helper()
		if !strings.Contains(summary, x) || !strings.Contains(prose4, asProse(x)) {
			t.Errorf("section 4: %s %s is not both printed by the summary cell and quoted by the prose", what, x)
		}
	}
	quick := docs.Runs["quick"]
	quote("chapter ÷ PyTorch (OpenBLAS), full forward", benchdata.FormatRatio(ratio))
	quote("chapter ÷ PyTorch (OpenBLAS), full fwd+bwd", benchdata.FormatRatio(full.Ratio("chapter", "go/go", "pytorch/openblas", benchdata.Backward)))
	quote("chapter ÷ PyTorch (OpenBLAS), quick fwd+bwd", benchdata.FormatRatio(quick.Ratio("chapter", "go/go", "pytorch/openblas", benchdata.Backward)))
	for _, mode := range []benchdata.Mode{benchdata.Forward, benchdata.Backward} {
		g, p := full.Fastest("go/go", mode), full.Fastest("pytorch/openblas", mode)
		quote("best against best, "+mode.Label(), benchdata.FormatRatio(g.MedianMS/p.MedianMS))
	}
	mm := docs.Runs["matmul"]
	for _, key := range []string{"go/go", "pytorch/openblas"} {
		res := mm.Find("2048", key, benchdata.Matmul)
		if res == nil {
			t.Fatalf("matmul run: no 2048 result for %s", key)
		}
		pct := fmt.Sprintf("%.1f", 100*res.GFLOPS/mm.Peak.GFLOPS)
		if !strings.Contains(summary, pct+"% of peak") || !strings.Contains(prose4, pct+" %") {
			t.Errorf("section 4: 2048³ on %s at %s %% of the peak is not both printed and quoted", key, pct)
		}
	}

	// The current PyTorch (2.6, in its container) beside 1.13: its run's tables, and GoMLX's
	// fastest against its F.scaled_dot_product_attention, forward and fwd+bwd, from the same file.
	cur := docs.Runs["current-pytorch"]
	if cur == nil {
		t.Fatalf("docs/benchmarks.json has no current-pytorch run")
	}
	curCell := r.Find(t, `docs.Runs["current-pytorch"]`)
	out := curCell.Stdout
	prose := markdown(r, "## 5. Against current PyTorch")
	if shown := strings.Join(curCell.HTML, ""); !strings.Contains(shown, tablesBody(cur)) || !strings.Contains(shown, "PyTorch "+cur.Versions.PyTorchContainer+" in a container") {
		t.Errorf("the current-PyTorch cell does not show its run's tables and versions:\n%s", shown)
	}
	for _, mode := range []benchdata.Mode{benchdata.Forward, benchdata.Backward} {
		fast := cur.Fastest("go/go", mode)
		sdpa := cur.Find(benchdata.SDPARow, "pytorch/container-openblas", mode)
		if fast == nil || sdpa == nil {
			t.Fatalf("current-pytorch run: %s: GoMLX's fastest %v, PyTorch 2.6's SDPA %v: want both timed", mode.Label(), fast, sdpa)
		}
		want := fmt.Sprintf("GoMLX's fastest (%s, %s ms) ÷ PyTorch 2.6 (OpenBLAS)'s SDPA (%s ms): %s",
			fast.Impl, benchdata.FormatMS(fast.MedianMS), benchdata.FormatMS(sdpa.MedianMS), benchdata.FormatRatio(fast.MedianMS/sdpa.MedianMS))
		if !strings.Contains(out, want) {
			t.Errorf("the current-PyTorch cell lacks %q:\n%s", want, out)
		}
		// The prose quotes these two ratios.
		if quoted := asProse(benchdata.FormatRatio(fast.MedianMS / sdpa.MedianMS)); !strings.Contains(prose, quoted) {
			t.Errorf("the prose does not quote GoMLX's fastest ÷ PyTorch 2.6's SDPA, %s: %s", mode.Label(), quoted)
		}
	}
	// The prose quotes the cell's ratios of PyTorch 2.6 to 1.13 on the same code, and of PyTorch
	// 2.6's SDPA to its chapter code forward + backward.
	if a, b := cur.Find(benchdata.SDPARow, "pytorch/container-openblas", benchdata.Backward), cur.Find("chapter", "pytorch/container-openblas", benchdata.Backward); a == nil || b == nil {
		t.Errorf("current-pytorch run: PyTorch 2.6's SDPA %v and chapter %v fwd+bwd: want both timed", a, b)
	} else {
		x := benchdata.FormatRatio(a.MedianMS / b.MedianMS)
		line := fmt.Sprintf("%-8s PyTorch 2.6's SDPA ÷ its chapter code: %s", benchdata.Backward.Label(), x)
		if !strings.Contains(out, line) || !strings.Contains(prose, asProse(x)) {
			t.Errorf("the cell or the prose lacks PyTorch 2.6's SDPA ÷ its chapter code, fwd+bwd: %s", x)
		}
	}
	for _, mode := range []benchdata.Mode{benchdata.Forward, benchdata.Backward} {
		for _, impl := range []string{"chapter", "fast"} {
			x := benchdata.FormatRatio(cur.Ratio(impl, "pytorch/container-openblas", "pytorch/openblas", mode))
			if line := fmt.Sprintf("%-8s the same %s code, PyTorch 2.6 ÷ PyTorch 1.13 (both OpenBLAS): %s", mode.Label(), impl, x); !strings.Contains(out, line) {
				t.Errorf("the current-PyTorch cell lacks %q", line)
			}
			if !strings.Contains(prose, asProse(x)) {
				t.Errorf("the prose does not quote PyTorch 2.6 ÷ 1.13 on %s, %s: %s", impl, mode.Label(), x)
			}
		}
		// And GoMLX's fastest against SDPA by the fastest runs.
		fast, sdpa := cur.Fastest("go/go", mode), cur.Find(benchdata.SDPARow, "pytorch/container-openblas", mode)
		if x := benchdata.FormatRatio(fast.MinMS / sdpa.MinMS); !strings.Contains(out, "by the fastest runs: GoMLX's "+fast.Impl) || !strings.Contains(prose, asProse(x)) {
			t.Errorf("the cell or the prose lacks GoMLX's fastest ÷ SDPA by the fastest runs, %s: %s", mode.Label(), x)
		}
	}
}

// tablesBody is run's tables as TablesHTML renders them, without the box and heading a cell adds.
func tablesBody(run *benchdata.Report) string {
	html := run.TablesHTML("")
	return strings.TrimSuffix(html[strings.Index(html, "<p"):], "</div>")
}

// asProse is a printed ratio ("0.33x") as the prose writes it ("0.33×").
func asProse(ratio string) string { return strings.Replace(ratio, "x", "×", 1) }

// markdown is the source of r's markdown cell that starts with heading.
func markdown(r *nbrun.Result, heading string) string {
	for _, c := range r.Cells {
		if c.Type == "markdown" && strings.HasPrefix(c.Source, heading) {
			return c.Source
		}
	}
	return ""
}

func keys(m map[string]*benchdata.Report) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
