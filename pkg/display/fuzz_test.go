package display

import (
	"encoding/binary"
	"html"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

// fuzzTensor builds a tensor of the given dtype selector and dims from raw bytes, so the
// fuzzer reaches NaN, ±Inf, denormals, huge and tiny values, and empty axes.
func fuzzTensor(data []byte, dtype uint8, dims []int) *tensors.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	word := func(i, size int) []byte {
		b := make([]byte, 8)
		if len(data) > 0 {
			for k := range size {
				b[k] = data[(i*size+k)%len(data)]
			}
		}
		return b
	}
	switch dtype % 5 {
	case 0:
		v := make([]float32, n)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(word(i, 4)))
		}
		return tensors.FromFlatDataAndDimensions(v, dims...)
	case 1:
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(word(i, 8)))
		}
		return tensors.FromFlatDataAndDimensions(v, dims...)
	case 2:
		v := make([]int64, n)
		for i := range v {
			v[i] = int64(binary.LittleEndian.Uint64(word(i, 8)))
		}
		return tensors.FromFlatDataAndDimensions(v, dims...)
	case 3:
		v := make([]int32, n)
		for i := range v {
			v[i] = int32(binary.LittleEndian.Uint32(word(i, 4)))
		}
		return tensors.FromFlatDataAndDimensions(v, dims...)
	}
	v := make([]bool, n)
	for i := range v {
		v[i] = word(i, 1)[0]&1 == 1
	}
	return tensors.FromFlatDataAndDimensions(v, dims...)
}

// FuzzFormat: any values, shape and print options format without panicking, with
// balanced brackets, "tensor(" ... ")" around them.
func FuzzFormat(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64}, uint8(0), uint8(2), uint8(3), uint8(0), uint8(0), uint8(4), uint8(80))
	f.Add([]byte{0, 0, 128, 255, 0, 0, 192, 127}, uint8(0), uint8(6), uint8(7), uint8(5), uint8(1), uint8(2), uint8(20))
	f.Add([]byte{1, 2, 3}, uint8(2), uint8(0), uint8(3), uint8(1), uint8(0), uint8(0), uint8(1))
	f.Add([]byte{255}, uint8(4), uint8(40), uint8(30), uint8(0), uint8(2), uint8(9), uint8(200))
	f.Fuzz(func(t *testing.T, data []byte, dtype, d0, d1, d2, sci, prec, width uint8) {
		dims := []int{int(d0 % 45), int(d1 % 45), int(d2 % 5)}[:int(dtype/5)%4]
		size := 1
		for _, d := range dims {
			size *= d
		}
		if size > 3000 {
			t.Skip()
		}
		x := fuzzTensor(data, dtype, dims)
		opts := DefaultPrintOptions()
		opts.Precision = int(prec % 12)
		opts.Linewidth = int(width)
		opts.SciMode = SciMode(sci % 3)
		opts.EdgeItems = int(sci/3) % 4
		opts.Threshold = int(d2) * 40
		for _, s := range []string{Format(x), FormatWith(x, opts)} {
			if !strings.HasPrefix(s, "tensor(") || !strings.HasSuffix(s, ")") {
				t.Fatalf("not tensor(...): %q", s)
			}
			if strings.Count(s, "[") != strings.Count(s, "]") {
				t.Fatalf("unbalanced brackets: %q", s)
			}
			if strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
				t.Fatalf("Go spelling of a non-finite value: %q", s)
			}
		}
		if size == 1 {
			if it := Item(x); strings.HasPrefix(it, "<error") {
				t.Fatalf("Item of a one-element tensor: %s", it)
			}
		}
	})
}

// FuzzHeatmap: any values, sizes, masks and labels give an error or a well-formed SVG with
// one cell per (possibly downsampled) position and every label escaped.
func FuzzHeatmap(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63}, uint8(3), uint8(3), "Your", []byte{1, 0, 1}, uint8(0))
	f.Add([]byte{0, 0, 128, 255, 0, 0, 192, 127}, uint8(6), uint8(6), "<script>alert(1)</script>", []byte{}, uint8(1))
	f.Add([]byte{7}, uint8(60), uint8(2), "\x00\xff&\"'", []byte{3}, uint8(2))
	f.Add([]byte{}, uint8(0), uint8(4), "", []byte{}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, rows, cols uint8, label string, maskBits []byte, mode uint8) {
		r, c := int(rows%70), int(cols%70)
		if mode&8 != 0 {
			r = 0
		}
		w := fuzzTensor(data, 0, []int{r, c})
		labels := make([]string, r)
		for i := range labels {
			labels[i] = label
		}
		b := Heatmap(w).Queries(labels...).Title(label).MaxCells(1 + int(mode>>4))
		if len(maskBits) > 0 && r*c > 0 {
			m := make([]bool, r*c)
			for i := range m {
				m[i] = maskBits[i%len(maskBits)]&(1<<(i%8)) != 0
			}
			mask := tensors.FromFlatDataAndDimensions(m, r, c)
			switch mode % 4 {
			case 1:
				b.Masked(mask)
			case 2:
				b.Visible(mask)
			case 3:
				b.Dropout(mask)
			}
		}
		out, err := b.Done()
		if err != nil {
			if out != "" {
				t.Fatal("output with an error")
			}
			return
		}
		info := parseSVG(t, out)
		maxSide := 1 + int(mode>>4)
		br, bc := (r+maxSide-1)/maxSide, (c+maxSide-1)/maxSide
		wantCells := ((r + br - 1) / br) * ((c + bc - 1) / bc)
		if info.classes["cell"] != wantCells {
			t.Fatalf("%d cells for %dx%d (max %d per side), want %d", info.classes["cell"], r, c, maxSide, wantCells)
		}
		// parseSVG is a strict XML parse that rejects <script>, <foreignObject> and on*
		// attributes: an unescaped label could not pass it. The title must be drawn as text.
		if shown := html.UnescapeString(esc(clip(label, titleRunes))); !strings.Contains(info.all, shown) {
			t.Fatalf("title %q is not drawn as the text %q", label, shown)
		}
		if len(out) > 2<<20 {
			t.Fatalf("SVG of %d bytes", len(out))
		}
	})
}

