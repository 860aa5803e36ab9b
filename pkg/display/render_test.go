package display

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

var (
	negInf = float32(math.Inf(-1))
	nan32  = float32(math.NaN())
	// seedTokens are the six tokens of the seed notebooks' "Your journey starts with one step".
	seedTokens = []string{"Your", "journey", "starts", "with", "one", "step"}
)

// seedCausalWeights is attn_weights after the causal mask in seed 001 (rows sum to 1 up to
// the 4 printed decimals).
func seedCausalWeights() *tensors.Tensor {
	return tensors.FromFlatDataAndDimensions([]float32{
		1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000,
		0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000,
		0.3800, 0.3097, 0.3103, 0.0000, 0.0000, 0.0000,
		0.2758, 0.2460, 0.2462, 0.2319, 0.0000, 0.0000,
		0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0.0000,
		0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529}, 6, 6)
}

// seedMaskedScores is `masked` in seed 001: scores after masked_fill(mask.bool(), -inf).
func seedMaskedScores() *tensors.Tensor {
	i := negInf
	return tensors.FromFlatDataAndDimensions([]float32{
		0.2899, i, i, i, i, i,
		0.4656, 0.1723, i, i, i, i,
		0.4594, 0.1703, 0.1731, i, i, i,
		0.2642, 0.1024, 0.1036, 0.0186, i, i,
		0.2183, 0.0874, 0.0882, 0.0177, 0.0786, i,
		0.3408, 0.1270, 0.1290, 0.0198, 0.1290, 0.0078}, 6, 6)
}

// seedDropout is dropout(ones(6, 6)) with p=0.5 and seed 123 in seed 001: 0 = dropped.
var seedDropout = []float32{
	2, 2, 0, 2, 2, 0,
	0, 0, 0, 2, 0, 2,
	2, 2, 2, 2, 0, 2,
	0, 2, 2, 0, 0, 2,
	0, 2, 0, 2, 0, 2,
	0, 2, 2, 2, 2, 0}

// seedDropped returns the weights after that dropout and the "dropped" mask.
func seedDropped() (weights, dropped *tensors.Tensor) {
	w := tensors.MustCopyFlatData[float32](seedCausalWeights())
	d := make([]bool, 36)
	for k := range w {
		w[k] *= seedDropout[k]
		d[k] = seedDropout[k] == 0
	}
	return tensors.FromFlatDataAndDimensions(w, 6, 6), tensors.FromFlatDataAndDimensions(d, 6, 6)
}

func causalBool(n int) *tensors.Tensor {
	m := make([]bool, n*n)
	for i := range n {
		for j := range n {
			m[i*n+j] = j > i
		}
	}
	return tensors.FromFlatDataAndDimensions(m, n, n)
}

func trilOnes(n int) *tensors.Tensor {
	m := make([]float32, n*n)
	for i := range n {
		for j := 0; j <= i; j++ {
			m[i*n+j] = 1
		}
	}
	return tensors.FromFlatDataAndDimensions(m, n, n)
}

// seed002Scores is attn_scores of seed 000 after masked_fill: [1, 2, 3, 3].
func seed002Scores() *tensors.Tensor {
	i := negInf
	return tensors.FromFlatDataAndDimensions([]float32{
		-318.2692, i, i, -294.6535, 9.5538, i, -87.5604, -1.7744, -12.7621,
		116.1476, i, i, 178.4425, 171.2106, i, 42.0843, 31.7945, 10.5541}, 1, 2, 3, 3)
}

// softmaxRows applies a softmax over the last axis of rows of length n, scaled by 1/sqrt(scale).
func softmaxRows(x []float32, n int, scale float64) []float32 {
	out := make([]float32, len(x))
	for r := 0; r < len(x); r += n {
		mx := math.Inf(-1)
		for _, v := range x[r : r+n] {
			mx = math.Max(mx, float64(v)/math.Sqrt(scale))
		}
		sum := 0.0
		for j, v := range x[r : r+n] {
			e := math.Exp(float64(v)/math.Sqrt(scale) - mx)
			out[r+j] = float32(e)
			sum += e
		}
		for j := range n {
			out[r+j] = float32(float64(out[r+j]) / sum)
		}
	}
	return out
}

