package display

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"strings"
)

// cellLook is how one cell is drawn.
type cellLook struct {
	fill     string
	text     string // written in the cell when values are on.
	textFill string
	hatch    bool // masked: hatched grey.
	cross    bool // dropped by dropout: an orange ×.
	nan      bool // not a number: dashed magenta outline.
	class    string
	tip      string // tooltip (<title>), plain text.
}

// panel lays out one labelled grid of cells.
type panel struct {
	m                *matrix
	title            string
	rowAxis, colAxis string
	values           bool
	look             func(k int) cellLook
	raster           bool // cells as one image (see maxVectorCells), not one rectangle each.

	cw, ch           float64 // cell width and height.
	font             float64 // label font size.
	valueFont        float64
	rowStep, colStep int // draw every n-th label when cells are too small for all.
	rowLabels        []string
	colLabels        []string
	rowLabelW        float64
	colRotated       bool
	colLabelH        float64
	colOverflow      float64
	gridX, gridY     float64
	w, h             float64
}

// maxVectorCells is the most cells a figure draws as SVG rectangles, each with its tooltip
// (about 200 bytes a cell: 24×24, or four heads of 12×12, weigh about 120 KB). A bigger figure
// draws each panel's cells as one PNG image (see panel.drawRaster): the same colours, marks
// and labels, without the per-cell tooltips, so that four layers of four 64×64 heads weigh
// kilobytes. A variable so that tests can draw both ways.
var maxVectorCells = 576

const (
	labelRunes = 16  // labels are clipped to this many runes.
	tipRunes   = 64  // ... in tooltips.
	titleRunes = 200 // titles and captions.
	gridBudget = 480 // pixels a big grid may take per side.
)

// layout computes the geometry; base is the cell size shared by all panels of a figure.
func (p *panel) layout(base, valueTextW float64) {
	p.cw, p.ch = base, base
	if p.values {
		p.cw = math.Max(base, valueTextW+8)
	}
	p.font = math.Min(12, math.Max(8, p.ch*0.7))
	p.valueFont = 11
	if p.ch < 36 {
		p.valueFont = 9
	}
	p.rowStep = max(1, int(math.Ceil((p.font+1)/p.ch)))
	p.rowLabels = make([]string, len(p.m.rowLabels))
	p.rowLabelW = 0
	for i, l := range p.m.rowLabels {
		p.rowLabels[i] = clip(l, labelRunes)
		if i%p.rowStep == 0 {
			p.rowLabelW = math.Max(p.rowLabelW, textWidth(p.rowLabels[i], p.font))
		}
	}
	p.colLabels = make([]string, len(p.m.colLabels))
	maxColW := 0.0
	for j, l := range p.m.colLabels {
		p.colLabels[j] = clip(l, labelRunes)
		maxColW = math.Max(maxColW, textWidth(p.colLabels[j], p.font))
	}
	if maxColW <= p.cw-4 {
		p.colStep = 1
		p.colRotated = false
		p.colLabelH = p.font + 6
		p.colOverflow = 0
	} else {
		p.colStep = max(1, int(math.Ceil((p.font+1)/p.cw)))
		p.colRotated = true
		p.colLabelH = maxColW*0.71 + p.font*0.71 + 6
		p.colOverflow = maxColW*0.71 + p.font*0.5
	}
	titleH := 0.0
	if p.title != "" {
		titleH = 20
	}
	axisH := 16.0
	p.gridY = titleH + axisH + p.colLabelH
	p.gridX = 18 + p.rowLabelW + 6
	gridW, gridH := float64(p.m.cols)*p.cw, float64(p.m.rows)*p.ch
	p.w = p.gridX + gridW + math.Max(p.colOverflow-p.cw/2, 0) + 6
	p.w = math.Max(p.w, textWidth(p.title, 13)+12)
	p.w = math.Max(p.w, p.gridX+gridW/2+textWidth(p.colAxis, 11)/2+4)
	p.h = p.gridY + gridH + 6
}

