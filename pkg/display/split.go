package display

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Coloring chooses what the colour of an element of a HeadSplit diagram tells.
type Coloring int

const (
	// ColorByHead colours each element by the head its feature belongs to (feature j goes
	// to head j / hd): the view route keeps each head's columns together.
	ColorByHead Coloring = iota
	// ColorByToken colours each element by the token (row of x) it came from: the wrong
	// reshape shows tokens spilling across heads.
	ColorByToken
)

// SplitBuilder configures a head-splitting diagram; create it with HeadSplit.
type SplitBuilder struct {
	batch, tokens, heads, headDim int
	labels                        []string
	coloring                      Coloring
	colorSet                      bool
	wrong                         bool
	title                         string
}

// HeadSplit draws where the numbers of x `[b, t, d]` (d = heads·headDim) go when a
// multi-head attention splits them into heads:
//
//	x                       [b, t, d]
//	x.view(b, t, h, hd)     [b, t, h, hd]   (same memory, d cut into h slices of hd)
//	.transpose(1, 2)        [b, h, t, hd]   (each head gets all t tokens, hd features)
//
// Each element is written "token,feature" (its position in x) and coloured by head
// (default) or by token. WithoutTranspose draws the classic bug instead:
// x.reshape(b, h, t, hd) straight away, which fills head 0 with the first t·hd numbers of
// memory — whole tokens, not one slice of every token — coloured by token so the mixing
// shows. One batch element is drawn; every batch element moves the same way.
func HeadSplit(tokens, heads, headDim int) *SplitBuilder {
	return &SplitBuilder{batch: 1, tokens: tokens, heads: heads, headDim: headDim}
}

// Batch sets b for the shapes written on the diagram (default 1).
func (b *SplitBuilder) Batch(n int) *SplitBuilder { b.batch = n; return b }

// Tokens labels the t tokens.
func (b *SplitBuilder) Tokens(labels ...string) *SplitBuilder { b.labels = labels; return b }

// ColorBy picks what the colours show (default: by head; by token WithoutTranspose).
func (b *SplitBuilder) ColorBy(c Coloring) *SplitBuilder { b.coloring, b.colorSet = c, true; return b }

// WithoutTranspose draws the pitfall: reshape [b, t, d] directly to [b, h, t, hd].
func (b *SplitBuilder) WithoutTranspose() *SplitBuilder { b.wrong = true; return b }

// Title sets the title.
func (b *SplitBuilder) Title(title string) *SplitBuilder { b.title = title; return b }

// Limits that keep the diagram readable.
const (
	maxSplitTokens   = 12
	maxSplitFeatures = 24
)

// splitCell is one element of a stage: its token and feature in x.
type splitCell struct{ token, feature int }

// splitBlock is a labelled group of rows in a stage.
type splitBlock struct {
	label string
	rows  []string // row labels
	cells [][]splitCell
}