func ramp(n int, f func(i int) float32, dims ...int) *tensors.Tensor {
	d := make([]float32, n)
	for i := range d {
		d[i] = f(i)
	}
	return tensors.FromFlatDataAndDimensions(d, dims...)
}

// svgInfo is what an SVG draws, read back with a strict XML parser.
type svgInfo struct {
	classes map[string]int // element count per class token
	texts   []string       // character data of <text> elements
	all     string         // all character data
	fills   []string       // fill of each rect.cell, in order
	rasters []image.Image  // the PNG of each image.cells (cells drawn as pixels), in order
}

// rasterCells counts the pixels of the rasters (one per cell) and the transparent ones (masked).
func (s svgInfo) rasterCells() (cells, masked int) {
	for _, img := range s.rasters {
		b := img.Bounds()
		cells += b.Dx() * b.Dy()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				if _, _, _, a := img.At(x, y).RGBA(); a == 0 {
					masked++
				}
			}
		}
	}
	return cells, masked
}

func parseSVG(t testing.TB, svg string) svgInfo {
	t.Helper()
	info := svgInfo{classes: map[string]int{}}
	dec := xml.NewDecoder(strings.NewReader(svg))
	dec.Strict = true
	var stack []string
	var all strings.Builder
	depth, roots := 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%.300s", err, svg)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if x.Name.Local != "svg" {
					t.Fatalf("root element is <%s>, want <svg>", x.Name.Local)
				}
			}
			depth++
			if x.Name.Local == "script" || x.Name.Local == "foreignObject" {
				t.Fatalf("SVG contains a <%s> element", x.Name.Local)
			}
			for _, a := range x.Attr {
				if strings.HasPrefix(strings.ToLower(a.Name.Local), "on") {
					t.Fatalf("SVG has an event handler attribute %s=%q", a.Name.Local, a.Value)
				}
				if a.Name.Local == "class" {
					for _, c := range strings.Fields(a.Value) {
						info.classes[c]++
					}
				}
			}
			class := attr(x, "class")
			if f := strings.Fields(class); x.Name.Local == "rect" && len(f) > 0 && f[0] == "cell" {
				info.fills = append(info.fills, attr(x, "fill"))
			}
			if x.Name.Local == "image" && class == "cells" {
				data, ok := strings.CutPrefix(attr(x, "href"), "data:image/png;base64,")
				if !ok {
					t.Fatalf("an image of cells is not a PNG data URI: %.80s", attr(x, "href"))
				}
				raw, err := base64.StdEncoding.DecodeString(data)
				if err != nil {
					t.Fatalf("an image of cells is not base64: %v", err)
				}
				img, err := png.Decode(bytes.NewReader(raw))
				if err != nil {
					t.Fatalf("an image of cells is not a PNG: %v", err)
				}
				info.rasters = append(info.rasters, img)
			}
			stack = append(stack, x.Name.Local)
		case xml.EndElement:
			depth--
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 && stack[len(stack)-1] == "text" {
				info.texts = append(info.texts, string(x))
			}
			all.Write(x)
		}
	}
	if roots != 1 {
		t.Fatalf("%d root elements", roots)
	}
	info.all = all.String()
	return info
}

// attr returns the value of e's attribute name, "" when it has none.
func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (s svgInfo) hasText(want string) bool {
	for _, t := range s.texts {
		if t == want {
			return true
		}
	}
	return false
}

func (s svgInfo) textContaining(sub string) bool {
	for _, t := range s.texts {
		if strings.Contains(t, sub) {
			return true
		}
	}
	return false
}

