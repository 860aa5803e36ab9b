package display

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// findChromium returns the Chromium binary: $ATTNBOOK_CHROMIUM if set (a path that does not
// exist counts as "no Chromium"), else Debian's /usr/bin/chromium, else chromium,
// chromium-browser or google-chrome on PATH; "" when there is none.
func findChromium() string {
	if p, ok := os.LookupEnv("ATTNBOOK_CHROMIUM"); ok {
		if _, err := os.Stat(p); err != nil {
			return ""
		}
		return p
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// The payload sets window.pwned if any markup in a label ever runs.
const (
	pwnScript = `<script>window.pwned=1</script>`
	pwnImg    = `<img src=x onerror="window.pwned=2">`
)

// browserPage renders a page of pictures, as a notebook would show them, and returns it
// with the number of heatmap cells it draws.
func browserPage(t *testing.T) (page string, cells int) {
	t.Helper()
	droppedW, droppedMask := seedDropped()
	tokens := append(append([]string(nil), seedTokens[:4]...), pwnScript, pwnImg)
	pictures := []struct {
		r     Renderer
		cells int
	}{
		{Heatmap(seedCausalWeights()).Tokens(tokens...).Visible(trilOnes(6)).Title("Causal attention weights " + pwnScript), 36},
		{Heatmap(seedMaskedScores()).Tokens(seedTokens...).Title("Scores after masked_fill(mask, -inf)"), 36},
		{Compare().Title("Dropout: before and after").
			Add("before", Heatmap(seedCausalWeights()).Tokens(seedTokens...).Masked(causalBool(6))).
			Add("after dropout(p=0.5) "+pwnImg, Heatmap(droppedW).Tokens(seedTokens...).Masked(causalBool(6)).Dropout(droppedMask)), 72},
		{Heads(seed002Scores()).Tokens("t0", "t1", pwnScript).Title("Scores per head"), 18},
		{MaskView(causalBool(6)).Tokens(seedTokens...).Meaning("hidden", "visible").Title("Causal mask"), 36},
		{Heatmap(ramp(300*300, func(i int) float32 { return float32((i/300)*(i%300)%97) / 97 }, 300, 300)).Title("300×300, downsampled"), 43 * 43}, // blocks of 7×7
		{HeadSplit(3, 2, 3).Tokens("Your", "journey", pwnScript).WithoutTranspose().Title("The reshape pitfall"), 0},
		{Table(seedCausalWeights()).Title("attn_weights "+pwnScript).Labels(0, tokens...), 0},
		{BarChart("wrapper", "chapter", pwnScript).Series("GoMLX", 800, 400, 200).Series("PyTorch "+pwnImg, 400, math.NaN(), 100).
			Unit(" ms").Reference(300, "target "+pwnScript).Title("Bars " + pwnScript).Note("shorter is faster"), 0},
	}
	var sb strings.Builder
	sb.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>attnbook display</title></head>` +
		`<body style="margin:12px;background:#ffffff">`)
	for _, p := range pictures {
		out, err := p.r.Done()
		if err != nil {
			t.Fatal(err)
		}
		// As ShowSVG / gonbui.DisplaySVG wrap it in a notebook output.
		sb.WriteString(`<div class="output" style="margin-bottom:16px">` + out + `</div>`)
		cells += p.cells
	}
	sb.WriteString(`</body></html>`)
	return sb.String(), cells
}

// TestBrowser renders a page of pictures in headless Chromium and checks what is drawn:
// the number of cells, that labels are text (no script ran, no element was injected), that
// every text lies inside its SVG, and, on the screenshot, that masked cells are grey,
// dropped cells orange-framed and full weights dark blue.
func TestBrowser(t *testing.T) {
	chromium := findChromium()
	if chromium == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("Chromium not found and CI=true: the browser check must run in CI (install chromium or set ATTNBOOK_CHROMIUM)")
		}
		t.Skip("SKIPPING THE BROWSER CHECK: Chromium not found (install Debian's chromium or set ATTNBOOK_CHROMIUM); " +
			"with CI=true this is a failure")
	}
	page, wantCells := browserPage(t)
	dir := t.TempDir()
	pagePath := filepath.Join(dir, "page.html")
	if err := os.WriteFile(pagePath, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("force-device-scale-factor", "1"),
		chromedp.WindowSize(1280, 1000),
	)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	var facts struct {
		Cells, Masked, Dropped, Svgs, Scripts, Imgs int
		Pwned                                       string
		LabelAsText, TitleAsText, TooltipAsText     bool
		Escaped                                     []string
		Masked0, Dropped0, Full0, Bar0              []float64
		BarWidths                                   []float64
		BarLabelAsText                              bool
	}
	const js = `(() => {
	const r = {};
	r.Cells = document.querySelectorAll('svg rect.cell').length;
	r.Masked = document.querySelectorAll('svg rect.cell.masked').length;
	r.Dropped = document.querySelectorAll('svg rect.cell.dropped').length;
	r.Svgs = document.querySelectorAll('svg').length;
	r.Scripts = document.querySelectorAll('script').length;
	r.Imgs = document.querySelectorAll('img').length;
	r.Pwned = typeof window.pwned;
	const texts = Array.from(document.querySelectorAll('svg text')).map(e => e.textContent);
	r.LabelAsText = texts.some(s => s.startsWith('<script>window.'));
	r.TitleAsText = texts.some(s => s.includes('Causal attention weights <script>window.pwned=1</script>'));
	r.TooltipAsText = Array.from(document.querySelectorAll('svg rect.cell > title')).some(e => e.textContent.includes('<img src=x onerror="window.pwned=2">'));
	// Every text must be drawn inside its <svg>: nothing cut off at the edges.
	r.Escaped = [];
	for (const svg of document.querySelectorAll('svg')) {
		const b = svg.getBoundingClientRect();
		for (const t of svg.querySelectorAll('text')) {
			const tb = t.getBoundingClientRect();
			if (tb.width === 0) continue;
			if (tb.left < b.left - 1 || tb.right > b.right + 1 || tb.top < b.top - 1 || tb.bottom > b.bottom + 1) {
				r.Escaped.push(t.textContent + ' @' + [tb.left, tb.top, tb.right, tb.bottom].map(Math.round).join(','));
			}
		}
	}
	const box = e => { const b = e.getBoundingClientRect(); return [b.left + window.scrollX, b.top + window.scrollY, b.width, b.height]; };
	r.Masked0 = box(document.querySelector('svg rect.cell.masked'));
	r.Dropped0 = box(document.querySelector('svg rect.cell.dropped'));
	r.Full0 = box(document.querySelector('svg rect.cell[data-row="0"][data-col="0"]'));
	r.BarWidths = Array.from(document.querySelectorAll('svg.attnbook-barchart rect.bar')).map(e => e.getBoundingClientRect().width);
	r.Bar0 = box(document.querySelector('svg.attnbook-barchart rect.bar'));
	r.BarLabelAsText = Array.from(document.querySelectorAll('svg.attnbook-barchart text.category')).some(e => e.textContent === '<script>window.pwned=1</script>');
	return r;
})()`
	var shot []byte
	err := chromedp.Run(bctx,
		chromedp.Navigate("file://"+pagePath),
		chromedp.WaitReady("body"),
		chromedp.Evaluate(js, &facts),
		chromedp.FullScreenshot(&shot, 100),
	)
	if err != nil {
		t.Fatalf("chromium (%s): %v", chromium, err)
	}
	dump, _ := json.Marshal(facts)
	t.Logf("drawn: %s", dump)

	if facts.Cells != wantCells {
		t.Errorf("%d heatmap cells in the DOM, want %d", facts.Cells, wantCells)
	}
	if facts.Masked < 15*4 || facts.Dropped != 15 {
		t.Errorf("%d masked and %d dropped cells, want ≥ 60 and 15", facts.Masked, facts.Dropped)
	}
	if facts.Pwned != "undefined" || facts.Scripts != 0 || facts.Imgs != 0 {
		t.Errorf("injected markup ran or was parsed: window.pwned is %s, %d <script>, %d <img>", facts.Pwned, facts.Scripts, facts.Imgs)
	}
	if !facts.LabelAsText || !facts.TitleAsText || !facts.TooltipAsText {
		t.Errorf("malicious labels are not shown as text: label %v, title %v, tooltip %v", facts.LabelAsText, facts.TitleAsText, facts.TooltipAsText)
	}
	if len(facts.Escaped) > 0 {
		t.Errorf("%d texts are drawn outside their SVG (cut off): %v", len(facts.Escaped), facts.Escaped)
	}

	// The bar chart: 5 bars (one value is NaN), lengths proportional to 800, 400, 400, 200, 100.
	if len(facts.BarWidths) != 5 {
		t.Errorf("%d bars drawn, want 5", len(facts.BarWidths))
	} else {
		for i, v := range []float64{800, 400, 400, 200, 100} {
			if got := facts.BarWidths[i] / facts.BarWidths[0]; abs(got-v/800) > 0.01 {
				t.Errorf("bar %d is %.3f of the first bar's length, want %.3f", i, got, v/800)
			}
		}
	}
	if !facts.BarLabelAsText {
		t.Errorf("the bar chart's malicious category label is not shown as text")
	}

	// Look at the pixels.
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	avg := func(box []float64, inset float64) (r, g, b float64) {
		n := 0.0
		for y := box[1] + inset; y < box[1]+box[3]-inset; y++ {
			for x := box[0] + inset; x < box[0]+box[2]-inset; x++ {
				cr, cg, cb, _ := img.At(int(x), int(y)).RGBA()
				r, g, b, n = r+float64(cr>>8), g+float64(cg>>8), b+float64(cb>>8), n+1
			}
		}
		return r / n, g / n, b / n
	}
	if r, g, b := avg(facts.Masked0, 2); !(r > 150 && r < 235 && abs(r-g) < 12 && abs(g-b) < 12) {
		t.Errorf("a masked cell looks (%.0f, %.0f, %.0f), want hatched grey", r, g, b)
	}
	if r, g, b := avg(facts.Full0, 8); !(b > 80 && b > r+50) {
		t.Errorf("the weight-1.0 cell looks (%.0f, %.0f, %.0f), want dark blue", r, g, b)
	}
	frame := []float64{facts.Dropped0[0] + 2, facts.Dropped0[1] + facts.Dropped0[3]/2, 1, 1}
	if r, g, b := avg(frame, 0); !(r > 180 && g > 60 && g < 160 && b < 80) {
		t.Errorf("a dropped cell's frame looks (%.0f, %.0f, %.0f), want orange", r, g, b)
	}

	if r, g, b := avg(facts.Bar0, 3); !(abs(r-0x00) < 30 && abs(g-0xad) < 30 && abs(b-0xd8) < 30) {
		t.Errorf("the first bar looks (%.0f, %.0f, %.0f), want Go blue (0, 173, 216)", r, g, b)
	}

	shotPath := filepath.Join(dir, "display-screenshot.png")
	if err := os.WriteFile(shotPath, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	// A copy outside the temp dir, to look at.
	if err := os.WriteFile(filepath.Join(os.TempDir(), "display-screenshot.png"), shot, 0o644); err != nil {
		t.Logf("could not write the screenshot copy: %v", err)
	}
	t.Logf("screenshot %dx%d: %s (copy in %s)", img.Bounds().Dx(), img.Bounds().Dy(), shotPath,
		filepath.Join(os.TempDir(), "display-screenshot.png"))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
