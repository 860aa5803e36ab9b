package benchdata

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Table is one result table: a row per formulation (or matmul size), a column per series, then
// ratios.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
}

// Tables are the report's result tables, one per mode. Attention tables give per series the
// median ms (and the fastest run; "—" where a series did not time a row, [Report.Skipped] says
// why for a whole column), then for the first GoMLX series its time relative to its fastest
// formulation and to each PyTorch series (below 1: GoMLX is faster); each is followed by its
// [Report.BestTable] where there is one. Matmul tables give GFLOP/s (and ms), and for each GoMLX
// series the fraction of [Report.Peak].
func (r *Report) Tables() []Table {
	var out []Table
	keys := r.seriesKeys()
	goKeys, torchKeys := r.goSeries(), r.torchSeries()
	for _, mode := range r.Modes() {
		if mode == Matmul {
			out = append(out, r.matmulTable(keys, goKeys))
			continue
		}
		t := Table{Title: fmt.Sprintf("%s, %s: median ms (fastest run)", mode.Label(), r.Size), Header: []string{"formulation"}}
		for _, k := range keys {
			t.Header = append(t.Header, r.SeriesName(k))
		}
		var main string
		if len(goKeys) > 0 {
			main = goKeys[0]
			t.Header = append(t.Header, "vs fastest")
			for _, tk := range torchKeys {
				t.Header = append(t.Header, "÷ "+r.SeriesName(tk))
			}
		}
		for _, impl := range r.Rows() {
			if !r.hasRow(impl, mode) {
				continue
			}
			row := []string{implLabel(impl)}
			for _, k := range keys {
				row = append(row, msCell(r.Find(impl, k, mode), r.findAny(impl, k, mode)))
			}
			if main != "" {
				g := r.Find(impl, main, mode)
				if f := r.Fastest(main, mode); g != nil && f != nil {
					row = append(row, FormatRatio(g.MedianMS/f.MedianMS))
				} else {
					row = append(row, "—")
				}
				for _, tk := range torchKeys {
					row = append(row, FormatRatio(r.Ratio(impl, main, tk, mode)))
				}
			}
			t.Rows = append(t.Rows, row)
		}
		out = append(out, t)
		if best, ok := r.BestTable(mode); ok {
			out = append(out, best)
		}
	}
	return out
}

// SDPARow is the row whose PyTorch formulation is F.scaled_dot_product_attention (GoMLX: fused).
const SDPARow = "fused"

// BestTable puts, for mode, the first GoMLX series' fastest formulation against each PyTorch
// series' fastest and against its F.scaled_dot_product_attention ([SDPARow], PyTorch ≥ 2.0): a
// row per PyTorch series that timed something in mode; ok is false when there is none.
func (r *Report) BestTable(mode Mode) (Table, bool) {
	goKeys := r.goSeries()
	if len(goKeys) == 0 {
		return Table{}, false
	}
	main := goKeys[0]
	g := r.Fastest(main, mode)
	if g == nil {
		return Table{}, false
	}
	t := Table{
		Title: fmt.Sprintf("%s, best against best: %s's fastest formulation, %s (%s ms), against each PyTorch column's",
			mode.Label(), r.SeriesName(main), g.Impl, FormatMS(g.MedianMS)),
		Header: []string{"PyTorch column", "its fastest (ms)", "its F.scaled_dot_product_attention (ms)", "÷ its fastest", "÷ its SDPA"},
	}
	for _, k := range r.torchSeries() {
		f := r.Fastest(k, mode)
		if f == nil {
			continue
		}
		sdpa, ratio := "n/a", "—"
		if res := r.SDPA(k, mode); res != nil {
			sdpa, ratio = FormatMS(res.MedianMS), FormatRatio(g.MedianMS/res.MedianMS)
		}
		t.Rows = append(t.Rows, []string{r.SeriesName(k), f.Name + " " + FormatMS(f.MedianMS), sdpa, FormatRatio(g.MedianMS / f.MedianMS), ratio})
	}
	return t, len(t.Rows) > 0
}