// TestGoldens renders each picture and compares it with testdata/golden/ (-update rewrites).
func TestGoldens(t *testing.T) {
	droppedW, droppedMask := seedDropped()
	scores := tensors.MustCopyFlatData[float32](seed002Scores())
	weights002 := tensors.FromFlatDataAndDimensions(softmaxRows(scores, 3, 3), 1, 2, 3, 3)
	cross := ramp(15, func(i int) float32 { return float32(math.Sin(float64(i))) * 3 }, 3, 5)
	withNaN := ramp(9, func(i int) float32 {
		if i == 4 {
			return nan32
		}
		return float32(i) / 8
	}, 3, 3)
	for _, tc := range []struct {
		name string
		r    Renderer
	}{
		{"heatmap_seed_causal.svg", Heatmap(seedCausalWeights()).Tokens(seedTokens...).Visible(trilOnes(6)).Title("Causal attention weights (seed 001)")},
		{"heatmap_seed_scores_neginf.svg", Heatmap(seedMaskedScores()).Tokens(seedTokens...).Title("Scores after masked_fill(mask, -inf)")},
		{"heatmap_seed_dropout.svg", Heatmap(droppedW).Tokens(seedTokens...).Dropout(droppedMask).Masked(causalBool(6)).Title("After dropout(p=0.5)")},
		{"heatmap_cross_attention.svg", Heatmap(cross).Queries("Le", "chat", "dort").Keys("The", "cat", "is", "sleeping", ".").Title("Cross-attention scores")},
		{"heatmap_nan.svg", Heatmap(withNaN)},
		{"heads_seed000_scores.svg", Heads(seed002Scores()).Tokens("t0", "t1", "t2").Title("Scores per head (seed 000)")},
		{"heads_seed000_weights.svg", Heads(weights002).Tokens("t0", "t1", "t2").Title("Weights per head")},
		{"heads_h4.svg", Heads(ramp(4*5*5, func(i int) float32 { return float32((i*7)%11) / 10 }, 4, 5, 5)).Columns(2)},
		{"mask_causal_bool.svg", MaskView(causalBool(6)).Tokens(seedTokens...).Meaning("hidden (masked_fill -inf)", "visible").Title("torch.triu(ones(6, 6), diagonal=1).bool()")},
		{"mask_tril_float.svg", MaskView(trilOnes(4)).Meaning("may attend", "hidden")},
		{"compare_routes.html", Compare().Title("Two routes to causal weights").
			Add("masked_fill(-inf), then softmax", Heatmap(seedCausalWeights()).Tokens(seedTokens...).Masked(causalBool(6))).
			Add("softmax, × tril, renormalise", Heatmap(seedCausalWeights()).Tokens(seedTokens...).Visible(trilOnes(6)))},
		{"table_2d.html", Table(seedCausalWeights()).Title("attn_weights").Labels(0, seedTokens...).Labels(1, seedTokens...).Axes("query", "key")},
		{"table_3d.html", Table(ramp(2*3*4, func(i int) float32 { return float32(i) }, 2, 3, 4)).Axes("batch", "token", "feature")},
		{"table_1d_int.html", Table(tensors.FromValue([]int64{4, 10, 21}))},
		{"table_scalar.html", Table(tensors.FromScalar(float32(1.8524)))},
		{"table_summarised.html", Table(ramp(2000, func(i int) float32 { return float32(i) / 3 }, 40, 50))},
		{"table_empty.html", Table(tensors.FromFlatDataAndDimensions([]float32{}, 0, 3))},
		{"split_view_transpose.svg", HeadSplit(3, 2, 3).Tokens("Your", "journey", "starts").Title("view, then transpose(1, 2)")},
		{"split_view_by_token.svg", HeadSplit(3, 2, 3).ColorBy(ColorByToken)},
		{"split_pitfall.svg", HeadSplit(3, 2, 3).Tokens("Your", "journey", "starts").WithoutTranspose().Title("reshape without transpose")},
		{"barchart_times.svg", BarChart("wrapper", "chapter", "combined_qkv", "einsum", "gomlx_layers", "fast").
			Series("GoMLX (pure Go)", 8400, 7500, 7400, 7600, 7700, 6100).
			Series("PyTorch (reference BLAS)", 13500, 12000, 11800, 12300, 12100, 11000).
			Series("PyTorch (OpenBLAS)", 1500, 1200, 1150, 1250, math.NaN(), 1100).
			Unit(" ms").Title("MHA forward, median").Subtitle("b=8 T=1024 d=768 h=12 (made-up numbers)").Note("shorter is faster")},
		{"barchart_ratio.svg", BarChart("wrapper", "chapter", "fast").Series("GoMLX / PyTorch", 0.62, 0.63, 0.55).
			Unit("×").Decimals(2).Reference(1, "as fast as PyTorch")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.r.Done()
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(tc.name, ".svg") {
				parseSVG(t, out)
			}
			if strings.Contains(strings.ToLower(out), "<script") || strings.Contains(out, "http://") && !strings.Contains(out, `xmlns="http://www.w3.org/2000/svg"`) {
				t.Fatalf("output references scripts or external resources")
			}
			checkGolden(t, "golden/"+tc.name, out)
		})
	}
}

