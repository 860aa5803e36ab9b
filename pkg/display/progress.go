package display

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/janpfeifer/gonb/gonbui"
)

// LossEstimate is one point of a loss plot's estimate lines: the mean loss on each split after
// Step steps.
type LossEstimate struct {
	Step            int
	Train, Validate float64
}

// TrainingState is what a training progress display shows.
type TrainingState struct {
	Step, Total  int           // global steps taken, and the step the run goes to
	Loss         float64       // loss of the last step's batch (NaN: no step yet)
	TokensPerSec float64       // throughput of this run so far (0: not known yet)
	Elapsed      time.Duration // wall time of this run so far
	ETA          time.Duration // estimated time left (< 0: not known yet)
	Note         string        // one short line under the bar, e.g. "resumed at step 150 of 300"
	Losses       []float64     // batch loss of every step from step 1 (history included), for the plot
	Estimates    []LossEstimate
}

// Colours of the loss plot: distinct in hue and lightness, so that the lines stay apart for a
// reader who cannot tell blue from orange, too.
const (
	batchColour = "#b8c4d6" // batch losses: light, thin, drawn first
	trainColour = "#1f5fbf" // train estimate: dark blue, solid
	valColour   = "#e07b00" // validation estimate: orange, dashed, drawn over train
	barColour   = "#1f5fbf"
)

// TrainingHTML renders s as one self-contained HTML block: a line with step, loss, tokens/s,
// elapsed time and ETA, a progress bar, an optional note, and (when there are losses) the loss
// plot of LossPlotSVG below it.
func TrainingHTML(s TrainingState) string {
	var b strings.Builder
	frac := 0.0
	if s.Total > 0 {
		frac = math.Min(1, math.Max(0, float64(s.Step)/float64(s.Total)))
	}
	b.WriteString(`<div class="attnbook-training" style="font-family:sans-serif;font-size:13px;max-width:640px">`)
	head := fmt.Sprintf("step %d/%d", s.Step, s.Total)
	if s.Total > 0 {
		head += fmt.Sprintf(" (%d%%)", min(100, max(0, s.Step*100/s.Total)))
	}
	fmt.Fprintf(&b, `<div style="margin-bottom:4px"><b>%s</b></div>`, esc(strings.Join(append([]string{head}, trainingFacts(s)...), " · ")))
	fmt.Fprintf(&b, `<div role="progressbar" aria-valuemin="0" aria-valuemax="%d" aria-valuenow="%d" style="background:#e6e9ef;border-radius:3px;height:10px;width:100%%">`+
		`<div style="background:%s;border-radius:3px;height:10px;width:%.1f%%"></div></div>`, s.Total, s.Step, barColour, 100*frac)
	if s.Note != "" {
		fmt.Fprintf(&b, `<div style="margin-top:4px;color:#444">%s</div>`, esc(s.Note))
	}
	if len(s.Losses) > 0 || len(s.Estimates) > 0 {
		b.WriteString(`<div style="margin-top:6px">`)
		b.WriteString(LossPlotSVG(s.Losses, s.Estimates, s.Total))
		b.WriteString(`</div>`)
	}
	b.WriteString(`</div>`)
	return b.String()
}

// TrainingLine is s as one line of plain text:
//
//	step 150/300 [##########··········] 50% · loss 2.4134 · 3,210 tokens/s · 0:47 elapsed · ETA 0:47
func TrainingLine(s TrainingState) string {
	const width = 20
	filled := 0
	if s.Total > 0 {
		filled = min(width, max(0, s.Step*width/s.Total))
	}
	head := fmt.Sprintf("step %d/%d [%s%s]", s.Step, s.Total, strings.Repeat("#", filled), strings.Repeat("·", width-filled))
	if s.Total > 0 {
		head += fmt.Sprintf(" %d%%", min(100, max(0, s.Step*100/s.Total)))
	}
	return strings.Join(append([]string{head}, trainingFacts(s)...), " · ")
}

