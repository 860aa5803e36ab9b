package display

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/core/tensors"
)

// capture replaces the helpers' outputs for one test.
func capture(t *testing.T) (out, errs *bytes.Buffer, html *[]string) {
	t.Helper()
	out, errs, html = &bytes.Buffer{}, &bytes.Buffer{}, &[]string{}
	oldOut, oldErr, oldDisplay := textOut, errOut, displayHTML
	textOut, errOut = out, errs
	displayHTML = func(s string) { *html = append(*html, s) }
	t.Cleanup(func() { textOut, errOut, displayHTML = oldOut, oldErr, oldDisplay })
	return out, errs, html
}

func TestShowHelpers(t *testing.T) {
	w := seedCausalWeights()
	for _, tc := range []struct {
		name    string
		call    func()
		stdout  string
		errLine string // a single line on stderr containing this
		html    []string
	}{
		{name: "Show", call: func() { Show(tensors.FromValue([]int64{4, 10, 21})) }, stdout: "tensor([ 4, 10, 21])\n"},
		{name: "Println", call: func() { Println("x_0 :", tensors.FromValue([]float32{0.43, 0.15}), "dot:", float32(0.95440006), true) },
			stdout: "x_0 : tensor([0.4300, 0.1500]) dot: 0.9544000625610352 True\n"},
		{name: "ShowHeatmap", call: func() { ShowHeatmap(w, seedTokens...) }, html: []string{`<div><svg xmlns="http://www.w3.org/2000/svg" class="attnbook-heatmap"`}},
		{name: "ShowHeatmap no tokens", call: func() { ShowHeatmap(w) }, html: []string{`<div><svg`}},
		{name: "ShowHeads", call: func() { ShowHeads(seed002Scores(), "a", "b", "c") }, html: []string{`<div><svg xmlns="http://www.w3.org/2000/svg" class="attnbook-heads"`}},
		{name: "ShowMask", call: func() { ShowMask(causalBool(3)) }, html: []string{`<div><svg xmlns="http://www.w3.org/2000/svg" class="attnbook-mask"`}},
		{name: "ShowTable", call: func() { ShowTable(w) }, html: []string{`<div class="attnbook-table"`}},
		{name: "ShowFigure compare", call: func() {
			ShowFigure(Compare().Add("a", Heatmap(w)).Add("b", Heatmap(w)))
		}, html: []string{`<div class="attnbook-compare"`}},
		{name: "ShowSVG", call: func() { ShowSVG(HeadSplit(2, 2, 2).Done()) }, html: []string{`<div><svg`}},
		{name: "ShowHTML", call: func() { ShowHTML(Table(w).Done()) }, html: []string{`<div class="attnbook-table"`}},
		{name: "bad rank prints one line", call: func() { ShowHeatmap(seed002Scores()) },
			errLine: "error: display.Heatmap: weights must be [T_q, T_k] (rank 2), got shape [1 2 3 3]"},
		{name: "bad labels", call: func() { ShowHeads(seed002Scores(), "a") }, errLine: "error: display.Heads: 1 query labels for 3 query"},
		{name: "nil tensor", call: func() { ShowMask(nil) }, errLine: "error: display.MaskView: mask: tensor is nil"},
		{name: "nil renderer", call: func() { ShowFigure(nil) }, errLine: "error: display.ShowFigure: nil renderer"},
		{name: "panicking renderer", call: func() { ShowFigure(panicky{}) }, errLine: "panicked: boom"},
		{name: "ExploreHeads outside a notebook shows the grid", call: func() { ExploreHeads(seed002Scores(), time.Second, "a", "b", "c") },
			html: []string{`<svg xmlns="http://www.w3.org/2000/svg" class="attnbook-heads"`}},
		{name: "ExploreHeads bad input", call: func() { ExploreHeads(w, time.Second) }, errLine: "error: display.Heads: weights must be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, html := capture(t)
			tc.call()
			if out.String() != tc.stdout {
				t.Errorf("stdout %q, want %q", out.String(), tc.stdout)
			}
			if tc.errLine == "" && errs.Len() > 0 {
				t.Errorf("unexpected stderr %q", errs.String())
			}
			if tc.errLine != "" {
				if !strings.Contains(errs.String(), tc.errLine) || strings.Count(errs.String(), "\n") != 1 {
					t.Errorf("stderr %q, want one line containing %q", errs.String(), tc.errLine)
				}
				if len(*html) > 0 {
					t.Errorf("displayed HTML despite the error")
				}
			}
			if len(*html) != len(tc.html) {
				t.Fatalf("%d HTML outputs, want %d", len(*html), len(tc.html))
			}
			for i, prefix := range tc.html {
				if !strings.HasPrefix((*html)[i], prefix) {
					t.Errorf("HTML output %d starts %.80q, want %q", i, (*html)[i], prefix)
				}
			}
		})
	}
}

type panicky struct{}

func (panicky) Done() (string, error) { panic("boom") }

func TestHeadPictures(t *testing.T) {
	pics, titles, err := headPictures(seed002Scores(), []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pics) != 2 || titles[0] != "batch 0 · head 0" || titles[1] != "batch 0 · head 1" {
		t.Fatalf("titles %v", titles)
	}
	// Both heads share the scale of the whole tensor: the same legend ticks.
	for _, p := range pics {
		info := parseSVG(t, p)
		if !info.hasText("318") || !info.hasText("-318") {
			t.Errorf("head picture does not use the shared scale ±318: %v", info.texts)
		}
	}
}