// TestHeatmapDraws checks what a heatmap draws, from the parsed SVG.
func TestHeatmapDraws(t *testing.T) {
	droppedW, droppedMask := seedDropped()
	for _, tc := range []struct {
		name                       string
		r                          Renderer
		cells, masked, dropped     int
		texts                      []string // must be drawn as text
		rowSumNote, downsampleNote bool
	}{
		{name: "causal via Visible(tril)", r: Heatmap(seedCausalWeights()).Tokens(seedTokens...).Visible(trilOnes(6)),
			cells: 36, masked: 15, texts: []string{"Your", "journey", "step", "1.00", "0.55", "masked", "queries (rows)", "keys (columns)"}, rowSumNote: true},
		{name: "causal via Masked(triu bool)", r: Heatmap(seedCausalWeights()).Masked(causalBool(6)),
			cells: 36, masked: 15, texts: []string{"0", "5"}, rowSumNote: true},
		{name: "-inf scores are masked without a mask", r: Heatmap(seedMaskedScores()),
			cells: 36, masked: 15, texts: []string{"-inf", "0.47"}},
		{name: "dropout: marked, rows no longer sum to 1", r: Heatmap(droppedW).Dropout(droppedMask),
			cells: 36, dropped: 15, texts: []string{"dropped (dropout)"}},
		{name: "values off above 12x12", r: Heatmap(ramp(13*13, func(i int) float32 { return 1.0 / 13 }, 13, 13)),
			cells: 169, rowSumNote: true},
		{name: "1000x1000 is downsampled", r: Heatmap(ramp(1000*1000, func(i int) float32 { return float32(i%1000) / 1000 }, 1000, 1000)),
			cells: 48 * 48, downsampleNote: true},
		{name: "causal 200x200 downsampled keeps masked blocks", r: Heatmap(ramp(200*200, func(i int) float32 {
			if i%200 > i/200 {
				return negInf
			}
			return 0.5
		}, 200, 200)), cells: 40 * 40, masked: 40 * 39 / 2, downsampleNote: true}, // blocks of 5×5
		{name: "all NaN is a picture with a note", r: Heatmap(ramp(4, func(int) float32 { return nan32 }, 2, 2)),
			cells: 4, texts: []string{"nan", "no finite value to colour: every cell is NaN, ±inf or masked"}},
		{name: "heads 2x3", r: Heads(ramp(2*3*4*4, func(i int) float32 { return 0.25 }, 2, 3, 4, 4)),
			cells: 6 * 16, texts: []string{"batch 0 · head 0", "batch 1 · head 2"}, rowSumNote: true},
		{name: "heads with a broadcast mask", r: Heads(ramp(3*6*6, func(i int) float32 { return 0.1 }, 3, 6, 6)).Masked(causalBool(6)),
			cells: 3 * 36, masked: 3 * 15, texts: []string{"head 2"}},
		{name: "heads beyond 16 panels", r: Heads(ramp(5*4*3*3, func(i int) float32 { return 0.5 }, 5, 4, 3, 3)),
			cells: 16 * 9, texts: []string{"showing the first 16 of 20 panels"}},
		{name: "mask view", r: MaskView(causalBool(6)), cells: 36, texts: []string{"True", "False"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.r.Done()
			if err != nil {
				t.Fatal(err)
			}
			if len(out) > 1<<20 {
				t.Errorf("SVG is %d bytes, want < 1 MiB", len(out))
			}
			info := parseSVG(t, out)
			rasterCells, rasterMasked := info.rasterCells()
			if got := info.classes["cell"] + rasterCells; got != tc.cells {
				t.Errorf("%d cells drawn, want %d", got, tc.cells)
			}
			if raster := rasterCells > 0; raster != (tc.cells > maxVectorCells) {
				t.Errorf("%d cells drawn as pixels and %d as rectangles: want rectangles up to %d cells, pixels above",
					rasterCells, info.classes["cell"], maxVectorCells)
			}
			if got := info.classes["masked"] + rasterMasked; got != tc.masked {
				t.Errorf("%d masked cells, want %d", got, tc.masked)
			}
			if got := info.classes["dropped"]; got != tc.dropped {
				t.Errorf("%d dropped cells, want %d", got, tc.dropped)
			}
			for _, s := range tc.texts {
				if !info.hasText(s) {
					t.Errorf("no text %q drawn", s)
				}
			}
			if got := info.textContaining("every row sums to 1"); got != tc.rowSumNote {
				t.Errorf("row-sum note drawn = %v, want %v", got, tc.rowSumNote)
			}
			if got := info.textContaining("downsampled"); got != tc.downsampleNote {
				t.Errorf("downsample note drawn = %v, want %v", got, tc.downsampleNote)
			}
		})
	}
}