// draw writes the panel with its top-left corner at (x, y).
func (p *panel) draw(b *svgBuf, x, y float64) {
	m := p.m
	gx, gy := x+p.gridX, y+p.gridY
	gridW, gridH := float64(m.cols)*p.cw, float64(m.rows)*p.ch
	b.printf(`<g class="panel">`)
	if p.title != "" {
		b.text(x+4, y+10, 13, "start", inkDark, ` class="panel-title" font-weight="bold"`, p.title)
	}
	titleH := 0.0
	if p.title != "" {
		titleH = 20
	}
	b.text(gx+gridW/2, y+titleH+7, 11, "middle", inkMuted, ` class="axis-name" font-style="italic"`, p.colAxis)
	ry := gy + gridH/2
	b.printf(`<text class="axis-name" x="%s" y="%s" font-size="11" text-anchor="middle" fill="%s" font-style="italic" transform="rotate(-90 %s %s)">%s</text>`,
		num(x+10), num(ry+4), inkMuted, num(x+10), num(ry+4), esc(p.rowAxis))
	for i, l := range p.rowLabels {
		if i%p.rowStep != 0 {
			continue
		}
		b.text(gx-4, gy+(float64(i)+0.5)*p.ch, p.font, "end", inkDark, ` class="row-label"`, l)
	}
	for j, l := range p.colLabels {
		if j%p.colStep != 0 {
			continue
		}
		cx := gx + (float64(j)+0.5)*p.cw
		if !p.colRotated {
			b.text(cx, gy-4-p.font/2, p.font, "middle", inkDark, ` class="col-label"`, l)
			continue
		}
		bx, by := cx+p.font*0.3, gy-5
		b.printf(`<text class="col-label" x="%s" y="%s" font-size="%s" text-anchor="start" fill="%s" transform="rotate(-45 %s %s)">%s</text>`,
			num(bx), num(by), num(p.font), inkDark, num(bx), num(by), esc(l))
	}
	looks := make([]cellLook, m.rows*m.cols)
	for k := range looks {
		looks[k] = p.look(k)
	}
	if p.raster {
		p.drawRaster(b, gx, gy, looks)
	} else {
		p.drawRects(b, gx, gy, looks)
	}
	b.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#999999" stroke-width="1"/>`,
		num(gx), num(gy), num(gridW), num(gridH))
	b.printf(`</g>`)
}

// drawRects draws every cell as a rectangle with its tooltip, then its marks.
func (p *panel) drawRects(b *svgBuf, gx, gy float64, looks []cellLook) {
	m := p.m
	stroke := ""
	if p.ch >= 8 {
		stroke = ` stroke="#ffffff" stroke-width="1"`
	}
	for i := range m.rows {
		for j := range m.cols {
			lk := looks[m.at(i, j)]
			b.printf(`<rect class="%s" data-row="%d" data-col="%d" x="%s" y="%s" width="%s" height="%s" fill="%s"%s>`,
				lk.class, i, j, num(gx+float64(j)*p.cw), num(gy+float64(i)*p.ch), num(p.cw), num(p.ch), lk.fill, stroke)
			if lk.tip != "" {
				b.printf(`<title>%s</title>`, esc(lk.tip))
			}
			b.printf(`</rect>`)
			p.drawMarks(b, lk, gx+float64(j)*p.cw, gy+float64(i)*p.ch, true)
		}
	}
}

