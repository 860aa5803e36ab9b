package display

import (
	"fmt"
	"math"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
)

// MaskBuilder configures a picture of a mask; create it with MaskView.
type MaskBuilder struct {
	mask                 *tensors.Tensor
	rowLabels, colLabels []string
	rowAxis, colAxis     string
	title                string
	whenTrue, whenFalse  string
	name                 string // the function named in errors, when not MaskView
}

// MaskView draws a `[T_q, T_k]` mask — bool, or numeric holding only 0 and 1 — as dark (true / 1)
// and light (false / 0) cells, with the values written up to 16×16.
// Use Meaning to say what true means for this mask: torch.triu(ones, diagonal=1).bool()
// marks hidden cells, torch.tril(ones) marks visible ones.
func MaskView(mask *tensors.Tensor) *MaskBuilder {
	return &MaskBuilder{mask: mask, rowAxis: "queries (rows)", colAxis: "keys (columns)"}
}

// Tokens labels both axes.
func (b *MaskBuilder) Tokens(labels ...string) *MaskBuilder {
	b.rowLabels, b.colLabels = labels, labels
	return b
}

// Queries labels the rows.
func (b *MaskBuilder) Queries(labels ...string) *MaskBuilder { b.rowLabels = labels; return b }

// Keys labels the columns.
func (b *MaskBuilder) Keys(labels ...string) *MaskBuilder { b.colLabels = labels; return b }

// Axes renames the axes.
func (b *MaskBuilder) Axes(rows, cols string) *MaskBuilder {
	b.rowAxis, b.colAxis = rows, cols
	return b
}

// Title sets the title.
func (b *MaskBuilder) Title(title string) *MaskBuilder { b.title = title; return b }

// Meaning explains the two values in the legend, e.g. Meaning("hidden (filled with -inf)",
// "visible").
func (b *MaskBuilder) Meaning(whenTrue, whenFalse string) *MaskBuilder {
	b.whenTrue, b.whenFalse = whenTrue, whenFalse
	return b
}

var (
	maskOn  = hexColor("#34495e")
	maskOff = hexColor("#f4f6f7")
)

// Done renders the mask as an SVG element.
func (b *MaskBuilder) Done() (string, error) {
	fn := nameOr(b.name, "display.MaskView")
	v, err := readValues(b.mask)
	if err != nil {
		return "", fmt.Errorf("%s: mask: %w", fn, err)
	}
	if len(v.dims) != 2 {
		return "", fmt.Errorf("%s: mask must be [T_q, T_k] (rank 2), got shape %v", fn, v.dims)
	}
	if v.size() == 0 {
		return "", fmt.Errorf("%s: mask of shape %v is empty: nothing to draw", fn, v.dims)
	}
	rows, cols := v.dims[0], v.dims[1]
	if err := checkMaskValues(fn, "mask", v); err != nil {
		return "", err
	}
	rl, err := checkLabels(fn, "query", b.rowLabels, rows, v.dims)
	if err != nil {
		return "", err
	}
	cl, err := checkLabels(fn, "key", b.colLabels, cols, v.dims)
	if err != nil {
		return "", err
	}
	m := newMatrix(v, 0, rows, cols)
	orig := append([]float64(nil), m.v...) // the values as written, e.g. -inf of an additive mask.
	for i, x := range m.v {
		m.masked[i] = false
		if x != 0 { // NaN != 0 too: true, as torch's .bool() says.
			m.v[i] = 1
		}
	}
	m.rowLabels, m.colLabels = rl, cl
	m = downsample(m, DefaultMaxCells)
	// A numeric mask holds only 0 and 1 (checkMaskValues): the legend names those values.
	on, off, share := "True", "False", "True"
	if v.kind != kindBool {
		on, off, share = "1", "0", "non-zero"
	}
	showValues := m.rows <= 16 && m.cols <= 16
	fmtNum := cellNumber([]*matrix{{v: orig, masked: make([]bool, len(orig))}})
	p := &panel{m: m, rowAxis: b.rowAxis, colAxis: b.colAxis, values: showValues}
	p.look = func(k int) cellLook {
		i, j := k/m.cols, k%m.cols
		x := m.v[k] // 0/1, or the share of non-zero cells of a downsampled block.
		frac := math.Max(0, math.Min(1, x))
		c := rgb{maskOff.r + (maskOn.r-maskOff.r)*frac, maskOff.g + (maskOn.g-maskOff.g)*frac, maskOff.b + (maskOn.b-maskOff.b)*frac}
		text := ""
		if m.blockR == 1 && m.blockC == 1 {
			text = fmtNum(orig[k])
		}
		if v.kind == kindBool {
			text = "False"
			if x != 0 {
				text = "True"
			}
		}
		cls := "cell mask-false"
		if x != 0 {
			cls = "cell mask-true"
		}
		tip := fmt.Sprintf("“%s” → “%s”: %s", clip(m.rowLabels[i], tipRunes), clip(m.colLabels[j], tipRunes), text)
		if m.blockR > 1 || m.blockC > 1 {
			text = ""
			tip = fmt.Sprintf("rows %s → columns %s: %.0f%% %s", m.rowLabels[i], m.colLabels[j], 100*frac, share)
		}
		return cellLook{fill: c.String(), text: text, textFill: textOn(c), class: cls, tip: tip}
	}
	base := 44.0
	if !showValues {
		base = math.Max(5, math.Min(36, gridBudget/float64(max(m.rows, m.cols))))
	}
	valueW := textWidth("False", 11)
	if v.kind != kindBool {
		valueW = 0
		for _, x := range orig {
			valueW = math.Max(valueW, textWidth(fmtNum(x), 11))
		}
	}
	p.layout(base, valueW)
	dt, _ := torchDType(v.dtype)
	f := &figure{class: "attnbook-mask", title: b.title, panels: []*panel{p}, columns: 1,
		subtitle: fmt.Sprintf("mask %s · %s", dimsString(v.dims), strings.TrimPrefix(dt, "torch."))}
	label := func(value, meaning string) string {
		if meaning == "" {
			return value
		}
		return value + ": " + meaning
	}
	f.legend = &legend{items: []legendItem{
		{cellLook{fill: maskOn.String()}, label(on, b.whenTrue)},
		{cellLook{fill: maskOff.String()}, label(off, b.whenFalse)},
	}}
	if m.blockR > 1 || m.blockC > 1 {
		f.notes = append(f.notes, fmt.Sprintf("downsampled %d×%d → %d×%d cells: shade = share of %s cells in the block",
			m.origRows, m.origCols, m.rows, m.cols, share))
	}
	return f.render(), nil
}