// TestRenderErrors: bad input gives an error naming the function and the shapes, no panic.
func TestRenderErrors(t *testing.T) {
	w := seedCausalWeights()
	for _, tc := range []struct {
		name string
		r    Renderer
		want string
	}{
		{"nil weights", Heatmap(nil), "display.Heatmap: weights: tensor is nil"},
		{"rank 3 to Heatmap", Heatmap(ramp(8, func(int) float32 { return 0 }, 2, 2, 2)), "display.Heatmap: weights must be [T_q, T_k] (rank 2), got shape [2 2 2] (use display.Heads"},
		{"rank 1", Heatmap(tensors.FromValue([]float32{1, 2})), "got shape [2]"},
		{"empty", Heatmap(tensors.FromFlatDataAndDimensions([]float32{}, 0, 3)), "display.Heatmap: weights of shape [0 3] are empty"},
		{"label count", Heatmap(w).Tokens("a", "b"), `display.Heatmap: 2 query labels ["a" "b"] for 6 rows (queries) of shape [6 6]: want 6 labels, one per row`},
		{"key label count", Heatmap(w).Keys("a"), `1 key labels ["a"] for 6 columns (keys) of shape [6 6]: want 6 labels, one per column`},
		{"mask shape", Heatmap(w).Masked(causalBool(4)), "display.Heatmap: mask has shape [4 4], weights have shape [6 6]"},
		{"dropout shape", Heatmap(w).Dropout(causalBool(5)), "dropout mask has shape [5 5]"},
		{"visible mask value", Heatmap(w).Visible(ramp(36, func(i int) float32 { return float32(i % 3) }, 6, 6)),
			"display.Heatmap: mask (shape [6 6]) holds 2.0 at [0 2]: a mask holds only 0/1 or true/false"},
		{"dropout mask value", Heatmap(w).Dropout(ramp(36, func(int) float32 { return float32(math.NaN()) }, 6, 6)),
			"display.Heatmap: dropout mask (shape [6 6]) holds nan at [0 0]"},
		{"mask view value", MaskView(ramp(4, func(int) float32 { return 0.3 }, 2, 2)),
			"display.MaskView: mask (shape [2 2]) holds 0.30000001192092896 at [0 0]"},
		{"bad range", Heatmap(w).Range(1, 0), "Range(1, 0) must be finite with lo < hi"},
		{"bad max cells", Heatmap(w).MaxCells(0), "MaxCells(0)"},
		{"heads rank 2", Heads(w), "display.Heads: weights must be [h, T_q, T_k] or [b, h, T_q, T_k], got shape [6 6]"},
		{"heads empty", Heads(tensors.FromFlatDataAndDimensions([]float32{}, 2, 0, 3)), "are empty"},
		{"mask rank", MaskView(tensors.FromValue([]bool{true})), "display.MaskView: mask must be [T_q, T_k] (rank 2), got shape [1]"},
		{"table axes", Table(w).Axes("a"), "display.Table: 1 axis names for a tensor of shape [6 6]"},
		{"table labels", Table(w).Labels(2, "x"), "labels for axis 2"},
		{"compare one", Compare().Add("x", Heatmap(w)), "needs at least two pictures"},
		{"compare propagates", Compare().Add("ok", Heatmap(w)).Add("broken", Heatmap(nil)), `picture 1 ("broken"): display.Heatmap: weights: tensor is nil`},
		{"split too big", HeadSplit(20, 2, 3), "display.HeadSplit: t=20, d=h·hd=6 is too big"},
		{"split zero", HeadSplit(3, 0, 3), "must be ≥ 1"},
		{"split labels", HeadSplit(3, 2, 3).Tokens("a"), `display.HeadSplit: 1 token labels ["a"] for 3 tokens of shape [1 3 6]: want 3 labels, one per token`},
		{"complex", Heatmap(tensors.FromValue([][]complex64{{1}})), "not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.r.Done()
			if err == nil {
				t.Fatalf("no error; output %.100s", out)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if out != "" {
				t.Errorf("output %q alongside an error", out)
			}
		})
	}
}

