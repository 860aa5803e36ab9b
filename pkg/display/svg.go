package display

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Renderer is anything that draws itself: every builder of this package (Heatmap, Heads,
// MaskView, Table, HeadSplit, Compare) is one. Done returns HTML or SVG markup, or an error
// that names the function and the offending shapes.
type Renderer interface {
	Done() (string, error)
}

// esc makes s safe as SVG/HTML text or attribute value: invalid UTF-8 and control
// characters become U+FFFD (so the markup stays well-formed XML), then &, <, >, ', " are
// escaped. A label "<script>" is shown as the text <script>, never run.
func esc(s string) string {
	if !utf8.ValidString(s) || strings.IndexFunc(s, badXMLRune) >= 0 {
		var sb strings.Builder
		for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
			if badXMLRune(r) {
				r = '\uFFFD'
			}
			sb.WriteRune(r)
		}
		s = sb.String()
	}
	return html.EscapeString(s)
}

// badXMLRune reports runes XML 1.0 forbids (or that would garble a one-line label).
func badXMLRune(r rune) bool {
	if r == '\t' {
		return false
	}
	return unicode.IsControl(r) || r == '\uFFFE' || r == '\uFFFF' || (r >= 0xD800 && r <= 0xDFFF)
}

// clip shortens a label to at most n runes, ending it with "…" when cut; tabs and newlines
// become spaces.
func clip(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(1, n-1)]) + "…"
}

// textWidth estimates the rendered width of s in a sans-serif font of the given size.
func textWidth(s string, fontSize float64) float64 {
	return float64(utf8.RuneCountInString(s)) * fontSize * 0.6
}

// num prints a coordinate with at most one decimal.
func num(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "0"
	}
	return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
}

// svgBuf accumulates SVG elements.
type svgBuf struct{ strings.Builder }

func (b *svgBuf) printf(format string, args ...any) { fmt.Fprintf(&b.Builder, format, args...) }

// text writes a <text> element; anchor is start, middle or end. The baseline is moved by
// 0.35em so that y is the vertical centre (dominant-baseline is not honoured everywhere).
func (b *svgBuf) text(x, y, size float64, anchor, fill, attrs, s string) {
	b.printf(`<text x="%s" y="%s" font-size="%s" text-anchor="%s" fill="%s"%s>%s</text>`,
		num(x), num(y+0.35*size), num(size), anchor, fill, attrs, esc(s))
}

// hatchPath returns path data of 45° lines every gap pixels across the rectangle.
func hatchPath(x, y, w, h, gap float64) string {
	var sb strings.Builder
	for c := gap; c < w+h; c += gap {
		u0, u1 := math.Max(0, c-h), math.Min(c, w)
		fmt.Fprintf(&sb, "M%s %sL%s %s", num(x+u0), num(y+c-u0), num(x+u1), num(y+c-u1))
	}
	return sb.String()
}

// svgOpen starts a standalone, self-describing SVG document.
func svgOpen(b *svgBuf, w, h float64, class, label string) {
	b.printf(`<svg xmlns="http://www.w3.org/2000/svg" class="%s" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-label="%s" font-family="sans-serif">`,
		class, num(w), num(h), num(w), num(h), esc(label))
	b.printf(`<title>%s</title>`, esc(label))
	b.printf(`<rect class="background" x="0" y="0" width="%s" height="%s" fill="#ffffff"/>`, num(w), num(h))
}

// rgb is a colour.
type rgb struct{ r, g, b float64 }

func hexColor(s string) rgb {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	return rgb{float64(v >> 16 & 0xff), float64(v >> 8 & 0xff), float64(v & 0xff)}
}

func (c rgb) String() string {
	return fmt.Sprintf("#%02x%02x%02x", uint8(math.Round(c.r)), uint8(math.Round(c.g)), uint8(math.Round(c.b)))
}

// luminance is the relative luminance in [0, 1], used to pick black or white text.
func (c rgb) luminance() float64 {
	lin := func(v float64) float64 {
		v /= 255
		if v <= 0.03928 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.r) + 0.7152*lin(c.g) + 0.0722*lin(c.b)
}

// ColorBrewer "Blues" (sequential) and "RdBu" reversed (negative red, positive blue).
var (
	blues = []string{"#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"}
	rdBu  = []string{"#b2182b", "#d6604d", "#f4a582", "#fddbc7", "#f7f7f7", "#d1e5f0", "#92c5de", "#4393c3", "#2166ac"}
	// categorical (Tableau 10) for heads and tokens.
	categorical = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}
)

const (
	maskedFill  = "#e3e3e3"
	maskedHatch = "#8f8f8f"
	droppedInk  = "#d95f02"
	nanFill     = "#ffffff"
	nanInk      = "#c51b7d"
	inkDark     = "#1a1a1a"
	inkMuted    = "#555555"
)

// colorScale maps values to colours.
type colorScale struct {
	lo, hi    float64
	diverging bool
}

// at returns the colour of v (clamped to the range).
func (s colorScale) at(v float64) rgb {
	pal := blues
	if s.diverging {
		pal = rdBu
	}
	t := 0.5
	if s.hi > s.lo {
		t = (v - s.lo) / (s.hi - s.lo)
	}
	t = math.Max(0, math.Min(1, t))
	if math.IsNaN(t) {
		t = 0
	}
	pos := t * float64(len(pal)-1)
	i := int(math.Floor(pos))
	if i >= len(pal)-1 {
		return hexColor(pal[len(pal)-1])
	}
	a, b := hexColor(pal[i]), hexColor(pal[i+1])
	f := pos - float64(i)
	return rgb{a.r + (b.r-a.r)*f, a.g + (b.g-a.g)*f, a.b + (b.b-a.b)*f}
}

// textOn returns a readable text colour on background c.
func textOn(c rgb) string {
	if c.luminance() < 0.35 {
		return "#ffffff"
	}
	return inkDark
}

// tick prints a legend tick value compactly.
func tick(v float64) string {
	if v == 0 {
		return "0"
	}
	a := math.Abs(v)
	decimals := 0
	switch {
	case a >= 1e5 || a < 1e-3:
		return strconv.FormatFloat(v, 'g', 3, 64)
	case a >= 100:
		decimals = 0
	case a >= 1:
		decimals = 2
	default:
		decimals = 3
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
