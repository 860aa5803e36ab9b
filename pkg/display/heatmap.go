package display

import (
	"fmt"
	"math"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
)

// heatOptions are the settings Heatmap and Heads share.
type heatOptions struct {
	rowLabels, colLabels []string
	rowAxis, colAxis     string
	title                string
	mask                 *maskSpec
	dropout              *maskSpec
	scale                *colorScale
	values               int // 0 auto, 1 on, 2 off.
	maxCells             int
	rowSums              bool
	columns              int
	name                 string // the function named in errors, when not the builder's own
}

func defaultHeatOptions(maxCells int) heatOptions {
	return heatOptions{rowAxis: "queries (rows)", colAxis: "keys (columns)", maxCells: maxCells, rowSums: true}
}

const (
	// DefaultMaxCells is the most cells per side a Heatmap draws before downsampling.
	DefaultMaxCells = 48
	// DefaultMaxCellsPerHead is the same for each small multiple of Heads.
	DefaultMaxCellsPerHead = 32
	// maxPanels is the most small multiples Heads draws.
	maxPanels = 16
	// maxHeatmapElements bounds what a heatmap reads (each element becomes a float64).
	maxHeatmapElements = 1 << 25
)

// HeatmapBuilder configures an attention heatmap; create it with Heatmap, finish with Done.
type HeatmapBuilder struct {
	weights *tensors.Tensor
	o       heatOptions
}

// Heatmap draws a `[T_q, T_k]` matrix of attention weights (or scores) as an SVG heatmap:
// row i is query i, column j is key j, so a row shows where one token looks.
//
// Cells are coloured on a [0, 1] scale for probabilities, a red–white–blue scale centred on
// 0 when values have both signs, min..max otherwise. −inf cells (scores after
// masked_fill(mask, -inf)) and cells marked by Masked/Visible are hatched grey; cells marked
// by Dropout get an orange ×; NaN cells a dashed outline. Matrices up to 12×12 show their
// values; above DefaultMaxCells per side they are downsampled (block means) with a note. Above
// 576 cells the cells are drawn as one image (no per-cell tooltips), so the SVG stays small.
// A note "every row sums to 1" is written only when every row does (within 1e-3).
//
// Example:
//
//	svg, err := display.Heatmap(weights).Tokens("Your", "journey", "starts").Done()
func Heatmap(weights *tensors.Tensor) *HeatmapBuilder {
	return &HeatmapBuilder{weights: weights, o: defaultHeatOptions(DefaultMaxCells)}
}

// Tokens labels both axes (self-attention: queries and keys are the same tokens).
func (b *HeatmapBuilder) Tokens(labels ...string) *HeatmapBuilder {
	b.o.rowLabels, b.o.colLabels = labels, labels
	return b
}

// Queries labels the rows (one label per query token, `T_q` of them).
func (b *HeatmapBuilder) Queries(labels ...string) *HeatmapBuilder { b.o.rowLabels = labels; return b }

// Keys labels the columns (one label per key token, `T_k` of them).
func (b *HeatmapBuilder) Keys(labels ...string) *HeatmapBuilder { b.o.colLabels = labels; return b }

// Axes renames the axes (default "queries (rows)" and "keys (columns)").
func (b *HeatmapBuilder) Axes(rows, cols string) *HeatmapBuilder {
	b.o.rowAxis, b.o.colAxis = rows, cols
	return b
}

// Title sets the title drawn above the picture.
func (b *HeatmapBuilder) Title(title string) *HeatmapBuilder { b.o.title = title; return b }

// Masked marks hidden cells with the masked_fill convention: where mask (`[T_q, T_k]`, bool
// or numeric 0/1) is true or 1, e.g. torch.triu(ones, diagonal=1).bool().
func (b *HeatmapBuilder) Masked(mask *tensors.Tensor) *HeatmapBuilder {
	b.o.mask = &maskSpec{t: mask, hideNonZero: true}
	return b
}

// Visible marks hidden cells with the multiply convention: where mask (`[T_q, T_k]`) is
// zero or false, e.g. torch.tril(ones) — 1 means "may attend".
func (b *HeatmapBuilder) Visible(mask *tensors.Tensor) *HeatmapBuilder {
	b.o.mask = &maskSpec{t: mask, hideNonZero: false}
	return b
}

// Dropout marks the cells dropout zeroed: where dropped (`[T_q, T_k]`, bool or numeric 0/1) is
// true or 1.
// (From the output of dropout applied to ones, dropped = that output == 0.)
func (b *HeatmapBuilder) Dropout(dropped *tensors.Tensor) *HeatmapBuilder {
	b.o.dropout = &maskSpec{t: dropped, hideNonZero: true}
	return b
}

