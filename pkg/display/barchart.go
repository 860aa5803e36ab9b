package display

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// BarChartBuilder configures a horizontal bar chart; create it with BarChart, finish with Done.
type BarChartBuilder struct {
	categories []string
	series     []barSeries
	colors     []string
	title      string
	subtitle   string
	unit       string
	decimals   int // -1: automatic.
	ref        *barReference
	notes      []string
}

type barSeries struct {
	name   string
	values []float64
}

type barReference struct {
	value float64
	label string
}

const (
	// maxBarCategories and maxBarSeries bound what a chart draws readably.
	maxBarCategories = 64
	maxBarSeries     = 8
	barCategoryRunes = 32 // category labels are clipped to this many runes.
	barSeriesRunes   = 40 // ... and series names.
	barLength        = 360.0
	barHeight        = 16.0
)

// barColors: Go's blue and PyTorch's orange first (attnbook's charts put GoMLX against PyTorch),
// then a darker orange for a second PyTorch build, then Tableau 10.
var barColors = append([]string{"#00add8", "#ee4c2c", "#a23a1f"}, categorical...)

// BarChart draws grouped horizontal bars: one group per category (for example one per
// attention formulation), one bar per series in each group (for example GoMLX, PyTorch with
// the reference BLAS, PyTorch with OpenBLAS), all on one linear axis that starts at 0. Every bar
// is labelled with its value, a legend names the series, and Reference can draw a dashed line
// at a value that matters (1 for ratios). It renders offline SVG like the other builders, every
// label escaped.
//
//	svg, err := display.BarChart("chapter", "fast").
//		Series("GoMLX", 812, 655).
//		Series("PyTorch (OpenBLAS)", 700, 690).
//		Unit(" ms").Title("MHA forward, median").Note("shorter is faster").Done()
//
// Values must be ≥ 0 and finite; NaN marks a value that was not measured (no bar, "n/a").
func BarChart(categories ...string) *BarChartBuilder {
	return &BarChartBuilder{categories: categories, decimals: -1}
}

// Series adds one bar to every group: values has one entry per category, in the order of the
// categories (NaN for one that is missing).
func (b *BarChartBuilder) Series(name string, values ...float64) *BarChartBuilder {
	b.series = append(b.series, barSeries{name: name, values: values})
	return b
}

// Colors sets the series' colours in order, as "#rrggbb" (by default Go blue, PyTorch orange,
// a darker orange, then a categorical palette).
func (b *BarChartBuilder) Colors(colors ...string) *BarChartBuilder { b.colors = colors; return b }

// Title sets the title drawn above the chart.
func (b *BarChartBuilder) Title(title string) *BarChartBuilder { b.title = title; return b }

// Subtitle sets a smaller line under the title (the size measured, the machine...).
func (b *BarChartBuilder) Subtitle(subtitle string) *BarChartBuilder {
	b.subtitle = subtitle
	return b
}

// Unit is appended verbatim to every value label and axis tick: " ms", "×", " GFLOP/s".
func (b *BarChartBuilder) Unit(unit string) *BarChartBuilder { b.unit = unit; return b }

// Decimals fixes the decimals of the value labels (0 to 6; default: 0 from 100 up, 1 from 10,
// 2 below).
func (b *BarChartBuilder) Decimals(n int) *BarChartBuilder { b.decimals = n; return b }

// Reference draws a dashed vertical line at value with a label, e.g. Reference(1, "as fast as
// PyTorch") on a chart of ratios.
func (b *BarChartBuilder) Reference(value float64, label string) *BarChartBuilder {
	b.ref = &barReference{value: value, label: label}
	return b
}

// Note adds a line of text under the chart ("shorter is faster").
func (b *BarChartBuilder) Note(text string) *BarChartBuilder {
	b.notes = append(b.notes, text)
	return b
}

// isHexColor reports whether c is "#rrggbb".
func isHexColor(c string) bool {
	if len(c) != 7 || c[0] != '#' {
		return false
	}
	_, err := strconv.ParseUint(c[1:], 16, 32)
	return err == nil && !strings.ContainsAny(c[1:], "+-_xX")
}