// Done renders the diagram as an SVG element.
func (b *SplitBuilder) Done() (string, error) {
	const fn = "display.HeadSplit"
	t, h, hd := b.tokens, b.heads, b.headDim
	if t < 1 || h < 1 || hd < 1 || b.batch < 1 {
		return "", fmt.Errorf("%s: batch, tokens, heads and headDim must be ≥ 1, got b=%d t=%d h=%d hd=%d", fn, b.batch, t, h, hd)
	}
	d := h * hd
	if t > maxSplitTokens || d > maxSplitFeatures {
		return "", fmt.Errorf("%s: t=%d, d=h·hd=%d is too big to draw readably: use t ≤ %d and d ≤ %d, the pattern is the same",
			fn, t, d, maxSplitTokens, maxSplitFeatures)
	}
	labels, err := checkLabels(fn, "token", b.labels, t, []int{b.batch, t, d})
	if err != nil {
		return "", err
	}
	title := clip(b.title, titleRunes)
	coloring := b.coloring
	if b.wrong && !b.colorSet {
		coloring = ColorByToken
	}
	tok := func(i int) string {
		if b.labels == nil {
			return "token " + strconv.Itoa(i)
		}
		return "token " + strconv.Itoa(i) + " " + clip(labels[i], 10)
	}

	// Stage 1: x [b, t, d].
	x := splitBlock{label: ""}
	for i := range t {
		x.rows = append(x.rows, tok(i))
		var row []splitCell
		for j := range d {
			row = append(row, splitCell{i, j})
		}
		x.cells = append(x.cells, row)
	}
	type stage struct {
		op, shape string
		blocks    []splitBlock
	}
	stages := []stage{{op: "x", shape: fmt.Sprintf("[b, t, d] = [%d, %d, %d]", b.batch, t, d), blocks: []splitBlock{x}}}
	var notes []string
	if !b.wrong {
		var view []splitBlock
		for i := range t {
			blk := splitBlock{label: tok(i)}
			for k := range h {
				blk.rows = append(blk.rows, "head "+strconv.Itoa(k))
				var row []splitCell
				for j := range hd {
					row = append(row, splitCell{i, k*hd + j})
				}
				blk.cells = append(blk.cells, row)
			}
			view = append(view, blk)
		}
		var tr []splitBlock
		for k := range h {
			blk := splitBlock{label: "head " + strconv.Itoa(k)}
			for i := range t {
				blk.rows = append(blk.rows, tok(i))
				var row []splitCell
				for j := range hd {
					row = append(row, splitCell{i, k*hd + j})
				}
				blk.cells = append(blk.cells, row)
			}
			tr = append(tr, blk)
		}
		stages = append(stages,
			stage{op: fmt.Sprintf("x.view(b, t, h, hd)"), shape: fmt.Sprintf("[%d, %d, %d, %d]", b.batch, t, h, hd), blocks: view},
			stage{op: ".transpose(1, 2)", shape: fmt.Sprintf("[%d, %d, %d, %d]", b.batch, h, t, hd), blocks: tr})
		notes = append(notes,
			fmt.Sprintf("view cuts each token's d=%d features into h=%d slices of hd=%d: nothing moves in memory", d, h, hd),
			fmt.Sprintf("transpose(1, 2) groups by head: head k gets %s of every token, all %d tokens in order", headFeaturesK(hd), t))
	} else {
		var rs []splitBlock
		mixed := 0
		for k := range h {
			blk := splitBlock{label: "head " + strconv.Itoa(k)}
			seen := map[int]bool{}
			var toks []string
			for r := range t {
				blk.rows = append(blk.rows, "row "+strconv.Itoa(r))
				var row []splitCell
				rowTokens := map[int]bool{}
				for j := range hd {
					f := k*t*hd + r*hd + j // flat position inside one batch element
					c := splitCell{f / d, f % d}
					row = append(row, c)
					rowTokens[c.token] = true
					if !seen[c.token] {
						seen[c.token] = true
						toks = append(toks, strconv.Itoa(c.token))
					}
				}
				if len(rowTokens) > 1 {
					mixed++
				}
				blk.cells = append(blk.cells, row)
			}
			blk.label += " ← tokens " + strings.Join(toks, ", ")
			rs = append(rs, blk)
		}
		stages = append(stages, stage{op: "x.reshape(b, h, t, hd)", shape: fmt.Sprintf("[%d, %d, %d, %d]  no transpose", b.batch, h, t, hd), blocks: rs})
		if h == 1 {
			notes = append(notes, "with h = 1 the reshape happens to be right: the only head gets every token")
		} else {
			notes = append(notes,
				fmt.Sprintf("wrong: head 0 receives the first t·hd = %d numbers of memory, i.e. whole tokens, instead of %s of every token", t*hd, featureRange(0, hd-1, "…")),
				"its \"rows\" are not tokens any more, so attention compares pieces of different tokens")
			if mixed > 0 {
				notes = append(notes, fmt.Sprintf("%d of the %d rows even mix two tokens", mixed, h*t))
			}
			notes = append(notes, "fix: x.view(b, t, h, hd).transpose(1, 2)")
		}
	}

	// Geometry.
	const (
		pad     = 12.0
		cw, ch  = 34.0, 20.0
		rowLabW = 118.0
		headerH = 40.0
		blockGp = 8.0
		stageGp = 46.0
	)
	color := func(c splitCell) rgb {
		key := c.feature / hd
		if coloring == ColorByToken {
			key = c.token
		}
		base := hexColor(categorical[key%len(categorical)])
		// Tint towards white so black text stays readable.
		return rgb{base.r + (255-base.r)*0.45, base.g + (255-base.g)*0.45, base.b + (255-base.b)*0.45}
	}
	type placed struct{ x, w, h float64 }
	var geo []placed
	x0 := pad
	maxH := 0.0
	for _, s := range stages {
		cols := len(s.blocks[0].cells[0])
		hgt := headerH
		for _, blk := range s.blocks {
			if blk.label != "" {
				hgt += 16
			}
			hgt += float64(len(blk.rows))*ch + blockGp
		}
		w := rowLabW + float64(cols)*cw
		w = math.Max(w, textWidth(s.op, 12)+4)
		for _, blk := range s.blocks {
			w = math.Max(w, textWidth(blk.label, 11)+4)
		}
		geo = append(geo, placed{x0, w, hgt})
		x0 += w + stageGp
		maxH = math.Max(maxH, hgt)
	}
	titleH := 0.0
	if title != "" {
		titleH = 24
	}
	legendItems := h
	if coloring == ColorByToken {
		legendItems = t
	}
	legendH := 22.0 + math.Ceil(float64(legendItems)/6)*18
	notesH := float64(len(notes)) * 16
	width := x0 - stageGp + pad
	width = math.Max(width, pad+float64(min(legendItems, 6))*150)
	for _, n := range notes {
		width = math.Max(width, pad+textWidth(n, 11)+pad)
	}
	height := pad + titleH + maxH + legendH + notesH + pad

	var sb svgBuf
	aria := title
	if aria == "" {
		aria = "head split: " + stages[len(stages)-1].op
	}
	svgOpen(&sb, math.Ceil(width), math.Ceil(height), "attnbook-headsplit", aria)
	y0 := pad
	if title != "" {
		sb.text(pad, y0+8, 15, "start", inkDark, ` class="title" font-weight="bold"`, title)
		y0 += titleH
	}
	for si, s := range stages {
		g := geo[si]
		sb.text(g.x, y0+8, 12, "start", inkDark, ` class="op" font-weight="bold" font-family="monospace"`, s.op)
		sb.text(g.x, y0+24, 11, "start", inkMuted, ` class="shape" font-family="monospace"`, s.shape)
		if si > 0 {
			ax := g.x - stageGp + 8
			ay := y0 + headerH + 30
			sb.printf(`<path d="M%s %sL%s %sM%s %sL%s %sL%s %s" stroke="#777777" stroke-width="2" fill="none"/>`,
				num(ax), num(ay), num(ax+stageGp-16), num(ay),
				num(ax+stageGp-22), num(ay-5), num(ax+stageGp-16), num(ay), num(ax+stageGp-22), num(ay+5))
		}
		y := y0 + headerH
		for _, blk := range s.blocks {
			if blk.label != "" {
				sb.text(g.x, y+7, 11, "start", inkDark, ` class="block-label" font-weight="bold"`, blk.label)
				y += 16
			}
			for r, row := range blk.cells {
				sb.text(g.x+rowLabW-6, y+float64(r)*ch+ch/2, 10, "end", inkMuted, ` class="row-label"`, blk.rows[r])
				for j, c := range row {
					cx, cy := g.x+rowLabW+float64(j)*cw, y+float64(r)*ch
					col := color(c)
					sb.printf(`<rect class="element" data-token="%d" data-feature="%d" x="%s" y="%s" width="%s" height="%s" fill="%s" stroke="#ffffff"><title>x[%d, %d] (token %d, feature %d, head %d)</title></rect>`,
						c.token, c.feature, num(cx), num(cy), num(cw), num(ch), col, c.token, c.feature, c.token, c.feature, c.feature/hd)
					sb.text(cx+cw/2, cy+ch/2, 9, "middle", inkDark, ` font-family="monospace"`, fmt.Sprintf("%d,%d", c.token, c.feature))
				}
			}
			y += float64(len(blk.rows))*ch + blockGp
		}
	}
	// Legend.
	ly := y0 + maxH + 4
	what := "colour = head (feature ÷ hd); cell text = token,feature of x"
	if coloring == ColorByToken {
		what = "colour = token (row of x); cell text = token,feature of x"
	}
	sb.text(pad, ly+6, 11, "start", inkMuted, ` class="legend-title"`, what)
	for k := range legendItems {
		lx := pad + float64(k%6)*150
		lyy := ly + 18 + float64(k/6)*18
		var c rgb
		label := ""
		if coloring == ColorByToken {
			c = color(splitCell{token: k})
			label = tok(k)
		} else {
			c = color(splitCell{feature: k * hd})
			label = fmt.Sprintf("head %d: %s", k, featureRange(k*hd, k*hd+hd-1, "–"))
		}
		sb.printf(`<rect x="%s" y="%s" width="14" height="14" fill="%s" stroke="#999999"/>`, num(lx), num(lyy), c)
		sb.text(lx+20, lyy+7, 11, "start", inkDark, ` class="legend-label"`, label)
	}
	ny := ly + legendH
	for _, n := range notes {
		sb.text(pad, ny+6, 11, "start", inkMuted, ` class="note"`, n)
		ny += 16
	}
	sb.printf(`</svg>`)
	return sb.String(), nil
}

// featureRange names the features lo … hi of a head: "features 2–3", or "feature 2" when the head
// has a single feature (hd = 1), where "features 2–2" would read oddly.
func featureRange(lo, hi int, dash string) string {
	if lo == hi {
		return "feature " + strconv.Itoa(lo)
	}
	return fmt.Sprintf("features %d%s%d", lo, dash, hi)
}

// headFeaturesK names the features head k receives, in terms of k: "features 3·k … 3·k+2", or
// "feature k" when each head has a single feature.
func headFeaturesK(hd int) string {
	if hd == 1 {
		return "feature k"
	}
	return fmt.Sprintf("features %d·k … %d·k+%d", hd, hd, hd-1)
}
