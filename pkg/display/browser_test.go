package display

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gomlx/gomlx/core/tensors"
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
		{Heatmap(ramp(300*300, func(i int) float32 { return float32((i/300)*(i%300)%97) / 97 }, 300, 300)).Title("300×300, downsampled"), 0}, // 43×43 blocks of 7×7, one image (TestBrowserRaster)
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

// needChromium returns the Chromium binary, or skips the test loudly (fails it under CI=true).
func needChromium(t *testing.T) string {
	t.Helper()
	chromium := findChromium()
	if chromium == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("Chromium not found and CI=true: the browser check must run in CI (install chromium or set ATTNBOOK_CHROMIUM)")
		}
		t.Skip("SKIPPING THE BROWSER CHECK: Chromium not found (install Debian's chromium or set ATTNBOOK_CHROMIUM); " +
			"with CI=true this is a failure")
	}
	return chromium
}

// newBrowser starts a headless Chromium with a w×h window (sRGB, scale 1) for the test's
// lifetime, at most 90 s.
func newBrowser(t *testing.T, chromium string, w, h int) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("force-device-scale-factor", "1"),
		chromedp.WindowSize(w, h),
	)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	return bctx
}

// outDir is the repository's git-ignored out/display folder, where browser tests leave their
// screenshots for a person to look at.
func outDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "..", "out", "display")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	return abs
}

