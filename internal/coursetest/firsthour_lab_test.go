package coursetest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/attnbook/attnbook/internal/nbrun"
	"github.com/attnbook/attnbook/pkg/gpt"
	"github.com/chromedp/chromedp"
)

// TestFirstHourLab plays the first hour's key steps (playFirstHour: the workspace, 00 run, 08
// wrong → right → broken, 10 short: train, interrupt, resume, generate) in JupyterLab 4 from the
// classroom image, started by `go run ./kernel up -lab` (ATTNBOOK_IMAGE names the image; up builds
// attnbook:dev when it is missing, minutes on a cold machine), then asserts a clean `git status`.
// It runs under CI=true or with ATTNBOOK_LAB_TEST=1 and skips loudly otherwise; screenshots go
// to out/firsthour/lab/.
func TestFirstHourLab(t *testing.T) {
	if testing.Short() {
		t.Skip("the first hour takes minutes")
	}
	chromium := requireLabFromImage(t, "the first hour in JupyterLab", "TestFirstHourLab")
	root := nbrun.Root(t)
	corpus, _, err := gpt.LoadCorpus(root)
	if err != nil {
		nbrun.Missing(t, err.Error())
	}
	shots := &screenshots{dir: filepath.Join(root, "out", "firsthour", "lab")}
	os.RemoveAll(shots.dir)
	clone := copyCheckout(t, root)
	up := startUpWith(t, clone, corpus, []string{"up", "-lab", "-port", fmt.Sprint(freePort(t))}, `/lab/tree/attnbook/work\?token=`,
		"ATTNBOOK_LAB_ARGS=--LabApp.expose_app_in_browser=True")
	defer up.stop(t)

	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	b := newBrowser(t, ctx, chromium)
	fe := &lab{b: b, base: up.base, token: up.token}
	shots.b = b

	playFirstHour(t, fe, shots, clone)

	up.stop(t)
	if st := gitCmd(t, clone, "status", "--porcelain"); st != "" {
		t.Errorf("git status of the checkout after the first hour in JupyterLab is not clean:\n%s", st)
	}
}

// requireLabFromImage skips test (what it plays, for the message) loudly unless CI=true or
// ATTNBOOK_LAB_TEST=1; then a missing Chromium or Docker fails it (nbrun.Missing). Where JupyterLab
// is installed locally, up -lab runs it instead of the image, and the test skips. It returns
// Chromium's path.
func requireLabFromImage(t *testing.T, what, test string) string {
	t.Helper()
	if os.Getenv("CI") != "true" && os.Getenv("ATTNBOOK_LAB_TEST") != "1" {
		t.Skip("\n" + strings.Repeat("!", 78) + "\n" +
			"!!! SKIPPED: " + what + " (from the classroom image) was NOT tested.\n" +
			"!!! Run it with:  ATTNBOOK_LAB_TEST=1 go run ./kernel test -run " + test + " ./internal/coursetest/\n" +
			"!!! It needs Docker (and builds the image when missing); CI=true makes it mandatory.\n" +
			strings.Repeat("!", 78))
	}
	chromium := findChromium()
	if chromium == "" {
		nbrun.Missing(t, "Chromium is not installed (Debian's chromium, or set ATTNBOOK_CHROMIUM)")
	}
	if _, err := exec.LookPath("docker"); err != nil {
		nbrun.Missing(t, "Docker is not installed: JupyterLab runs from the classroom image")
	}
	if err := exec.Command("docker", "info").Run(); err != nil {
		nbrun.Missing(t, "no Docker daemon answers: JupyterLab runs from the classroom image")
	}
	if pythonWith("jupyterlab") != "" {
		t.Skip("JupyterLab is installed locally: up -lab runs it, not the image; the classic Notebook's tests cover this machine")
	}
	return chromium
}

// lab drives JupyterLab 4 through its application object (window.jupyterapp, exposed by
// --LabApp.expose_app_in_browser=True, as JupyterLab's own Galata tests do).
type lab struct {
	b           *browser
	base, token string
	opened      int // notebooks opened, each in a workspace of its own
}

// labWidget is the open notebook's widget (the one open sets window.attnbookPath to); the shell's
// currentWidget follows the keyboard focus, which a headless window does not have.
const labWidget = `[...jupyterapp.shell.widgets("main")].find(w => w.context && w.context.path === window.attnbookPath)`

func (l *lab) name() string { return "JupyterLab" }