// trainingFacts are the parts of a progress line after the step: loss, throughput, times.
func trainingFacts(s TrainingState) []string {
	var parts []string
	if !math.IsNaN(s.Loss) {
		parts = append(parts, fmt.Sprintf("loss %.4f", s.Loss))
	}
	if s.TokensPerSec > 0 {
		parts = append(parts, groupThousands(int64(math.Round(s.TokensPerSec)))+" tokens/s")
	}
	parts = append(parts, clock(s.Elapsed)+" elapsed")
	if s.ETA >= 0 && s.Step < s.Total {
		parts = append(parts, "ETA "+clock(s.ETA))
	}
	return parts
}

// clock prints d as m:ss (h:mm:ss from an hour).
func clock(d time.Duration) string {
	sec := int64(math.Round(d.Seconds()))
	if sec < 0 {
		sec = 0
	}
	if sec >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", sec/3600, sec/60%60, sec%60)
	}
	return fmt.Sprintf("%d:%02d", sec/60, sec%60)
}

func groupThousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// LossPlotSVG draws a loss plot as inline SVG: the batch loss of every step (thin, light), the
// train estimates (solid dark blue, round markers) and the validation estimates (dashed orange,
// square markers, drawn over train so that where they coincide both stay visible). losses[i] is
// the loss of step i+1; the x axis runs from step 0 to max(total, last step). Axis titles, tick
// labels and the legend all sit outside the plot area. Non-finite values are left out.
func LossPlotSVG(losses []float64, estimates []LossEstimate, total int) string {
	const (
		w, h                     = 640.0, 260.0
		left, right, top, bottom = 58.0, 16.0, 30.0, 42.0
		pw, ph                   = w - left - right, h - top - bottom
	)
	xMax := float64(max(total, len(losses), 1))
	lo, hi := math.Inf(1), math.Inf(-1)
	see := func(v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	for _, v := range losses {
		see(v)
	}
	for _, e := range estimates {
		see(e.Train)
		see(e.Validate)
		xMax = math.Max(xMax, float64(e.Step))
	}
	if lo > hi {
		lo, hi = 0, 1
	}
	yTicks := niceTicks(lo, hi, 5)
	lo, hi = math.Min(lo, yTicks[0]), math.Max(hi, yTicks[len(yTicks)-1])
	if hi-lo < 1e-9 {
		lo, hi = lo-0.5, hi+0.5
	}
	X := func(step float64) float64 { return left + pw*step/xMax }
	Y := func(v float64) float64 { return top + ph*(hi-v)/(hi-lo) }

	var b svgBuf
	svgOpen(&b, w, h, "attnbook-loss-plot", "training loss by step")
	// Grid and ticks, in the margins.
	for _, t := range yTicks {
		y := Y(t)
		b.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e6e9ef"/>`, num(left), num(y), num(left+pw), num(y))
		b.text(left-6, y, 11, "end", "#444", "", tick(t))
	}
	for _, t := range niceTicks(0, xMax, 6) {
		if t > xMax {
			continue
		}
		x := X(t)
		b.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#888"/>`, num(x), num(top+ph), num(x), num(top+ph+4))
		b.text(x, top+ph+14, 11, "middle", "#444", "", fmt.Sprint(int(t)))
	}
	b.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#888"/>`, num(left), num(top), num(pw), num(ph))
	b.text(left+pw/2, h-8, 12, "middle", "#222", "", "step")
	b.printf(`<text x="14" y="%s" font-size="12" text-anchor="middle" fill="#222" transform="rotate(-90 14 %s)">loss</text>`, num(top+ph/2), num(top+ph/2))

	// Lines: batch losses (at most ~pw points, averaged per bucket), then train, then validation.
	if len(losses) > 0 {
		buckets := max(1, int(math.Ceil(float64(len(losses))/pw)))
		var pts []string
		for i := 0; i < len(losses); i += buckets {
			sum, n := 0.0, 0
			for _, v := range losses[i:min(len(losses), i+buckets)] {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					sum, n = sum+v, n+1
				}
			}
			if n > 0 {
				step := float64(i+1) + float64(min(buckets, len(losses)-i)-1)/2
				pts = append(pts, num(X(step))+","+num(Y(sum/float64(n))))
			}
		}
		b.printf(`<polyline class="batch" points="%s" fill="none" stroke="%s" stroke-width="1"/>`, strings.Join(pts, " "), batchColour)
	}
	series := func(class, colour, dash string, width float64, value func(LossEstimate) float64, marker func(x, y float64) string) {
		var pts, marks []string
		for _, e := range estimates {
			v := value(e)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			x, y := X(float64(e.Step)), Y(v)
			pts = append(pts, num(x)+","+num(y))
			marks = append(marks, marker(x, y))
		}
		if len(pts) == 0 {
			return
		}
		b.printf(`<g class="%s"><polyline points="%s" fill="none" stroke="%s" stroke-width="%s"%s/>%s</g>`,
			class, strings.Join(pts, " "), colour, num(width), dash, strings.Join(marks, ""))
	}
	series("train", trainColour, "", 3, func(e LossEstimate) float64 { return e.Train }, func(x, y float64) string {
		return fmt.Sprintf(`<circle cx="%s" cy="%s" r="4" fill="%s"/>`, num(x), num(y), trainColour)
	})
	series("validation", valColour, ` stroke-dasharray="6 4"`, 2, func(e LossEstimate) float64 { return e.Validate }, func(x, y float64) string {
		return fmt.Sprintf(`<rect x="%s" y="%s" width="6" height="6" fill="%s"/>`, num(x-3), num(y-3), valColour)
	})

	// Legend above the plot area.
	lx := left
	legend := func(colour, dash, label string, width float64) {
		b.printf(`<line x1="%s" y1="14" x2="%s" y2="14" stroke="%s" stroke-width="%s"%s/>`, num(lx), num(lx+22), colour, num(width), dash)
		b.text(lx+27, 14, 11, "start", "#222", "", label)
		lx += 27 + textWidth(label, 11) + 18
	}
	if len(losses) > 0 {
		legend(batchColour, "", "batch loss", 2)
	}
	legend(trainColour, "", "train (estimate)", 3)
	legend(valColour, ` stroke-dasharray="6 4"`, "validation (estimate)", 2)
	b.WriteString(`</svg>`)
	return b.String()
}

