package display

import (
	"encoding/xml"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestTrainingLine(t *testing.T) {
	tests := []struct {
		s    TrainingState
		want string
	}{
		{TrainingState{Step: 150, Total: 300, Loss: 2.41337, TokensPerSec: 3210.4, Elapsed: 47 * time.Second, ETA: 47 * time.Second},
			"step 150/300 [##########··········] 50% · loss 2.4134 · 3,210 tokens/s · 0:47 elapsed · ETA 0:47"},
		{TrainingState{Step: 0, Total: 300, Loss: math.NaN(), ETA: -1},
			"step 0/300 [····················] 0% · 0:00 elapsed"},
		{TrainingState{Step: 300, Total: 300, Loss: 1.9, TokensPerSec: 1234567, Elapsed: 3725 * time.Second, ETA: 0},
			"step 300/300 [####################] 100% · loss 1.9000 · 1,234,567 tokens/s · 1:02:05 elapsed"},
	}
	for _, tc := range tests {
		if got := TrainingLine(tc.s); got != tc.want {
			t.Errorf("TrainingLine(%+v)\n got %q\nwant %q", tc.s, got, tc.want)
		}
	}
}

// TestLossPlotSVG: well-formed SVG; the batch, train and validation lines all drawn, train and
// validation in distinct colours (validation dashed, drawn after train); every text label
// outside the plot area; non-finite values left out.
func TestLossPlotSVG(t *testing.T) {
	var losses []float64
	for i := range 300 {
		losses = append(losses, 4.2-2*float64(i)/300)
	}
	losses[10] = math.NaN()
	est := []LossEstimate{{0, 4.17, 4.18}, {50, 3.1, 3.1}, {100, 2.6, 2.62}, {150, math.Inf(1), 2.5}}
	svg := LossPlotSVG(losses, est, 300)
	if err := xml.Unmarshal([]byte(svg), new(any)); err != nil {
		t.Fatalf("not well-formed XML: %v", err)
	}
	for _, class := range []string{"batch", "train", "validation"} {
		if !strings.Contains(svg, `class="`+class+`"`) {
			t.Errorf("no %s line", class)
		}
	}
	if strings.Index(svg, `class="validation"`) < strings.Index(svg, `class="train"`) {
		t.Error("validation is drawn before train: where they coincide, train would hide it")
	}
	colour := regexp.MustCompile(`<g class="(train|validation)"><polyline points="([^"]*)" fill="none" stroke="([^"]+)"`)
	found := map[string][2]string{}
	for _, m := range colour.FindAllStringSubmatch(svg, -1) {
		found[m[1]] = [2]string{m[2], m[3]}
	}
	if found["train"][1] == "" || found["train"][1] == found["validation"][1] {
		t.Errorf("train colour %q, validation %q: want distinct", found["train"][1], found["validation"][1])
	}
	if n := len(strings.Fields(found["train"][0])); n != 3 {
		t.Errorf("train line has %d points, want 3 (the +Inf estimate left out)", n)
	}
	if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
		t.Error("a non-finite value reached the SVG")
	}
	// The plot area is the <rect fill="none">; no text may fall inside it.
	area := regexp.MustCompile(`<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="none"`).FindStringSubmatch(svg)
	if area == nil {
		t.Fatal("no plot area frame")
	}
	f := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	x0, y0, x1, y1 := f(area[1]), f(area[2]), f(area[1])+f(area[3]), f(area[2])+f(area[4])
	texts := regexp.MustCompile(`<text x="([\d.]+)" y="([\d.]+)"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg, -1)
	if len(texts) < 10 {
		t.Fatalf("%d text labels, want ticks, axis titles and a legend", len(texts))
	}
	for _, m := range texts {
		x, y := f(m[1]), f(m[2])
		if x > x0 && x < x1 && y > y0 && y < y1 {
			t.Errorf("label %q at (%g, %g) is inside the plot area", m[3], x, y)
		}
	}
	for _, want := range []string{">step<", ">loss<", ">train (estimate)<", ">validation (estimate)<", ">batch loss<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("no label %s", want)
		}
	}
}

func TestTrainingHTML(t *testing.T) {
	s := TrainingState{Step: 30, Total: 30, Loss: 2.5, Elapsed: time.Second, ETA: -1, Note: "resumed at <step> 12",
		Losses: []float64{4, 3}, Estimates: []LossEstimate{{0, 4, 4}, {30, 2.5, 2.6}}}
	html := TrainingHTML(s)
	for _, want := range []string{"step 30/30", `aria-valuenow="30"`, "width:100.0%", "resumed at &lt;step&gt; 12", "<svg"} {
		if !strings.Contains(html, want) {
			t.Errorf("TrainingHTML lacks %q:\n%s", want, html)
		}
	}
	if strings.Contains(html, "<script") {
		t.Error("TrainingHTML has a script: it would not run in an untrusted notebook")
	}
}

// TestProgressText: outside a notebook, at most one line per Every, and always the last one.
func TestProgressText(t *testing.T) {
	var b strings.Builder
	p := &Progress{Every: time.Hour, out: &b}
	for step := range 5 {
		p.Update(TrainingState{Step: step, Total: 4, Loss: math.NaN(), ETA: -1})
	}
	p.Finish(TrainingState{Step: 4, Total: 4, Loss: 1, ETA: -1, Note: "done"})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "step 0/4") || !strings.HasSuffix(lines[1], "· done") {
		t.Errorf("text progress:\n%s", b.String())
	}
}

// BenchmarkTrainingHTML renders the display of a 2000-step run (nanoGPT's recipe): what a
// notebook's training pays at every update (at most one every 250 ms).
func BenchmarkTrainingHTML(b *testing.B) {
	s := TrainingState{Step: 2000, Total: 2000, Loss: 1.9, TokensPerSec: 5000, ETA: -1}
	for i := range 2000 {
		s.Losses = append(s.Losses, 4.2-2*float64(i)/2000+0.05*math.Sin(float64(i)))
	}
	for step := 0; step <= 2000; step += 250 {
		s.Estimates = append(s.Estimates, LossEstimate{step, 4.2 - 2*float64(step)/2000, 4.25 - 2*float64(step)/2000})
	}
	n := 0
	for b.Loop() {
		n = len(TrainingHTML(s))
	}
	b.ReportMetric(float64(n), "bytes")
}