// TestBrowser renders a page of pictures in headless Chromium and checks what is drawn:
// the number of cells, that labels are text (no script ran, no element was injected), that
// every text lies inside its SVG, and, on the screenshot, that masked cells are grey,
// dropped cells orange-framed and full weights dark blue.
func TestBrowser(t *testing.T) {
	chromium := needChromium(t)
	page, wantCells := browserPage(t)
	dir := t.TempDir()
	pagePath := filepath.Join(dir, "page.html")
	if err := os.WriteFile(pagePath, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}

	bctx := newBrowser(t, chromium, 1280, 1000)
	var facts struct {
		Cells, Rasters, Masked, Dropped, Svgs, Scripts, Imgs int
		Pwned                                                string
		LabelAsText, TitleAsText, TooltipAsText              bool
		Escaped                                              []string
		Masked0, Dropped0, Full0, Bar0                       []float64
		BarWidths                                            []float64
		BarLabelAsText                                       bool
	}
	const js = `(() => {
	const r = {};
	r.Cells = document.querySelectorAll('svg rect.cell').length;
	r.Rasters = document.querySelectorAll('svg image.cells').length;
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

	if facts.Cells != wantCells || facts.Rasters != 1 {
		t.Errorf("%d heatmap cells and %d images of cells in the DOM, want %d and 1", facts.Cells, facts.Rasters, wantCells)
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

// notebook10Heads is one block's heads as notebook 10 draws them: 4 heads of causal attention
// over its 32-character line, with the characters as labels.
func notebook10Heads() Renderer {
	const line = "First Citizen:\nBefore we proceed"
	var labels []string
	for _, c := range line {
		labels = append(labels, strings.ReplaceAll(string(c), "\n", "⏎"))
	}
	const h, n = 4, 32
	x := make([]float32, h*n*n)
	for p := range h * n {
		row := x[p*n : (p+1)*n]
		i := p % n
		for j := range row {
			row[j] = float32(negInf)
			if j <= i {
				row[j] = float32(2 * math.Sin(float64(p*7+j*3)))
			}
		}
		copy(row[:i+1], softmaxRows(row[:i+1], i+1, 1))
		for j := i + 1; j < n; j++ {
			row[j] = 0
		}
	}
	return Heads(tensors.FromFlatDataAndDimensions(x, h, n, n)).Tokens(labels...).Title("block 3")
}

// TestBrowserRaster draws notebook 10's heads both ways, as rectangles (what the course drew
// before) and as one image per panel (what it draws now), side by side in headless Chromium,
// and compares the pixels at every cell's centre: they must be the same colour. The
// screenshots are left in out/display/ (heatmap-before.png, heatmap-after.png and
// heatmap-before-after.png) for a person to look at.
func TestBrowserRaster(t *testing.T) {
	chromium := needChromium(t)
	defer func(n int) { maxVectorCells = n }(maxVectorCells)
	maxVectorCells = math.MaxInt
	vector, err := notebook10Heads().Done()
	if err != nil {
		t.Fatal(err)
	}
	maxVectorCells = 0
	raster, err := notebook10Heads().Done()
	if err != nil {
		t.Fatal(err)
	}
	page := `<!doctype html><html><head><meta charset="utf-8"></head><body style="margin:0;background:#ffffff">` +
		`<div style="display:flex;gap:20px;align-items:flex-start"><div id="before">` + vector + `</div><div id="after">` + raster + `</div></div></body></html>`
	pagePath := filepath.Join(t.TempDir(), "raster.html")
	if err := os.WriteFile(pagePath, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	bctx := newBrowser(t, chromium, 2800, 800)
	var facts struct {
		Before, After []float64   // the two SVGs' boxes
		Centres       [][]float64 // cell centres relative to their SVG
		Images        int
	}
	const js = `(() => {
	const box = e => { const b = e.getBoundingClientRect(); return [b.left + window.scrollX, b.top + window.scrollY, b.width, b.height]; };
	const before = document.querySelector('#before svg'), after = document.querySelector('#after svg');
	const b0 = box(before);
	return {
		Before: b0, After: box(after),
		Centres: Array.from(before.querySelectorAll('rect.cell')).map(e => { const b = box(e); return [b[0] + b[2]/2 - b0[0], b[1] + b[3]/2 - b0[1]]; }),
		Images: after.querySelectorAll('image.cells').length,
	};
})()`
	var shot []byte
	if err := chromedp.Run(bctx,
		chromedp.Navigate("file://"+pagePath),
		chromedp.WaitReady("body"),
		chromedp.Evaluate(js, &facts),
		chromedp.FullScreenshot(&shot, 100),
	); err != nil {
		t.Fatalf("chromium (%s): %v", chromium, err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if len(facts.Centres) != 4*32*32 || facts.Images != 4 {
		t.Fatalf("%d rectangles before, %d images after: want 4096 and 4", len(facts.Centres), facts.Images)
	}
	if facts.Before[2] != facts.After[2] || facts.Before[3] != facts.After[3] {
		t.Errorf("before is %v×%v, after %v×%v: want the same size", facts.Before[2], facts.Before[3], facts.After[2], facts.After[3])
	}
	differ := 0
	for _, c := range facts.Centres {
		p0 := img.At(int(facts.Before[0]+c[0]), int(facts.Before[1]+c[1]))
		p1 := img.At(int(facts.After[0]+c[0]), int(facts.After[1]+c[1]))
		r0, g0, b0, _ := p0.RGBA()
		r1, g1, b1, _ := p1.RGBA()
		if d := max(absDiff(r0, r1), absDiff(g0, g1), absDiff(b0, b1)) >> 8; d > 1 {
			if differ < 5 {
				t.Errorf("cell centre %v: %v before, %v after", c, p0, p1)
			}
			differ++
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d cell centres changed colour", differ, len(facts.Centres))
	}
	dir := outDir(t)
	crop := func(name string, b []float64) {
		sub := img.(interface {
			SubImage(image.Rectangle) image.Image
		}).SubImage(image.Rect(int(b[0]), int(b[1]), int(b[0]+b[2]), int(b[1]+b[3])))
		var buf bytes.Buffer
		if err := png.Encode(&buf, sub); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	crop("heatmap-before.png", facts.Before)
	crop("heatmap-after.png", facts.After)
	if err := os.WriteFile(filepath.Join(dir, "heatmap-before-after.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cell centres the same colour; before %d bytes of SVG, after %d; screenshots in %s",
		len(facts.Centres), len(vector), len(raster), dir)
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}