// niceTicks returns about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []float64
	for t := math.Floor(lo/step) * step; t <= hi+step*1e-9; t += step {
		ticks = append(ticks, math.Round(t/step)*step)
	}
	if ticks[len(ticks)-1] < hi {
		ticks = append(ticks, ticks[len(ticks)-1]+step)
	}
	return ticks
}

// Progress is a training progress display that updates itself in place. In a GoNB notebook it
// is one HTML output (TrainingHTML) replaced at every Update by its display id — the classic
// Notebook, JupyterLab and an executed copy all keep only its last state, and no terminal
// escapes are printed. Elsewhere (go test, go run) it writes TrainingLine as plain text lines,
// at most one every Every, and one at Finish.
type Progress struct {
	Every time.Duration // least time between two updates (0: 250 ms in a notebook, 10 s as text)

	id       string
	notebook bool
	out      io.Writer
	last     time.Time
	shown    bool
}

// NewProgress returns a Progress for the current cell (or stdout).
func NewProgress() *Progress {
	p := &Progress{notebook: gonbui.IsNotebook, out: stdout()}
	if p.notebook {
		p.id = "attnbook-training-" + gonbui.UniqueId()
	}
	return p
}

// Update shows s unless the last update was less than Every ago.
func (p *Progress) Update(s TrainingState) {
	every := p.Every
	if every == 0 {
		every = 10 * time.Second
		if p.notebook {
			every = 250 * time.Millisecond
		}
	}
	if p.shown && time.Since(p.last) < every {
		return
	}
	p.show(s)
}

// Finish shows s, whenever the last update was, and waits until GoNB has taken it.
func (p *Progress) Finish(s TrainingState) {
	p.show(s)
	if p.notebook {
		gonbui.Sync()
	}
}

func (p *Progress) show(s TrainingState) {
	p.last, p.shown = time.Now(), true
	if p.notebook {
		gonbui.UpdateHTML(p.id, TrainingHTML(s))
		return
	}
	line := TrainingLine(s)
	if s.Note != "" {
		line += " · " + s.Note
	}
	fmt.Fprintln(p.out, line)
}