// Range fixes the colour scale to [lo, hi] (values outside are clamped), to compare
// pictures on the same scale.
func (b *HeatmapBuilder) Range(lo, hi float64) *HeatmapBuilder {
	b.o.scale = &colorScale{lo: lo, hi: hi, diverging: lo < 0 && hi > 0}
	return b
}

// Values forces the values written in the cells on or off (default: on up to 12×12).
func (b *HeatmapBuilder) Values(show bool) *HeatmapBuilder {
	b.o.values = 2
	if show {
		b.o.values = 1
	}
	return b
}

// MaxCells sets how many cells per side are drawn before downsampling (default 48).
func (b *HeatmapBuilder) MaxCells(n int) *HeatmapBuilder { b.o.maxCells = n; return b }

// RowSums turns the "every row sums to 1" note off (false) or back on (true, default).
func (b *HeatmapBuilder) RowSums(note bool) *HeatmapBuilder { b.o.rowSums = note; return b }

// Done renders the heatmap as a standalone SVG element.
func (b *HeatmapBuilder) Done() (string, error) {
	fn := nameOr(b.o.name, "display.Heatmap")
	if b.weights != nil && b.weights.Shape().Size() > maxHeatmapElements {
		return "", fmt.Errorf("%s: weights of shape %v have %d elements, more than %d: slice them first",
			fn, b.weights.Shape().Dimensions, b.weights.Shape().Size(), maxHeatmapElements)
	}
	v, err := readValues(b.weights)
	if err != nil {
		return "", fmt.Errorf("%s: weights: %w", fn, err)
	}
	if len(v.dims) != 2 {
		hint := ""
		if len(v.dims) == 3 || len(v.dims) == 4 {
			hint = " (use display.Heads for [h, T_q, T_k] or [b, h, T_q, T_k])"
		}
		return "", fmt.Errorf("%s: weights must be [T_q, T_k] (rank 2), got shape %v%s", fn, v.dims, hint)
	}
	return renderHeat(fn, v, &b.o, false)
}

// HeadsBuilder configures a grid of per-head heatmaps; create it with Heads.
type HeadsBuilder struct {
	weights *tensors.Tensor
	o       heatOptions
}

// Heads draws attention weights of shape `[h, T_q, T_k]` or `[b, h, T_q, T_k]` as titled
// small multiples ("head 0", "batch 1 · head 0", ...) on one shared colour scale, so the
// heads can be compared. Up to 16 panels are drawn (a note says when there are more).
// Masks may be `[T_q, T_k]` (the same for every head) or the weights' full shape.
func Heads(weights *tensors.Tensor) *HeadsBuilder {
	return &HeadsBuilder{weights: weights, o: defaultHeatOptions(DefaultMaxCellsPerHead)}
}

// Tokens labels both axes of every panel.
func (b *HeadsBuilder) Tokens(labels ...string) *HeadsBuilder {
	b.o.rowLabels, b.o.colLabels = labels, labels
	return b
}

// Queries labels the rows of every panel.
func (b *HeadsBuilder) Queries(labels ...string) *HeadsBuilder { b.o.rowLabels = labels; return b }

// Keys labels the columns of every panel.
func (b *HeadsBuilder) Keys(labels ...string) *HeadsBuilder { b.o.colLabels = labels; return b }

// Axes renames the axes (default "queries (rows)" and "keys (columns)").
func (b *HeadsBuilder) Axes(rows, cols string) *HeadsBuilder {
	b.o.rowAxis, b.o.colAxis = rows, cols
	return b
}

// Title sets the title drawn above the grid.
func (b *HeadsBuilder) Title(title string) *HeadsBuilder { b.o.title = title; return b }

// Masked: see HeatmapBuilder.Masked.
func (b *HeadsBuilder) Masked(mask *tensors.Tensor) *HeadsBuilder {
	b.o.mask = &maskSpec{t: mask, hideNonZero: true}
	return b
}

// Visible: see HeatmapBuilder.Visible.
func (b *HeadsBuilder) Visible(mask *tensors.Tensor) *HeadsBuilder {
	b.o.mask = &maskSpec{t: mask, hideNonZero: false}
	return b
}

// Dropout: see HeatmapBuilder.Dropout.
func (b *HeadsBuilder) Dropout(dropped *tensors.Tensor) *HeadsBuilder {
	b.o.dropout = &maskSpec{t: dropped, hideNonZero: true}
	return b
}

// Range fixes the shared colour scale.
func (b *HeadsBuilder) Range(lo, hi float64) *HeadsBuilder {
	b.o.scale = &colorScale{lo: lo, hi: hi, diverging: lo < 0 && hi > 0}
	return b
}