// check validates the chart and returns the largest value the axis must reach.
func (b *BarChartBuilder) check(fn string) (top float64, err error) {
	nc := len(b.categories)
	switch {
	case nc == 0:
		return 0, fmt.Errorf("%s: no categories: call BarChart with one label per group of bars", fn)
	case nc > maxBarCategories:
		return 0, fmt.Errorf("%s: %d categories, more than %d: draw fewer groups", fn, nc, maxBarCategories)
	case len(b.series) == 0:
		return 0, fmt.Errorf("%s: no series: add one with Series(name, values...), one value per category", fn)
	case len(b.series) > maxBarSeries:
		return 0, fmt.Errorf("%s: %d series, more than %d", fn, len(b.series), maxBarSeries)
	case b.decimals > 6:
		return 0, fmt.Errorf("%s: Decimals(%d): want 0 to 6", fn, b.decimals)
	}
	if b.decimals < -1 {
		return 0, fmt.Errorf("%s: Decimals(%d): want 0 to 6", fn, b.decimals)
	}
	for _, c := range b.colors {
		if !isHexColor(c) {
			return 0, fmt.Errorf("%s: Colors: %s is not a #rrggbb colour", fn, strconv.Quote(clip(c, 24)))
		}
	}
	drawn := false
	for _, s := range b.series {
		if len(s.values) != nc {
			return 0, fmt.Errorf("%s: series %s has %d values for %d categories %s: want one value per category (NaN for a missing one)",
				fn, strconv.Quote(clip(s.name, barSeriesRunes)), len(s.values), nc, quoteLabels(b.categories))
		}
		for i, v := range s.values {
			if math.IsNaN(v) {
				continue
			}
			if v < 0 || math.IsInf(v, 0) {
				return 0, fmt.Errorf("%s: series %s: value %s for category %s: bars start at 0, want a finite value ≥ 0 (NaN for a missing one)",
					fn, strconv.Quote(clip(s.name, barSeriesRunes)), pyRepr(v), strconv.Quote(clip(b.categories[i], barCategoryRunes)))
			}
			top, drawn = math.Max(top, v), true
		}
	}
	if !drawn {
		return 0, fmt.Errorf("%s: every value is NaN: nothing to draw", fn)
	}
	if r := b.ref; r != nil {
		if !(r.value >= 0) || math.IsInf(r.value, 0) {
			return 0, fmt.Errorf("%s: Reference(%s, …): want a finite value ≥ 0", fn, pyRepr(r.value))
		}
		top = math.Max(top, r.value)
	}
	return top, nil
}