// FuzzHeads: rank-3/4 weights and a broadcast mask.
func FuzzHeads(f *testing.F) {
	f.Add([]byte{0, 0, 0, 63}, uint8(2), uint8(3), uint8(4), true)
	f.Add([]byte{0, 0, 192, 127}, uint8(20), uint8(1), uint8(40), false)
	f.Fuzz(func(t *testing.T, data []byte, heads, batch, tokens uint8, masked bool) {
		h, b, n := int(heads%20), int(batch%4), int(tokens%40)
		dims := []int{h, n, n}
		if b > 0 {
			dims = append([]int{b}, dims...)
		}
		builder := Heads(fuzzTensor(data, 0, dims))
		if masked && n > 0 {
			builder.Masked(causalBool(n))
		}
		out, err := builder.Done()
		if err != nil {
			return
		}
		parseSVG(t, out)
	})
}

var (
	tagName   = regexp.MustCompile(`</?([A-Za-z][A-Za-z0-9]*)`)
	tableTags = map[string]bool{"div": true, "details": true, "summary": true, "b": true, "code": true,
		"span": true, "table": true, "tr": true, "th": true, "td": true}
)

// FuzzTable: any tensor and labels render or fail cleanly, with labels escaped.
func FuzzTable(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63}, uint8(0), uint8(2), uint8(3), uint8(4), "<b>x</b>")
	f.Add([]byte{1}, uint8(9), uint8(40), uint8(30), uint8(2), "")
	f.Fuzz(func(t *testing.T, data []byte, dtype, d0, d1, d2 uint8, label string) {
		dims := []int{int(d0 % 45), int(d1 % 45), int(d2 % 5)}[:int(dtype/5)%4]
		size := 1
		for _, d := range dims {
			size *= d
		}
		if size > 3000 {
			t.Skip()
		}
		b := Table(fuzzTensor(data, dtype, dims)).Title(label)
		if len(dims) > 0 {
			ls := make([]string, dims[0])
			for i := range ls {
				ls[i] = label
			}
			b.Labels(0, ls...)
		}
		out, err := b.Done()
		if err != nil {
			t.Fatalf("a valid table failed: %v", err)
		}
		if label != "" && !strings.Contains(out, esc(clip(label, titleRunes))) {
			t.Fatalf("title %q is not shown escaped as %q", label, esc(label))
		}
		// Only the table's own elements: an unescaped label would add its own.
		for _, m := range tagName.FindAllStringSubmatch(out, -1) {
			if !tableTags[strings.ToLower(m[1])] {
				t.Fatalf("unexpected element <%s> in the table HTML (label %q)", m[1], label)
			}
		}
		if strings.Count(out, "<table") != strings.Count(out, "</table>") {
			t.Fatal("unbalanced tables")
		}
	})
}

// FuzzHeadSplit: any sizes and labels give an error or a well-formed SVG.
func FuzzHeadSplit(f *testing.F) {
	f.Add(uint8(3), uint8(2), uint8(3), "Your", true)
	f.Add(uint8(12), uint8(4), uint8(6), "<i>", false)
	f.Fuzz(func(t *testing.T, tokens, heads, headDim uint8, label string, wrong bool) {
		b := HeadSplit(int(tokens%16), int(heads%8), int(headDim%8))
		if label != "" {
			ls := make([]string, int(tokens%16))
			for i := range ls {
				ls[i] = label
			}
			b.Tokens(ls...)
		}
		if wrong {
			b.WithoutTranspose()
		}
		out, err := b.Done()
		if err != nil {
			return
		}
		info := parseSVG(t, out)
		n := int(tokens%16) * int(heads%8) * int(headDim%8)
		stages := 3
		if wrong {
			stages = 2
		}
		if info.classes["element"] != n*stages {
			t.Fatalf("%d elements drawn, want %d", info.classes["element"], n*stages)
		}
	})
}