// TestEscaping: a label or title that is markup is drawn as text.
func TestEscaping(t *testing.T) {
	evil := `<script>window.pwned=1</script>`
	img := `"><img src=x onerror=alert(1)>`
	toks := []string{evil, img, "&amp;", "ok\x00\x1b\xff"}
	w := ramp(16, func(int) float32 { return 0.25 }, 4, 4)
	for _, r := range []Renderer{
		Heatmap(w).Tokens(toks...).Title(evil),
		Heads(ramp(32, func(int) float32 { return 0.25 }, 2, 4, 4)).Tokens(toks...).Title(img),
		MaskView(causalBool(4)).Tokens(toks...).Meaning(evil, img),
		HeadSplit(4, 1, 2).Tokens(toks...).Title(evil),
		Table(w).Title(evil).Labels(0, toks...).Axes(img, evil),
		Compare().Title(evil).Add(img, Heatmap(w)).Add(evil, Heatmap(w)),
	} {
		out, err := r.Done()
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"<script", "<img", "onerror=alert(1)>", "\x00", "\x1b"} {
			if strings.Contains(out, bad) {
				t.Errorf("%T output contains %q unescaped", r, bad)
			}
		}
		if !strings.Contains(out, "&lt;script&gt;") && !strings.Contains(out, "&lt;img") {
			t.Errorf("%T output does not show the label as text", r)
		}
		if strings.HasPrefix(out, "<svg") {
			info := parseSVG(t, out)
			if !strings.Contains(info.all, "<script>window.pwned=1</script>") && !strings.Contains(info.all, `"><img src=x onerror=alert(1)>`) &&
				!strings.Contains(info.all, "<script>window.pwn") {
				t.Errorf("%T: the malicious label is not drawn as text", r)
			}
		}
	}
}

// TestHeadSplitWording: the legend and notes name a single feature per head as "feature k", not
// "features 0–0" (MultiHeadAttention(d_out=2, num_heads=2) of seed 001 has head_dim 1).
func TestHeadSplitWording(t *testing.T) {
	for _, tc := range []struct {
		name     string
		r        Renderer
		texts    []string // drawn as whole text elements
		notes    []string // drawn inside some text element
		notDrawn []string // must appear in no text element
	}{
		{name: "head_dim 1", r: HeadSplit(6, 2, 1),
			texts:    []string{"head 0: feature 0", "head 1: feature 1"},
			notes:    []string{"head k gets feature k of every token, all 6 tokens in order"},
			notDrawn: []string{"features 0–0", "1·k+0"}},
		{name: "head_dim 3", r: HeadSplit(3, 2, 3),
			texts: []string{"head 0: features 0–2", "head 1: features 3–5"},
			notes: []string{"head k gets features 3·k … 3·k+2 of every token"}},
		{name: "pitfall, head_dim 1", r: HeadSplit(4, 2, 1).WithoutTranspose(),
			notes: []string{"instead of feature 0 of every token"}},
		{name: "pitfall, head_dim 2", r: HeadSplit(4, 2, 2).WithoutTranspose(),
			notes: []string{"instead of features 0…1 of every token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.r.Done()
			if err != nil {
				t.Fatal(err)
			}
			info := parseSVG(t, out)
			for _, s := range tc.texts {
				if !info.hasText(s) {
					t.Errorf("no text %q drawn", s)
				}
			}
			for _, s := range tc.notes {
				if !info.textContaining(s) {
					t.Errorf("no text containing %q drawn", s)
				}
			}
			for _, s := range tc.notDrawn {
				if info.textContaining(s) {
					t.Errorf("text containing %q drawn", s)
				}
			}
		})
	}
}

