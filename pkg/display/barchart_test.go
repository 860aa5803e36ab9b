package display

import (
	"encoding/xml"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// barWidths returns the width attribute of every rect.bar, in document order.
func barWidths(t *testing.T, svg string) []float64 {
	t.Helper()
	var out []float64
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		el, ok := tok.(xml.StartElement)
		if !ok || el.Name.Local != "rect" {
			continue
		}
		var class, width string
		for _, a := range el.Attr {
			switch a.Name.Local {
			case "class":
				class = a.Value
			case "width":
				width = a.Value
			}
		}
		if class == "bar" {
			w, err := strconv.ParseFloat(width, 64)
			if err != nil {
				t.Fatalf("bar width %q: %v", width, err)
			}
			out = append(out, w)
		}
	}
	return out
}

func TestBarChartDraws(t *testing.T) {
	nan := math.NaN()
	svg, err := BarChart("wrapper", "chapter", "fast").
		Series("GoMLX", 800, 400, 200).
		Series("PyTorch (OpenBLAS)", 400, nan, 100).
		Unit(" ms").Title("MHA forward").Subtitle("b=8 T=1024").Note("shorter is faster").
		Reference(300, "target").Done()
	if err != nil {
		t.Fatal(err)
	}
	info := parseSVG(t, svg)
	// One bar per measured value, none for NaN.
	if got := info.classes["bar"]; got != 5 {
		t.Errorf("%d bars, want 5", got)
	}
	// Lengths are proportional to the values, from 0.
	w := barWidths(t, svg)
	if len(w) != 5 {
		t.Fatalf("bar widths %v", w)
	}
	want := []float64{800, 400, 400, 200, 100} // document order: per category, per series (NaN skipped)
	for i := range w {
		if math.Abs(w[i]/w[0]-want[i]/want[0]) > 0.01 {
			t.Errorf("bar %d is %.1f px, %.3f of the first; want %.3f", i, w[i], w[i]/w[0], want[i]/want[0])
		}
	}
	for _, text := range []string{"MHA forward", "b=8 T=1024", "shorter is faster", "target", "wrapper", "chapter", "fast",
		"GoMLX", "PyTorch (OpenBLAS)", "800 ms", "400 ms", "200 ms", "100 ms", "n/a", "0 ms"} {
		if !info.hasText(text) {
			t.Errorf("no text %q in %q", text, info.texts)
		}
	}
	if info.classes["reference"] != 1 || info.classes["legend-label"] != 2 || info.classes["category"] != 3 {
		t.Errorf("classes %v: want 1 reference, 2 legend labels, 3 categories", info.classes)
	}
	// Default colours: Go blue, then PyTorch orange.
	if !strings.Contains(svg, `fill="#00add8"><title>wrapper · GoMLX: 800 ms</title>`) ||
		!strings.Contains(svg, `fill="#ee4c2c"><title>wrapper · PyTorch (OpenBLAS): 400 ms</title>`) {
		t.Errorf("bars lack the default colours or tooltips")
	}
}

func TestBarChartLabelsAreEscaped(t *testing.T) {
	svg, err := BarChart(`<script>alert(1)</script>`, "a&b").
		Series(`<img src=x onerror="x()">`, 1, 2).
		Title(`"quoted" <b>`).Reference(1, "<i>ref</i>").Done()
	if err != nil {
		t.Fatal(err)
	}
	info := parseSVG(t, svg) // fails on any script element or event attribute
	for _, text := range []string{`<script>alert(1)</script>`, "a&b", `<img src=x onerror="x()">`, `"quoted" <b>`, "<i>ref</i>"} {
		if !info.hasText(text) {
			t.Errorf("label %q is not drawn as text: %q", text, info.texts)
		}
	}
	if strings.Contains(svg, "<script") || strings.Contains(svg, "<img") || strings.Contains(svg, "<i>") {
		t.Errorf("raw markup in the SVG")
	}
}

func TestBarChartAxis(t *testing.T) {
	for _, tc := range []struct {
		values []float64
		ticks  []string
	}{
		{[]float64{0.73, 1.4}, []string{"0×", "0.5×", "1×", "1.5×"}},
		{[]float64{6000, 8500}, []string{"0×", "2500×", "5000×", "7500×", "10000×"}},
		{[]float64{0, 0}, []string{"0×", "1×"}},
	} {
		svg, err := BarChart("a", "b").Series("s", tc.values...).Unit("×").Done()
		if err != nil {
			t.Fatal(err)
		}
		var ticks []string
		for _, m := range regexp.MustCompile(`class="tick">([^<]*)<`).FindAllStringSubmatch(svg, -1) {
			ticks = append(ticks, m[1])
		}
		if strings.Join(ticks, " ") != strings.Join(tc.ticks, " ") {
			t.Errorf("values %v: ticks %q, want %q", tc.values, ticks, tc.ticks)
		}
	}
}

func TestBarChartErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *BarChartBuilder
		want string
	}{
		{"no categories", BarChart().Series("s"), "display.BarChart: no categories: call BarChart with one label per group of bars"},
		{"no series", BarChart("a"), "display.BarChart: no series: add one with Series(name, values...), one value per category"},
		{"value count", BarChart("wrapper", "chapter", "fast").Series("GoMLX", 1, 2),
			`display.BarChart: series "GoMLX" has 2 values for 3 categories ["wrapper" "chapter" "fast"]: want one value per category (NaN for a missing one)`},
		{"negative", BarChart("a", "b").Series("s", 1, -2),
			`display.BarChart: series "s": value -2.0 for category "b": bars start at 0, want a finite value ≥ 0 (NaN for a missing one)`},
		{"inf", BarChart("a").Series("s", math.Inf(1)), `display.BarChart: series "s": value inf for category "a"`},
		{"all NaN", BarChart("a").Series("s", math.NaN()), "display.BarChart: every value is NaN: nothing to draw"},
		{"bad colour", BarChart("a").Series("s", 1).Colors(`red"/><script>`), `display.BarChart: Colors: "red\"/><script>" is not a #rrggbb colour`},
		{"bad reference", BarChart("a").Series("s", 1).Reference(math.NaN(), "x"), "display.BarChart: Reference(nan, …): want a finite value ≥ 0"},
		{"decimals", BarChart("a").Series("s", 1).Decimals(9), "display.BarChart: Decimals(9): want 0 to 6"},
		{"too many series", func() *BarChartBuilder {
			b := BarChart("a")
			for range 9 {
				b.Series("s", 1)
			}
			return b
		}(), "display.BarChart: 9 series, more than 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.r.Done()
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %v, want it to start with %q", err, tc.want)
			}
			if out != "" {
				t.Errorf("output despite the error")
			}
		})
	}
	// Through ShowFigure, the error fails the cell.
	_, html := capture(t)
	if msg := panicText(func() { ShowFigure(BarChart("a", "b").Series("GoMLX", 1)) }); !strings.HasPrefix(msg, `display.BarChart: series "GoMLX" has 1 values for 2 categories`) {
		t.Errorf("ShowFigure panic %q", msg)
	}
	if len(*html) != 0 {
		t.Errorf("displayed despite the error")
	}
}
