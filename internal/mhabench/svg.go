package mhabench

import (
	"fmt"
	"html"
	"strings"
)

// seriesColor is the bar color of a series: Go blue for GoMLX's pure-Go backend, purple for
// XLA, PyTorch orange.
func seriesColor(s string) string {
	switch {
	case s == "go/go":
		return "#00ADD8"
	case strings.HasPrefix(s, "go/xla:cpu"):
		return "#7E57C2"
	case strings.HasPrefix(s, "go/"):
		return "#3949AB"
	case strings.HasPrefix(s, "pytorch/"):
		return "#EE4C2C"
	}
	return "#888888"
}

// SVG is a horizontal bar chart of the medians: one panel per mode, one group of bars per
// formulation, one bar per series (GoMLX backend or PyTorch), each labeled with its time.
// Hand-written SVG 1.1, no dependencies.
func (r *Report) SVG() string {
	const (
		width    = 820
		left     = 270 // formulation labels
		barArea  = 440
		barH     = 13
		barGap   = 2
		groupGap = 10
		top      = 54
	)
	series := r.series()
	rows := r.rows()
	modes := r.modes()
	groupH := len(series)*(barH+barGap) + groupGap
	panelH := 28 + len(rows)*groupH
	height := top + len(modes)*panelH + 16

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="10" y="20" font-size="15" font-weight="bold">Causal multi-head attention, %s: median ms (shorter is faster)</text>`+"\n",
		html.EscapeString(r.Size.String()))
	x := 10
	for _, s := range series {
		fmt.Fprintf(&b, `<rect x="%d" y="30" width="12" height="12" fill="%s"/><text x="%d" y="40">%s</text>`+"\n",
			x, seriesColor(s), x+16, html.EscapeString(seriesName(s)))
		x += 24 + 7*len(seriesName(s))
	}
	fmt.Fprintf(&b, `<text x="%d" y="40" fill="#666">%d threads, %s</text>`+"\n", x+6, r.Threads, html.EscapeString(r.Machine.CPU))
	y := top
	for _, mode := range modes {
		longest := 0.0
		for _, res := range r.Results {
			if res.Mode == mode {
				longest = max(longest, res.MedianMS)
			}
		}
		fmt.Fprintf(&b, `<text x="10" y="%d" font-size="13" font-weight="bold">%s</text>`+"\n", y+16, html.EscapeString(mode.Label()))
		y += 26
		for _, impl := range rows {
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-8, y+len(series)*(barH+barGap)/2+4, html.EscapeString(implLabel(impl)))
			for _, s := range series {
				fw, be, _ := strings.Cut(s, "/")
				res := r.Find(impl, fw, be, mode)
				if res != nil && longest > 0 {
					w := max(1, int(float64(barArea)*res.MedianMS/longest+0.5))
					fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"><title>%s %s: %s ms</title></rect>`+"\n",
						left, y, w, barH, seriesColor(s), html.EscapeString(seriesName(s)), html.EscapeString(impl), fmtMS(res.MedianMS))
					fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11">%s ms</text>`+"\n", left+w+4, y+barH-2, fmtMS(res.MedianMS))
				} else {
					fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" fill="#999">not run</text>`+"\n", left+4, y+barH-2)
				}
				y += barH + barGap
			}
			y += groupGap
		}
		y += 2
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// seriesName is how the legend names a series: "Go (go)", "Go (xla:cpu)", "PyTorch (cpu)".
func seriesName(s string) string {
	fw, be, _ := strings.Cut(s, "/")
	if fw == "pytorch" {
		return "PyTorch (" + be + ")"
	}
	return "GoMLX (" + be + ")"
}