func (l *lab) tree(t *testing.T) string {
	t.Helper()
	if err := chromedp.Run(l.b.ctx, chromedp.Navigate(l.base+"/lab/tree/attnbook/work?token="+l.token)); err != nil {
		t.Fatal(err)
	}
	l.b.waitFor(t, "JupyterLab", `window.jupyterapp`, 3*time.Minute)
	l.b.eval(t, `jupyterapp.restored.then(() => jupyterapp.commands.execute("filebrowser:go-to-path", {path: "attnbook/work"})).then(() => true)`, nil)
	l.b.waitFor(t, "JupyterLab's file browser on work/", `[...document.querySelectorAll(".jp-DirListing-itemText")].some(e => e.textContent.trim() === "00_start_here.ipynb")`, 3*time.Minute)
	var text string
	l.b.eval(t, `document.querySelector(".jp-DirListing-content").innerText`, &text)
	return text
}

func (l *lab) open(t *testing.T, notebook string) {
	t.Helper()
	// A page of its own, as classic's open: after leave the browser is on about:blank. Each open
	// gets a new, empty workspace (JupyterLab would otherwise restore the notebooks opened before).
	l.opened++
	url := fmt.Sprintf("%s/lab/workspaces/attnbook-%d/tree/attnbook/work/%s?reset&token=%s", l.base, l.opened, notebook, l.token)
	if err := chromedp.Run(l.b.ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	l.b.waitFor(t, "JupyterLab", `window.jupyterapp`, 3*time.Minute)
	l.b.eval(t, fmt.Sprintf(`jupyterapp.restored.then(() => { window.attnbookPath = "attnbook/work/%s"; return true; })`, notebook), nil)
	ready := fmt.Sprintf(`(() => { const w = %s; const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
		return !!(w && w.context && w.context.path.endsWith(%q) && k && k.connectionStatus === "connected" && k.status === "idle"); })()`, labWidget, notebook)
	for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(time.Second) {
		var ok bool
		l.b.eval(t, ready, &ok)
		if ok {
			break
		}
		if time.Now().After(deadline) {
			var state string
			l.b.eval(t, fmt.Sprintf(`(() => { const w = %s; const s = w && w.sessionContext; const k = s && s.session && s.session.kernel;
				return JSON.stringify({widget: w && w.constructor.name, path: w && w.context && w.context.path, session: !!(s && s.session),
					kernel: k && k.name, connection: k && k.connectionStatus, status: k && k.status, dialogs: document.querySelectorAll(".jp-Dialog").length,
					dialogText: [...document.querySelectorAll(".jp-Dialog")].map(d => d.innerText)}); })()`, labWidget), &state)
			var png []byte
			chromedp.Run(l.b.ctx, chromedp.CaptureScreenshot(&png))
			os.WriteFile(filepath.Join(nbrun.Root(t), "out", "firsthour", "lab", "open-timeout.png"), png, 0o644)
			t.Fatalf("%s's kernel is not ready within 3 minutes: %s", notebook, state)
		}
	}
	time.Sleep(2 * time.Second)
	if err := chromedp.Run(l.b.ctx, chromedp.Click(".jp-Notebook .jp-Cell", chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
}

func (l *lab) dirty(t *testing.T) bool {
	var d bool
	l.b.eval(t, labWidget+".context.model.dirty", &d)
	return d
}

func (l *lab) find(t *testing.T, fragment string) int {
	t.Helper()
	var idx []int
	l.b.eval(t, fmt.Sprintf(`%s.content.widgets.map((c, i) => c.model.type === "code" && c.model.sharedModel.getSource().includes(%q) ? i : -1).filter(i => i >= 0)`, labWidget, fragment), &idx)
	if len(idx) != 1 {
		t.Fatalf("%d code cells hold %q, want 1", len(idx), fragment)
	}
	return idx[0]
}

func (l *lab) setSource(t *testing.T, cell int, src string) {
	js, _ := json.Marshal(src)
	l.b.eval(t, fmt.Sprintf("%s.content.widgets[%d].model.sharedModel.setSource(%s)", labWidget, cell, js), nil)
}

// start runs a cell without waiting for it (notebook:run-cell's promise ends with the execution)
// and returns once the cell shows it runs: its prompt [*], or outputs.
func (l *lab) start(t *testing.T, cell int) {
	t.Helper()
	l.b.eval(t, fmt.Sprintf(`(() => { const w = %s; w.content.activeCellIndex = %d; w.content.widgets[%d].model.outputs.clear();
		jupyterapp.commands.execute("notebook:run-cell"); return true; })()`, labWidget, cell, cell), nil)
	l.b.waitFor(t, fmt.Sprintf("cell %d starts", cell), fmt.Sprintf(`(() => { const c = %s.content.widgets[%d];
		return (c.node.querySelector(".jp-InputPrompt") || {}).textContent.includes("*") || c.model.outputs.length > 0; })()`, labWidget, cell), time.Minute)
}

func (l *lab) runCell(t *testing.T, cell int) {
	l.b.eval(t, fmt.Sprintf(`(() => { %s.content.activeCellIndex = %d; return jupyterapp.commands.execute("notebook:run-cell").then(() => true); })()`, labWidget, cell), nil)
}

func (l *lab) running(t *testing.T, cell int) bool {
	var busy bool
	l.b.eval(t, fmt.Sprintf(`(%s.content.widgets[%d].node.querySelector(".jp-InputPrompt") || {}).textContent.includes("*")`, labWidget, cell), &busy)
	return busy
}

func (l *lab) run(t *testing.T, cell int, limit time.Duration) {
	t.Helper()
	if cell >= 0 {
		l.runCell(t, cell)
	}
	l.b.waitFor(t, fmt.Sprintf("cell %d", cell), fmt.Sprintf(`(() => { const w = %s; return ![...w.content.node.querySelectorAll(".jp-InputPrompt")].some(p => p.textContent.includes("*")) &&
		w.sessionContext.session.kernel.status === "idle"; })()`, labWidget), limit)
}

func (l *lab) interrupt(t *testing.T) {
	l.b.eval(t, labWidget+".sessionContext.session.kernel.interrupt().then(() => true)", nil)
}

func (l *lab) outputs(t *testing.T, cell int) []map[string]any {
	t.Helper()
	var js string
	l.b.eval(t, fmt.Sprintf("JSON.stringify(%s.content.widgets[%d].model.outputs.toJSON())", labWidget, cell), &js)
	var out []map[string]any
	if err := json.Unmarshal([]byte(js), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func (l *lab) outputText(t *testing.T, cell int) string {
	var s string
	l.b.eval(t, fmt.Sprintf("%s.content.widgets[%d].outputArea.node.innerText", labWidget, cell), &s)
	return s
}

func (l *lab) count(t *testing.T, cell int, selector string) int {
	var n int
	l.b.eval(t, fmt.Sprintf("%s.content.widgets[%d].outputArea.node.querySelectorAll(%q).length", labWidget, cell, selector), &n)
	return n
}

func (l *lab) strokes(t *testing.T, cell int) []string {
	var s []string
	l.b.eval(t, fmt.Sprintf(`(() => {
		const seen = [];
		for (const el of %s.content.widgets[%d].outputArea.node.querySelectorAll("svg polyline, svg path")) {
			const pts = el.tagName === "polyline" ? (el.getAttribute("points") || "").trim().split(/\s+/).length
				: ((el.getAttribute("d") || "").match(/[LlMm]/g) || []).length;
			const st = getComputedStyle(el);
			if (pts < 3 || st.stroke === "none" || st.visibility === "hidden" || st.display === "none" || Number(st.strokeOpacity) === 0) continue;
			if (!seen.includes(st.stroke)) seen.push(st.stroke);
		}
		return seen;
	})()`, labWidget, cell), &s)
	return s
}

func (l *lab) scrollTo(t *testing.T, cell int) {
	l.b.eval(t, fmt.Sprintf(`%s.content.widgets[%d].node.scrollIntoView({block: "end"})`, labWidget, cell), nil)
	time.Sleep(300 * time.Millisecond)
}

func (l *lab) save(t *testing.T) {
	t.Helper()
	l.b.eval(t, `jupyterapp.commands.execute("docmanager:save").then(() => true)`, nil)
	l.b.waitFor(t, "saved", "!"+labWidget+".context.model.dirty", time.Minute)
}

func (l *lab) leave(t *testing.T) []string {
	t.Helper()
	l.b.takeDialogs()
	ctx, cancel := context.WithTimeout(l.b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Errorf("leaving the page: %v", err)
	}
	time.Sleep(time.Second)
	return l.b.takeDialogs()
}

var _ frontEnd = (*lab)(nil)
var _ frontEnd = (*classic)(nil)