// drawRaster draws the cells' colours as one PNG image of one pixel per cell, scaled up
// without smoothing, so a big grid costs kilobytes instead of a rectangle per cell. The
// colours are the rectangles' own; masked cells are transparent over a grey, hatched
// backdrop; white lines separate cells where drawRects would stroke them.
func (p *panel) drawRaster(b *svgBuf, gx, gy float64, looks []cellLook) {
	m := p.m
	gridW, gridH := float64(m.cols)*p.cw, float64(m.rows)*p.ch
	img := image.NewNRGBA(image.Rect(0, 0, m.cols, m.rows))
	anyMasked := false
	for k, lk := range looks {
		if lk.hatch {
			anyMasked = true
			continue // transparent: the backdrop shows.
		}
		c := hexColor(lk.fill)
		img.SetNRGBA(k%m.cols, k/m.cols, color.NRGBA{uint8(c.r), uint8(c.g), uint8(c.b), 0xff})
	}
	if anyMasked {
		b.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`, num(gx), num(gy), num(gridW), num(gridH), maskedFill)
		b.printf(`<path class="hatch" d="%s" stroke="%s" stroke-width="1" fill="none"/>`,
			hatchPath(gx, gy, gridW, gridH, math.Max(4, math.Min(7, p.ch/5))), maskedHatch)
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err != nil {
		panic(fmt.Sprintf("display: encoding a %d×%d PNG: %v", m.cols, m.rows, err)) // cannot happen: in memory.
	}
	b.printf(`<image class="cells" x="%s" y="%s" width="%s" height="%s" preserveAspectRatio="none" image-rendering="pixelated" href="data:image/png;base64,%s"/>`,
		num(gx), num(gy), num(gridW), num(gridH), base64.StdEncoding.EncodeToString(buf.Bytes()))
	if p.ch >= 8 {
		var d strings.Builder
		for j := 1; j < m.cols; j++ {
			fmt.Fprintf(&d, "M%s %sV%s", num(gx+float64(j)*p.cw), num(gy), num(gy+gridH))
		}
		for i := 1; i < m.rows; i++ {
			fmt.Fprintf(&d, "M%s %sH%s", num(gx), num(gy+float64(i)*p.ch), num(gx+gridW))
		}
		if d.Len() > 0 {
			b.printf(`<path class="cell-lines" d="%s" stroke="#ffffff" stroke-width="1" fill="none"/>`, d.String())
		}
	}
	for k, lk := range looks {
		p.drawMarks(b, lk, gx+float64(k%m.cols)*p.cw, gy+float64(k/m.cols)*p.ch, false)
	}
}

// drawMarks draws what goes over a cell's colour: the hatching of a masked cell (when
// hatch; a raster hatches all masked cells at once), a NaN's dashed outline, dropout's
// orange frame and ×, the value.
func (p *panel) drawMarks(b *svgBuf, lk cellLook, cx, cy float64, hatch bool) {
	if lk.hatch && hatch {
		b.printf(`<path d="%s" stroke="%s" stroke-width="1" fill="none"/>`,
			hatchPath(cx+0.5, cy+0.5, p.cw-1, p.ch-1, math.Max(4, math.Min(7, p.ch/5))), maskedHatch)
	}
	if lk.nan {
		b.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="%s" stroke-width="1" stroke-dasharray="3 2"/>`,
			num(cx+1.5), num(cy+1.5), num(p.cw-3), num(p.ch-3), nanInk)
	}
	if lk.cross {
		// An orange frame and a small × in the top-right corner: the value stays readable.
		sw := math.Max(1, math.Min(2, p.ch/12))
		s := math.Min(p.cw, p.ch) * 0.2
		b.printf(`<path class="dropped-mark" d="M%s %sh%sv%sh%sZM%s %sl%s %sM%s %sl%s %s" stroke="%s" stroke-width="%s" fill="none"/>`,
			num(cx+sw), num(cy+sw), num(p.cw-2*sw), num(p.ch-2*sw), num(-(p.cw - 2*sw)),
			num(cx+p.cw-sw-s-2), num(cy+sw+2), num(s), num(s), num(cx+p.cw-sw-2), num(cy+sw+2), num(-s), num(s),
			droppedInk, num(sw))
	}
	if p.values && lk.text != "" {
		b.text(cx+p.cw/2, cy+p.ch/2, p.valueFont, "middle", lk.textFill, ` class="value"`, lk.text)
	}
}

// legendItem is a swatch with its meaning.
type legendItem struct {
	look  cellLook
	label string
}

// legend draws an optional colour bar and swatches; it returns the size used.
type legend struct {
	title string
	scale *colorScale
	items []legendItem
}

func (l *legend) size() (w, h float64) {
	if l.scale != nil {
		w = 14 + 6 + math.Max(textWidth(tick(l.scale.lo), 11), textWidth(tick(l.scale.hi), 11))
		h = 24 + legendBarH + 10
	}
	w = math.Max(w, textWidth(l.title, 12))
	for _, it := range l.items {
		w = math.Max(w, 14+6+textWidth(it.label, 11))
		h += 20
	}
	return w + 4, h
}

const legendBarH = 160.0