// bigFigures are the course's largest pictures: notebook 10's four 64×64 heads of a layer (with
// its 64 character labels), a GPT-2 layer (12 heads of 1024 tokens: 16 panels of 32×32 after
// downsampling), a causal 64×64 heatmap and a 48×48 mask.
func bigFigures() []struct {
	name string
	r    func() Renderer
} {
	labels := make([]string, 64)
	for i := range labels {
		labels[i] = string(rune('a' + i%26))
	}
	softmaxed := func(h, n int) *tensors.Tensor {
		x := make([]float32, h*n*n)
		for i := range x {
			x[i] = float32(math.Sin(float64(i)*0.37)) * 3
		}
		for p := range h * n {
			copy(x[p*n:(p+1)*n], softmaxRows(x[p*n:(p+1)*n], n, 1))
		}
		return tensors.FromFlatDataAndDimensions(x, h, n, n)
	}
	return []struct {
		name string
		r    func() Renderer
	}{
		{"4 heads of 64×64, causal", func() Renderer {
			return Heads(softmaxed(4, 64)).Tokens(labels...).Masked(causalBool(64)).Title("block 3")
		}},
		{"GPT-2 layer 12×1024×1024", func() Renderer {
			return Heads(ramp(12*1024*1024, func(i int) float32 { return float32(i%1024) / 1024 / 1024 }, 1, 12, 1024, 1024))
		}},
		{"heatmap 64×64 scores", func() Renderer {
			return Heatmap(ramp(64*64, func(i int) float32 { return float32(math.Sin(float64(i))) }, 64, 64)).Tokens(labels...)
		}},
		{"mask 48×48", func() Renderer { return MaskView(causalBool(48)) }},
	}
}

// TestBigFiguresStaySmall: the largest pictures weigh far less than the 200 KB one output may
// take (their cells are one image per panel).
func TestBigFiguresStaySmall(t *testing.T) {
	for _, f := range bigFigures() {
		out, err := f.r().Done()
		if err != nil {
			t.Fatal(err)
		}
		info := parseSVG(t, out)
		if len(info.rasters) == 0 {
			t.Errorf("%s: no raster of cells", f.name)
		}
		if len(out) > 100<<10 {
			t.Errorf("%s: %d bytes, want at most 100 KB", f.name, len(out))
		}
		t.Logf("%s: %d bytes", f.name, len(out))
	}
}

// TestRasterKeepsColours draws the big figures both ways, as rectangles and as pixels, and
// compares them: the same size, the same texts, each pixel the colour of its rectangle
// (masked cells transparent over the hatched grey).
func TestRasterKeepsColours(t *testing.T) {
	defer func(n int) { maxVectorCells = n }(maxVectorCells)
	for _, f := range bigFigures() {
		t.Run(f.name, func(t *testing.T) {
			maxVectorCells = math.MaxInt
			vector, err := f.r().Done()
			if err != nil {
				t.Fatal(err)
			}
			maxVectorCells = 0
			raster, err := f.r().Done()
			if err != nil {
				t.Fatal(err)
			}
			v, r := parseSVG(t, vector), parseSVG(t, raster)
			if head := func(s string) string { return s[:strings.Index(s, ">")] }; head(vector) != head(raster) {
				t.Errorf("the two drawings differ in size:\n%s\n%s", head(vector), head(raster))
			}
			if fmt.Sprint(v.texts) != fmt.Sprint(r.texts) {
				t.Errorf("the two drawings differ in their texts")
			}
			var pixels []string
			for _, img := range r.rasters {
				b := img.Bounds()
				for y := b.Min.Y; y < b.Max.Y; y++ {
					for x := b.Min.X; x < b.Max.X; x++ {
						cr, cg, cb, ca := img.At(x, y).RGBA()
						c := fmt.Sprintf("#%02x%02x%02x", cr>>8, cg>>8, cb>>8)
						if ca == 0 {
							c = maskedFill
						}
						pixels = append(pixels, c)
					}
				}
			}
			if len(pixels) != len(v.fills) || len(r.fills) != 0 {
				t.Fatalf("%d pixels and %d rectangles for %d cells", len(pixels), len(r.fills), len(v.fills))
			}
			for k := range pixels {
				if pixels[k] != v.fills[k] {
					t.Fatalf("cell %d: pixel %s, rectangle %s", k, pixels[k], v.fills[k])
				}
			}
			if len(raster)*10 > len(vector) {
				t.Errorf("raster %d bytes, vector %d: want at least 10× smaller", len(raster), len(vector))
			}
		})
	}
}