// Values forces values in cells on or off (default: on up to 8×8 per head).
func (b *HeadsBuilder) Values(show bool) *HeadsBuilder {
	b.o.values = 2
	if show {
		b.o.values = 1
	}
	return b
}

// Columns sets how many panels go in a row (default: the number of heads, at most 4).
func (b *HeadsBuilder) Columns(n int) *HeadsBuilder { b.o.columns = n; return b }

// MaxCells sets the cells per side of each panel before downsampling (default 32).
func (b *HeadsBuilder) MaxCells(n int) *HeadsBuilder { b.o.maxCells = n; return b }

// RowSums turns the "every row sums to 1" note off or on (default on).
func (b *HeadsBuilder) RowSums(note bool) *HeadsBuilder { b.o.rowSums = note; return b }

// Done renders the grid as one SVG element.
func (b *HeadsBuilder) Done() (string, error) {
	fn := nameOr(b.o.name, "display.Heads")
	if b.weights == nil {
		return "", fmt.Errorf("%s: weights: tensor is nil", fn)
	}
	// Only the panels that are drawn are read: a [8, 12, 1024, 1024] tensor costs 16 panels.
	limit := -1
	if dims := b.weights.Shape().Dimensions; len(dims) >= 2 {
		limit = maxPanels * dims[len(dims)-1] * dims[len(dims)-2]
	}
	v, err := readValuesPrefix(b.weights, limit)
	if err != nil {
		return "", fmt.Errorf("%s: weights: %w", fn, err)
	}
	if len(v.dims) != 3 && len(v.dims) != 4 {
		return "", fmt.Errorf("%s: weights must be [h, T_q, T_k] or [b, h, T_q, T_k], got shape %v", fn, v.dims)
	}
	return renderHeat(fn, v, &b.o, true)
}