func (l *legend) draw(b *svgBuf, x, y float64) {
	b.printf(`<g class="legend">`)
	if l.scale != nil {
		b.text(x, y+6, 12, "start", inkDark, ` font-weight="bold"`, l.title)
		top := y + 24
		const steps = 40
		for s := range steps {
			v := l.scale.hi - (l.scale.hi-l.scale.lo)*(float64(s)+0.5)/steps
			b.printf(`<rect x="%s" y="%s" width="14" height="%s" fill="%s"/>`,
				num(x), num(top+float64(s)*legendBarH/steps), num(legendBarH/steps+0.5), l.scale.at(v))
		}
		b.printf(`<rect x="%s" y="%s" width="14" height="%s" fill="none" stroke="#999999"/>`, num(x), num(top), num(legendBarH))
		ticks := []float64{l.scale.hi, (l.scale.hi + l.scale.lo) / 2, l.scale.lo}
		for i, tv := range ticks {
			ty := top + legendBarH*float64(i)/2
			b.printf(`<path d="M%s %sL%s %s" stroke="#666666"/>`, num(x+14), num(ty), num(x+18), num(ty))
			b.text(x+20, ty, 11, "start", inkDark, ` class="tick"`, tick(tv))
		}
		y = top + legendBarH + 10
	}
	for _, it := range l.items {
		lk := it.look
		b.printf(`<rect x="%s" y="%s" width="14" height="14" fill="%s" stroke="#999999"/>`, num(x), num(y), lk.fill)
		if lk.hatch {
			b.printf(`<path d="%s" stroke="%s" stroke-width="1" fill="none"/>`, hatchPath(x+0.5, y+0.5, 13, 13, 4.5), maskedHatch)
		}
		if lk.cross {
			b.printf(`<path d="M%s %sh12v12h-12ZM%s %sl4 4M%s %sl-4 4" stroke="%s" stroke-width="1.5" fill="none"/>`,
				num(x+1), num(y+1), num(x+8), num(y+2.5), num(x+12), num(y+2.5), droppedInk)
		}
		if lk.nan {
			b.printf(`<rect x="%s" y="%s" width="11" height="11" fill="none" stroke="%s" stroke-dasharray="3 2"/>`,
				num(x+1.5), num(y+1.5), nanInk)
		}
		b.text(x+20, y+7, 11, "start", inkDark, ` class="legend-label"`, it.label)
		y += 20
	}
	b.printf(`</g>`)
}

// figure assembles a header, a grid of panels, a legend and notes into one SVG.
type figure struct {
	class    string
	title    string
	subtitle string
	panels   []*panel
	columns  int
	legend   *legend
	notes    []string
}

func (f *figure) render() string {
	const pad = 12.0
	f.title = clip(f.title, titleRunes)
	headerH := 0.0
	if f.title != "" {
		headerH += 22
	}
	if f.subtitle != "" {
		headerH += 16
	}
	cols := max(1, min(f.columns, len(f.panels)))
	cells := 0
	for _, p := range f.panels {
		cells += p.m.rows * p.m.cols
	}
	for _, p := range f.panels {
		p.raster = cells > maxVectorCells
	}
	slotW, slotH := 0.0, 0.0
	for _, p := range f.panels {
		slotW, slotH = math.Max(slotW, p.w), math.Max(slotH, p.h)
	}
	rows := (len(f.panels) + cols - 1) / cols
	gap := 14.0
	panelsW := float64(cols)*slotW + float64(cols-1)*gap
	panelsH := float64(rows)*slotH + float64(max(rows-1, 0))*gap
	lw, lh := 0.0, 0.0
	if f.legend != nil {
		lw, lh = f.legend.size()
	}
	notesH := float64(len(f.notes)) * 16
	w := pad + panelsW + 20 + lw + pad
	w = math.Max(w, pad+textWidth(f.title, 15)+pad)
	w = math.Max(w, pad+textWidth(f.subtitle, 11)+pad)
	for _, n := range f.notes {
		w = math.Max(w, pad+textWidth(n, 11)+pad)
	}
	h := pad + headerH + math.Max(panelsH, lh+20) + notesH + pad
	var b svgBuf
	label := f.title
	if label == "" {
		label = f.subtitle
	}
	svgOpen(&b, math.Ceil(w), math.Ceil(h), f.class, label)
	y := pad
	if f.title != "" {
		b.text(pad, y+8, 15, "start", inkDark, ` class="title" font-weight="bold"`, f.title)
		y += 22
	}
	if f.subtitle != "" {
		b.text(pad, y+5, 11, "start", inkMuted, ` class="subtitle"`, f.subtitle)
		y += 16
	}
	for i, p := range f.panels {
		r, c := i/cols, i%cols
		p.draw(&b, pad+float64(c)*(slotW+gap), y+float64(r)*(slotH+gap))
	}
	if f.legend != nil {
		f.legend.draw(&b, pad+panelsW+20, y+20)
	}
	ny := y + math.Max(panelsH, lh+20) + 4
	for _, n := range f.notes {
		b.text(pad, ny+6, 11, "start", inkMuted, ` class="note"`, n)
		ny += 16
	}
	b.printf(`</svg>`)
	return b.String()
}

// dimsString prints dims as [2, 6, 6].
func dimsString(dims []int) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