func (r *Report) hasRow(impl string, mode Mode) bool {
	for _, res := range r.Results {
		if res.Impl == impl && res.Mode == mode {
			return true
		}
	}
	return false
}

func (r *Report) matmulTable(keys, goKeys []string) Table {
	t := Table{Title: "float32 matrix product [n, n] × [n, n]: GFLOP/s (median ms)", Header: []string{"n"}}
	for _, k := range keys {
		t.Header = append(t.Header, r.SeriesName(k))
	}
	if r.Peak != nil {
		for _, k := range goKeys {
			t.Header = append(t.Header, r.SeriesName(k)+" % of peak")
		}
	}
	for _, n := range r.Rows() {
		if !r.hasRow(n, Matmul) {
			continue
		}
		row := []string{n}
		for _, k := range keys {
			res := r.Find(n, k, Matmul)
			if res == nil {
				row = append(row, msCell(nil, r.findAny(n, k, Matmul)))
				continue
			}
			row = append(row, fmt.Sprintf("%.1f (%s ms)", res.GFLOPS, FormatMS(res.MedianMS)))
		}
		if r.Peak != nil {
			for _, k := range goKeys {
				if res := r.Find(n, k, Matmul); res != nil && r.Peak.GFLOPS > 0 {
					row = append(row, fmt.Sprintf("%.0f%%", 100*res.GFLOPS/r.Peak.GFLOPS))
				} else {
					row = append(row, "—")
				}
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// implLabel names a row with both frameworks' names where they differ.
func implLabel(impl string) string {
	switch impl {
	case "gomlx_layers":
		return "gomlx_layers / nn.MultiheadAttention"
	case "fused":
		return "fused / F.scaled_dot_product_attention"
	}
	return impl
}

func msCell(res, any *Result) string {
	switch {
	case res != nil && len(res.RunsMS) > 1:
		return FormatMS(res.MedianMS) + " (" + FormatMS(res.MinMS) + ")"
	case res != nil:
		return FormatMS(res.MedianMS)
	case any != nil && strings.HasPrefix(any.Error, "unsupported"):
		return "n/a"
	case any != nil && any.Error != "":
		return "failed"
	}
	return "—"
}

// Text is the report's tables as aligned plain text ([Report.TablesText]), then the checks, the
// peak and the notes.
func (r *Report) Text() string {
	var b strings.Builder
	b.WriteString(r.TablesText())
	for _, line := range r.Skipped() {
		fmt.Fprintf(&b, "%s\n", line)
	}
	if len(r.Checks) > 0 {
		fmt.Fprintf(&b, "\n%s\n", r.checksLine())
		for _, c := range r.Checks {
			if !c.OK {
				fmt.Fprintf(&b, "CHECK FAILED: %s: relative error %.3g > %g\n", c.What, c.RelErr, Tolerance)
			}
		}
	}
	if r.Peak != nil {
		fmt.Fprintf(&b, "peak: %.1f GFLOP/s, the larger of: %s\n", r.Peak.GFLOPS, r.Peak.Formula)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	return b.String()
}

// Medians are the median times (ms) of series key in mode, one per row of [Report.Timed], NaN
// where the series did not time a row: one series of a bar chart of mode.
func (r *Report) Medians(key string, mode Mode) []float64 {
	var out []float64
	for _, impl := range r.Timed(mode) {
		if res := r.Find(impl, key, mode); res != nil {
			out = append(out, res.MedianMS)
		} else {
			out = append(out, math.NaN())
		}
	}
	return out
}

// TablesText is [Report.Tables] as aligned plain text, each table after a blank line and its
// title.
func (r *Report) TablesText() string {
	var b strings.Builder
	for _, t := range r.Tables() {
		fmt.Fprintf(&b, "\n%s\n", t.Title)
		widths := make([]int, len(t.Header))
		for i, h := range t.Header {
			widths[i] = len([]rune(h))
		}
		for _, row := range t.Rows {
			for i, c := range row {
				widths[i] = max(widths[i], len([]rune(c)))
			}
		}
		line := func(cells []string) {
			for i, c := range cells {
				pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
				if i == 0 {
					fmt.Fprintf(&b, "  %s%s", c, pad)
				} else {
					fmt.Fprintf(&b, "  %s%s", pad, c)
				}
			}
			b.WriteString("\n")
		}
		line(t.Header)
		for _, row := range t.Rows {
			line(row)
		}
	}
	return b.String()
}

// TablesHTML is [Report.Tables] as HTML tables for a notebook, each under its title, after heading
// (plain text, its lines kept; none when empty). A notebook's output area is about 110 characters
// wide, and the text tables, up to 170, wrap there. The tables' markup does not depend on heading
// (it only adds a paragraph before them, inside the same box), so a test can find them whatever
// the heading.
func (r *Report) TablesHTML(heading string) string {
	var b strings.Builder
	const box = `<div style="font-family:sans-serif;font-size:13px;color:#1a1a1a;background:#ffffff;padding:2px 0">`
	b.WriteString(box)
	if heading != "" {
		fmt.Fprintf(&b, `<p style="margin:4px 0">%s</p>`, strings.ReplaceAll(html.EscapeString(heading), "\n", "<br>"))
	}
	const cell = "padding:2px 8px;border:none;white-space:nowrap;text-align:"
	for _, t := range r.Tables() {
		fmt.Fprintf(&b, `<p style="margin:10px 0 4px;font-weight:bold">%s</p>`, html.EscapeString(t.Title))
		b.WriteString(`<table style="border-collapse:collapse;margin:0;table-layout:auto;font-size:13px">`)
		row := func(tag string, cells []string, style string) {
			b.WriteString("<tr>")
			for i, c := range cells {
				align := "right"
				if i == 0 {
					align = "left"
				}
				fmt.Fprintf(&b, `<%s style="%s%s;%s">%s</%s>`, tag, cell, align, style, html.EscapeString(c), tag)
			}
			b.WriteString("</tr>")
		}
		row("th", t.Header, "border-bottom:1px solid #999;white-space:normal;vertical-align:bottom")
		for _, cells := range t.Rows {
			row("td", cells, "background:#ffffff")
		}
		b.WriteString("</table>")
	}
	b.WriteString("</div>")
	return b.String()
}

func (r *Report) checksLine() string {
	bad, worst := 0, 0.0
	for _, c := range r.Checks {
		if !c.OK {
			bad++
		}
		if !math.IsNaN(c.RelErr) {
			worst = max(worst, c.RelErr)
		}
	}
	return fmt.Sprintf("Checks before timing: %d of %d comparisons agree within %g (largest normwise relative error %.2g).",
		len(r.Checks)-bad, len(r.Checks), Tolerance, worst)
}

// Markdown is the report as the generated section of docs/benchmarks.md.
func (r *Report) Markdown() string {
	var b strings.Builder
	m, v := r.Machine, r.Versions
	fmt.Fprintf(&b, "_Generated by `%s` on %s; do not edit by hand._\n\n", r.Command, r.Date)
	fmt.Fprintf(&b, "- Machine: %s, %d cores (GOMAXPROCS %d", m.CPU, m.Cores, m.GOMAXPROCS)
	if m.MHz > 0 {
		fmt.Fprintf(&b, ", %d MHz", m.MHz)
	}
	if m.MemoryGiB > 0 {
		fmt.Fprintf(&b, ", %d GiB", m.MemoryGiB)
	}
	fmt.Fprintf(&b, "), %s", m.OS)
	if r.Load[0] != "" {
		fmt.Fprintf(&b, "; load average %s at the start, %s at the end", r.Load[0], r.Load[1])
	}
	b.WriteString("\n")
	exp := v.GoExperiment
	if exp == "" {
		exp = "none"
	}
	fmt.Fprintf(&b, "- Versions: %s (GOEXPERIMENT %s", v.Go, exp)
	if v.GOAMD64 != "" {
		fmt.Fprintf(&b, ", GOAMD64 %s", v.GOAMD64)
	}
	fmt.Fprintf(&b, "), GoMLX %s", v.GoMLX)
	if v.PyTorch != "" {
		fmt.Fprintf(&b, ", PyTorch %s (Python %s)", v.PyTorch, v.Python)
	}
	if v.PyTorchContainer != "" {
		fmt.Fprintf(&b, ", and in a container PyTorch %s", v.PyTorchContainer)
	}
	b.WriteString("\n")
	if r.Cells != nil {
		r.cellsMarkdown(&b)
		return b.String()
	}
	if r.Size != (Size{}) {
		fmt.Fprintf(&b, "- Workload: %s, float32, causal, no dropout: %.1f GFLOP per forward pass (matrix products, full T×T)\n", r.Size, r.Size.FLOPs()/1e9)
	}
	var names []string
	for _, s := range r.Series {
		names = append(names, s.Name)
	}
	fmt.Fprintf(&b, "- Columns: %s; %d threads each; all measured in this one run, interleaved (compare within the run)\n",
		strings.Join(names, ", "), r.Threads)
	if r.Peak != nil {
		fmt.Fprintf(&b, "- Peak: %.0f GFLOP/s, the larger of: %s\n", r.Peak.GFLOPS, r.Peak.Formula)
	}
	for _, t := range r.Tables() {
		fmt.Fprintf(&b, "\n**%s**\n\n", t.Title)
		b.WriteString("| " + strings.Join(t.Header, " | ") + " |\n|")
		for i := range t.Header {
			if i == 0 {
				b.WriteString(" --- |")
			} else {
				b.WriteString(" ---: |")
			}
		}
		b.WriteString("\n")
		for _, row := range t.Rows {
			b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		}
	}
	if sk := r.Skipped(); len(sk) > 0 {
		b.WriteString("\n")
		for _, line := range sk {
			fmt.Fprintf(&b, "- %s\n", line)
		}
	}
	var firsts []string
	for _, res := range r.Results {
		if res.Mode == Forward && res.Framework == "go" && res.FirstCallMS > 0 {
			firsts = append(firsts, fmt.Sprintf("%s %s", res.Impl, FormatMS(res.FirstCallMS)))
		}
	}
	if len(firsts) > 0 {
		fmt.Fprintf(&b, "\nFirst calls on GoMLX (graph building + compilation + one run, ms), forward: %s.\n", strings.Join(firsts, "; "))
	}
	if len(r.Checks) > 0 {
		fmt.Fprintf(&b, "\n%s\n", r.checksLine())
		for _, c := range r.Checks {
			if !c.OK {
				fmt.Fprintf(&b, "- FAILED: %s: %.3g\n", c.What, c.RelErr)
			}
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

func (r *Report) cellsMarkdown(b *strings.Builder) {
	c := r.Cells
	fmt.Fprintf(b, "- `go run ./kernel run` over %d notebooks took %.1fs (exit %d)\n\n", len(c.Notebooks), c.RunSeconds, c.RunExit)
	fmt.Fprintf(b, "| | median | p90 / max | cells |\n| --- | ---: | ---: | ---: |\n")
	fmt.Fprintf(b, "| cold: first code cell of a notebook (fresh kernel, Go build cache as it is) | %.2fs | max %.2fs | %d |\n", c.ColdMedianS, c.ColdMaxS, len(c.Notebooks))
	fmt.Fprintf(b, "| warm: every later code cell | %.2fs | p90 %.2fs | %d |\n\n", c.WarmMedianS, c.WarmP90S, c.WarmCells)
	b.WriteString("| notebook | code cells | first cell | later cells, median |\n| --- | ---: | ---: | ---: |\n")
	for _, nb := range c.Notebooks {
		first, later := "—", "—"
		var rest []float64
		for i, x := range nb.Cells {
			if i == 0 {
				first = fmt.Sprintf("%.2fs", x.Seconds)
			} else {
				rest = append(rest, x.Seconds)
			}
		}
		if len(rest) > 0 {
			later = fmt.Sprintf("%.2fs", Median(rest))
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s |\n", nb.Notebook, len(nb.Cells), first, later)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(b, "\n- %s\n", n)
	}
}