// renderHeat draws every [T_q, T_k] panel of v.
func renderHeat(fn string, v *values, o *heatOptions, multi bool) (string, error) {
	r := len(v.dims)
	tq, tk := v.dims[r-2], v.dims[r-1]
	if v.size() == 0 || tq*tk == 0 {
		return "", fmt.Errorf("%s: weights of shape %v are empty: nothing to draw", fn, v.dims)
	}
	rowLabels, err := checkLabels(fn, "query", o.rowLabels, tq, v.dims)
	if err != nil {
		return "", err
	}
	colLabels, err := checkLabels(fn, "key", o.colLabels, tk, v.dims)
	if err != nil {
		return "", err
	}
	if err := o.mask.load(fn, "mask", v.dims); err != nil {
		return "", err
	}
	if err := o.dropout.load(fn, "dropout mask", v.dims); err != nil {
		return "", err
	}
	if o.maxCells < 1 {
		return "", fmt.Errorf("%s: MaxCells(%d) must be at least 1", fn, o.maxCells)
	}
	if s := o.scale; s != nil && !(isFinite(s.lo) && isFinite(s.hi) && s.lo < s.hi) {
		return "", fmt.Errorf("%s: Range(%v, %v) must be finite with lo < hi", fn, s.lo, s.hi)
	}

	nPanels := 1
	for _, d := range v.dims[:r-2] {
		nPanels *= d
	}
	shown := min(nPanels, maxPanels)
	var ms []*matrix
	var titles []string
	for p := range shown {
		m := newMatrix(v, p*tq*tk, tq, tk)
		m.rowLabels, m.colLabels = rowLabels, colLabels
		if fl := o.mask.flags(p, tq, tk); fl != nil {
			for i, f := range fl {
				m.masked[i] = m.masked[i] || f
			}
		}
		if fl := o.dropout.flags(p, tq, tk); fl != nil {
			m.dropped = fl
		}
		ms = append(ms, m)
		switch r {
		case 3:
			titles = append(titles, fmt.Sprintf("head %d", p))
		case 4:
			titles = append(titles, fmt.Sprintf("batch %d · head %d", p/v.dims[1], p%v.dims[1]))
		default:
			titles = append(titles, "")
		}
	}

	scale, finite := autoScale(ms)
	if o.scale != nil {
		scale = *o.scale
	}
	var notes []string
	if o.rowSums {
		allOK, worst := true, 0.0
		for _, m := range ms {
			ok, e := rowSums(m)
			allOK = allOK && ok
			worst = math.Max(worst, e)
		}
		if allOK {
			notes = append(notes, fmt.Sprintf("every row sums to 1 (largest |sum − 1| = %.1e)", worst))
		}
	}
	if !finite {
		notes = append(notes, "no finite value to colour: every cell is NaN, ±inf or masked")
	}
	if shown < nPanels {
		notes = append(notes, fmt.Sprintf("showing the first %d of %d panels", shown, nPanels))
	}
	for i, m := range ms {
		ms[i] = downsample(m, o.maxCells)
	}
	if ms[0].blockR > 1 || ms[0].blockC > 1 {
		m := ms[0]
		notes = append(notes, fmt.Sprintf("downsampled %d×%d → %d×%d cells: each cell is the mean of a %d×%d block (masked cells left out); labels are index ranges",
			m.origRows, m.origCols, m.rows, m.cols, m.blockR, m.blockC))
	}

	limit := 12
	if multi {
		limit = 8
	}
	showValues := o.values == 1 || (o.values == 0 && ms[0].rows <= limit && ms[0].cols <= limit)
	fmtNum := cellNumber(ms)
	valueW := 0.0
	if showValues {
		for _, m := range ms {
			for _, x := range m.v {
				valueW = math.Max(valueW, textWidth(fmtNum(x), 11))
			}
		}
	}
	n := 1
	for _, m := range ms {
		n = max(n, m.rows, m.cols)
	}
	var base float64
	switch {
	case showValues && multi:
		base = 32
	case showValues:
		base = 44
	case multi:
		base = math.Max(4, math.Min(28, 240/float64(n)))
	default:
		base = math.Max(5, math.Min(36, gridBudget/float64(n)))
	}

	var hasMasked, hasDropped, hasNaN bool
	f := &figure{class: "attnbook-heatmap", title: o.title, notes: notes}
	if multi {
		f.class = "attnbook-heads"
	}
	dt, _ := torchDType(v.dtype)
	f.subtitle = fmt.Sprintf("weights %s · %s", dimsString(v.dims), strings.TrimPrefix(dt, "torch."))
	for i, m := range ms {
		for k := range m.v {
			hasMasked = hasMasked || m.masked[k]
			hasDropped = hasDropped || m.dropped[k]
			hasNaN = hasNaN || (math.IsNaN(m.v[k]) && !m.masked[k])
		}
		p := &panel{m: m, title: titles[i], rowAxis: o.rowAxis, colAxis: o.colAxis, values: showValues,
			look: heatLook(m, scale, fmtNum)}
		p.layout(base, valueW)
		f.panels = append(f.panels, p)
	}
	f.columns = 1
	if multi {
		f.columns = o.columns
		if f.columns <= 0 {
			f.columns = min(4, v.dims[r-3])
		}
	}
	lg := &legend{title: "weight", scale: &scale}
	hasNegInf := false
	for _, m := range ms {
		for _, x := range m.v {
			hasNegInf = hasNegInf || math.IsInf(x, -1)
		}
	}
	if scale.lo != 0 || scale.hi != 1 || hasNegInf {
		lg.title = "value" // scores, not probabilities.
	}
	if hasMasked {
		lg.items = append(lg.items, legendItem{cellLook{fill: maskedFill, hatch: true}, "masked"})
	}
	if hasDropped {
		lg.items = append(lg.items, legendItem{cellLook{fill: "#ffffff", cross: true}, "dropped (dropout)"})
	}
	if hasNaN {
		lg.items = append(lg.items, legendItem{cellLook{fill: nanFill, nan: true}, "NaN"})
	}
	f.legend = lg
	return f.render(), nil
}

// heatLook colours the cells of a heatmap panel.
func heatLook(m *matrix, s colorScale, fmtNum func(float64) string) func(k int) cellLook {
	return func(k int) cellLook {
		i, j := k/m.cols, k%m.cols
		x := m.v[k]
		var tip string
		if m.blockR > 1 || m.blockC > 1 {
			tip = fmt.Sprintf("rows %s → columns %s: mean %s", m.rowLabels[i], m.colLabels[j], tipNumber(x))
		} else {
			tip = fmt.Sprintf("“%s” → “%s”: %s", clip(m.rowLabels[i], tipRunes), clip(m.colLabels[j], tipRunes), tipNumber(x))
		}
		var lk cellLook
		switch {
		case m.masked[k]:
			lk = cellLook{fill: maskedFill, hatch: true, class: "cell masked", textFill: inkDark}
			if math.IsInf(x, -1) {
				lk.text = "-inf"
			}
			tip += " (masked)"
		case math.IsNaN(x):
			lk = cellLook{fill: nanFill, nan: true, class: "cell nan", text: "nan", textFill: nanInk}
		default:
			c := s.at(x)
			lk = cellLook{fill: c.String(), class: "cell", text: fmtNum(x), textFill: textOn(c)}
		}
		if m.dropped[k] {
			lk.cross = true
			lk.class += " dropped"
			tip += " (dropped by dropout)"
		}
		lk.tip = tip
		return lk
	}
}