// Done renders the chart as a standalone SVG element.
func (b *BarChartBuilder) Done() (string, error) {
	const fn = "display.BarChart"
	top, err := b.check(fn)
	if err != nil {
		return "", err
	}
	step := niceStep(top / 4)
	axisMax := math.Max(step, math.Ceil(top/step-1e-9)*step)
	format := func(v float64) string {
		if math.IsNaN(v) {
			return "n/a"
		}
		d := b.decimals
		if d < 0 {
			switch a := math.Abs(v); {
			case a >= 100 || a == 0:
				d = 0
			case a >= 10:
				d = 1
			default:
				d = 2
			}
		}
		return strconv.FormatFloat(v, 'f', d, 64) + b.unit
	}
	tickLabel := func(v float64) string { return tick(v) + b.unit }

	const pad, gap, groupGap = 12.0, 2.0, 12.0
	colors := append(append([]string(nil), b.colors...), barColors[min(len(b.colors), len(barColors)):]...)
	cats := make([]string, len(b.categories))
	labelW := 0.0
	for i, c := range b.categories {
		cats[i] = clip(c, barCategoryRunes)
		labelW = math.Max(labelW, textWidth(cats[i], 12))
	}
	labelW += 10
	valueW := 0.0
	for _, s := range b.series {
		for _, v := range s.values {
			valueW = math.Max(valueW, textWidth(format(v), 11))
		}
	}
	valueW += 8
	title := clip(b.title, titleRunes)
	subtitle := clip(b.subtitle, titleRunes)

	// Legend: one swatch per series, in a row.
	names := make([]string, len(b.series))
	legendW := 0.0
	for i, s := range b.series {
		names[i] = clip(s.name, barSeriesRunes)
		legendW += 14 + 6 + textWidth(names[i], 11) + 18
	}

	groupH := float64(len(b.series))*barHeight + float64(len(b.series)-1)*gap
	plotH := float64(len(cats))*groupH + float64(len(cats)-1)*groupGap
	refH := 0.0
	if b.ref != nil {
		refH = 16
	}
	headerH := 0.0
	if title != "" {
		headerH += 22
	}
	if subtitle != "" {
		headerH += 16
	}
	w := pad + labelW + barLength + valueW + pad
	w = math.Max(w, pad+legendW+pad)
	w = math.Max(w, pad+textWidth(title, 15)+pad)
	w = math.Max(w, pad+textWidth(subtitle, 11)+pad)
	for _, n := range b.notes {
		w = math.Max(w, pad+textWidth(clip(n, titleRunes), 11)+pad)
	}
	if b.ref != nil {
		w = math.Max(w, pad+labelW+barLength*b.ref.value/axisMax+textWidth(clip(b.ref.label, barSeriesRunes), 11)+pad)
	}
	h := pad + headerH + 22 + refH + plotH + 26 + float64(len(b.notes))*16 + pad

	var sb svgBuf
	label := title
	if label == "" {
		label = "bar chart: " + strings.Join(names, ", ")
	}
	svgOpen(&sb, math.Ceil(w), math.Ceil(h), "attnbook-barchart", label)
	y := pad
	if title != "" {
		sb.text(pad, y+8, 15, "start", inkDark, ` class="title" font-weight="bold"`, title)
		y += 22
	}
	if subtitle != "" {
		sb.text(pad, y+5, 11, "start", inkMuted, ` class="subtitle"`, subtitle)
		y += 16
	}
	x := pad
	sb.printf(`<g class="legend">`)
	for i, n := range names {
		sb.printf(`<rect x="%s" y="%s" width="14" height="14" fill="%s"/>`, num(x), num(y), colors[i])
		sb.text(x+20, y+7, 11, "start", inkDark, ` class="legend-label"`, n)
		x += 14 + 6 + textWidth(n, 11) + 18
	}
	sb.printf(`</g>`)
	y += 22

	x0 := pad + labelW
	xOf := func(v float64) float64 { return x0 + barLength*v/axisMax }
	plotTop := y + refH
	// Grid lines and ticks.
	sb.printf(`<g class="axis">`)
	for v := 0.0; v <= axisMax+step/2; v += step {
		sb.printf(`<path d="M%s %sV%s" stroke="#e6e6e6"/>`, num(xOf(v)), num(plotTop-4), num(plotTop+plotH+4))
		sb.text(xOf(v), plotTop+plotH+14, 10, "middle", inkMuted, ` class="tick"`, tickLabel(v))
	}
	sb.printf(`<path d="M%s %sV%s" stroke="#999999"/>`, num(x0), num(plotTop-4), num(plotTop+plotH+4))
	sb.printf(`</g>`)

	y = plotTop
	for ci, c := range cats {
		sb.text(x0-8, y+groupH/2, 12, "end", inkDark, ` class="category"`, c)
		for si, s := range b.series {
			v := s.values[ci]
			tip := fmt.Sprintf("%s · %s: %s", c, names[si], format(v))
			if !math.IsNaN(v) {
				sb.printf(`<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
					num(x0), num(y), num(xOf(v)-x0), num(barHeight), colors[si], esc(tip))
			}
			sb.text(xOf(math.Max(0, nanToZero(v)))+4, y+barHeight/2, 11, "start", inkDark, ` class="value"`, format(v))
			y += barHeight + gap
		}
		y += groupGap - gap
	}
	if r := b.ref; r != nil {
		rx := xOf(r.value)
		sb.printf(`<g class="reference"><path d="M%s %sV%s" stroke="%s" stroke-width="1.5" stroke-dasharray="5 3"/>`,
			num(rx), num(plotTop-refH+2), num(plotTop+plotH+4), inkDark)
		sb.text(rx+4, plotTop-refH+8, 11, "start", inkDark, ` class="reference-label"`, clip(r.label, barSeriesRunes))
		sb.printf(`</g>`)
	}
	ny := plotTop + plotH + 26
	for _, n := range b.notes {
		sb.text(pad, ny+6, 11, "start", inkMuted, ` class="note"`, clip(n, titleRunes))
		ny += 16
	}
	sb.printf(`</svg>`)
	return sb.String(), nil
}

func nanToZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// niceStep rounds a raw axis step up to 1, 2, 2.5 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if !(raw > 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}
