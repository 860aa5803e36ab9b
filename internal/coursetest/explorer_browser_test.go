package coursetest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/attnbook/attnbook/internal/nbrun"
)

// Issue 29: the explorer (display.ExploreHeads) in a real front end, driven by headless Chromium:
//
//  1. on a first Run All (a fresh kernel, every cell queued) it never falls back silently: the
//     front end answers, and the explorer draws the grid under its one-line Run All hint;
//  2. Run All never waits on a person: the cell after the explorer runs without a click;
//  3. run on its own, the cell shows the slider; the slider moves the picture; Done leaves the
//     grid, hands the keyboard back (Shift-Enter runs the next cell without a click) and leaves no
//     blank gap.
//
// Screenshots of each step go to out/display/<front end>-*.png.

// explorerTries is how many first Run Alls each front end gets.
const explorerTries = 5

// The notebook the test drives: a cell before the explorer, the explorer (2 heads), a cell after.
var explorerCells = []string{
	"import \"fmt\"\n\n%%\nfmt.Println(\"before the explorer\")",
	"import (\n\t\"time\"\n\n\t\"github.com/attnbook/attnbook/pkg/display\"\n\t\"github.com/attnbook/attnbook/pkg/eager\"\n)\n\n" +
		"%%\ndisplay.ExploreHeads(eager.Full(0.25, 2, 4, 4), time.Minute, \"a\", \"b\", \"c\", \"d\")",
	"import \"fmt\"\n\n%%\nfmt.Println(\"after the explorer\")",
}

const (
	runAllHint = "Run All draws every head at once: run this cell on its own (Shift-Enter) for a slider"
	noAnswer   = "no interactive front end answered"
)

// explorerFrontEnd is what differs between the classic Notebook and JupyterLab for the test.
type explorerFrontEnd struct {
	name string
	// url of the notebook file name under the server's base URL.
	url func(base, file, token string) string
	// ready is a JS expression, true once the notebook is shown.
	ready string
	// idle is a JS expression, true while the page shows its kernel idle; empty where the test
	// asks the server (/api/kernels) instead.
	idle string
	// runAll starts Run All the way a person does (a menu).
	runAll []chromedp.Action
	// cells is a JS expression: the notebook's code cells, in order (DOM elements).
	cells string
	// outputs is the CSS selector of a cell's output areas, within the cell.
	outputs string
	// prompt is the CSS selector of a cell's input prompt ("[*]", "[3]"), within the cell.
	prompt string
	// selectCell selects code cell i in command mode (a click on its prompt).
	selectCell func(i int) chromedp.Action
	// exercises is the URL path (under the server's base URL) of notebook 08.
	exercises string
	// save saves the open notebook, as a person does.
	save chromedp.Action
	// copies is the folder on this machine that holds the served copies of explorer.ipynb and
	// 04_multi_head.ipynb (set by the test).
	copies string
}

var classicNotebook = explorerFrontEnd{
	name:  "classic",
	url:   func(base, file, token string) string { return base + "/notebooks/" + file + "?token=" + token },
	ready: `!!(window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel && Jupyter.notebook.kernel.is_connected())`,
	idle:  `!!document.querySelector('#kernel_indicator_icon.kernel_idle_icon')`,
	runAll: []chromedp.Action{
		chromedp.Click(`#celllink`, chromedp.ByQuery),
		chromedp.Click(`#run_all_cells > a`, chromedp.ByQuery),
	},
	cells:   `Array.from(document.querySelectorAll('#notebook .cell.code_cell'))`,
	outputs: `.output_area`,
	prompt:  `.input_prompt`,
	selectCell: func(i int) chromedp.Action {
		return chromedp.Click(fmt.Sprintf(`#notebook .cell.code_cell:nth-of-type(%d) .input_prompt`, i+1), chromedp.ByQuery)
	},
	exercises: "/notebooks/08_exercises.ipynb",
	save:      chromedp.Evaluate(`Jupyter.notebook.save_notebook(), true`, nil),
}

var jupyterLab = explorerFrontEnd{
	name:  "lab",
	url:   func(base, file, token string) string { return base + "/lab/tree/" + file + "?token=" + token },
	ready: `!!document.querySelector('.jp-NotebookPanel .jp-Notebook .jp-CodeCell .jp-InputPrompt')`,
	// The status bar's kernel item reads "Go (attnbook) | Idle".
	idle: `Array.from(document.querySelectorAll('.jp-StatusBar-TextItem')).some(e => /\|\s*Idle\s*$/.test(e.textContent))`,
	runAll: []chromedp.Action{
		// Lumino writes a label's mnemonic letter in its own element: compare the whole text.
		chromedp.Click(`//div[contains(@class,"lm-MenuBar-itemLabel") and normalize-space(.)="Run"]`, chromedp.BySearch),
		pointAndClick(`//div[contains(@class,"lm-Menu-itemLabel") and normalize-space(.)="Run All Cells"]`),
	},
	cells:     `Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-CodeCell'))`,
	exercises: "/lab/tree/attnbook/notebooks/08_exercises.ipynb",
	save:      chromedp.KeyEvent("s", chromedp.KeyModifiers(ctrlKey)),
	outputs:   `.jp-OutputArea-child`,
	prompt:    `.jp-InputPrompt`,
	selectCell: func(i int) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			js := fmt.Sprintf(`(() => { const p = Array.from(document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-CodeCell'))[%d].querySelector('.jp-InputPrompt'); p.setAttribute('data-attnbook-select', '%d'); return true; })()`, i, i)
			var ok bool
			if err := chromedp.Evaluate(js, &ok).Do(ctx); err != nil {
				return err
			}
			return chromedp.Click(fmt.Sprintf(`[data-attnbook-select="%d"]`, i), chromedp.ByQuery).Do(ctx)
		})
	},
}

// pointAndClick moves the mouse onto the element at xpath, then clicks it, as a hand does.
// Lumino's menus pick the item under the pointer when it moves and run it on the button's
// release: a bare click (chromedp.Click sends only press and release) leaves the menu open with
// nothing run.
func pointAndClick(xpath string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		var nodes []*cdp.Node
		if err := chromedp.Nodes(xpath, &nodes, chromedp.BySearch).Do(ctx); err != nil {
			return err
		}
		box, err := dom.GetBoxModel().WithNodeID(nodes[0].NodeID).Do(ctx)
		if err != nil {
			return err
		}
		q := box.Content // x1,y1 … x4,y4
		x, y := (q[0]+q[4])/2, (q[1]+q[5])/2
		if err := chromedp.MouseEvent(input.MouseMoved, x, y).Do(ctx); err != nil {
			return err
		}
		return chromedp.MouseClickXY(x, y).Do(ctx)
	})
}

// TestExplorerInJupyterLab plays issue 29's three points in JupyterLab 4 from the classroom image
// (`kernel up -lab`, this checkout mounted; the image is built when missing, as TestUpLab does).
// It runs under CI=true or with ATTNBOOK_LAB_TEST=1 and skips loudly otherwise.
func TestExplorerInJupyterLab(t *testing.T) {
	chromium := requireLabFromImage(t, "the explorer in JupyterLab", "TestExplorerInJupyterLab")
	root := nbrun.Root(t)
	bin := filepath.Join(t.TempDir(), "kernel")
	build := exec.Command("go", "build", "-o", bin, "./kernel")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./kernel: %v\n%s", err, out)
	}
	// The notebook goes into the mounted checkout's git-ignored out/.
	dir := filepath.Join(root, "out", "explorer-lab")
	t.Cleanup(func() { os.RemoveAll(dir) })
	writeExplorerNotebook(t, filepath.Join(dir, "explorer.ipynb"))
	copyFile(t, filepath.Join(root, "notebooks", "04_multi_head.ipynb"), filepath.Join(dir, "04_multi_head.ipynb"))

	up := exec.Command(bin, "up", "-lab", "-port", fmt.Sprint(freePort(t)))
	up.Dir = root
	logPath := filepath.Join(t.TempDir(), "up.log")
	// Registered first, so it runs after the server has stopped: kernel up -lab removes its
	// container when it stops (TestUpLab checks that); a container still there leaked.
	t.Cleanup(func() {
		out, _ := os.ReadFile(logPath)
		name := regexp.MustCompile(`\(container (attnbook-lab-[0-9a-f]+-\d+)\)`).FindStringSubmatch(string(out))
		if name == nil {
			return
		}
		if ps, _ := exec.Command("docker", "ps", "-aq", "--filter", "name=^"+name[1]+"$").Output(); strings.TrimSpace(string(ps)) != "" {
			t.Errorf("container %s is still there after kernel up -lab stopped: removing it", name[1])
			exec.Command("docker", "rm", "-f", name[1]).Run()
		}
	})
	// One Ctrl-C, as a student gives it; kernel up -lab's own relay kills the container's client
	// 30 s after it.
	exited := startServer(t, up, logPath, 1, 45*time.Second)
	urlRE := regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/lab/tree/attnbook/work\?token=([0-9a-f]+)`)
	var m []string
	for start := time.Now(); m == nil; time.Sleep(time.Second) {
		out, _ := os.ReadFile(logPath)
		m = urlRE.FindStringSubmatch(string(out))
		select {
		case <-exited:
			if m == nil {
				if up.ProcessState.ExitCode() == 3 {
					nbrun.Missing(t, "kernel up -lab: "+tail(string(out), 1000))
				}
				t.Fatalf("kernel up -lab exited (%v):\n%s", up.ProcessState, tail(string(out), 4000))
			}
		default:
		}
		if m == nil && time.Since(start) > 45*time.Minute { // builds the image when it is missing
			t.Fatalf("kernel up -lab served nothing in 45 minutes:\n%s", tail(string(out), 4000))
		}
	}
	base, token := m[1], m[2]
	lab := jupyterLab
	lab.copies = dir
	// Each open gets a workspace of its own: JupyterLab restores a workspace's open notebooks, and
	// its Run menu acts on the notebook that last had the keyboard focus, which in a headless
	// window can be a restored one (Run All ran the previous explorer.ipynb, not 04).
	opened := 0
	lab.url = func(base, file, token string) string {
		opened++
		return fmt.Sprintf("%s/lab/workspaces/attnbook-test-%d/tree/attnbook/out/explorer-lab/%s?reset&token=%s", base, opened, file, token)
	}
	playExplorer(t, lab, chromium, base, token)
}

// TestExplorerInClassicNotebook plays issue 29's three points in the classic Notebook (Debian's
// jupyter-notebook 6).
func TestExplorerInClassicNotebook(t *testing.T) {
	chromium := findChromium()
	if chromium == "" {
		nbrun.Missing(t, "Chromium is not installed (Debian's chromium, or set ATTNBOOK_CHROMIUM)")
	}
	py := pythonWith("notebook")
	if py == "" {
		nbrun.Missing(t, "the classic Notebook is not installed (Debian's jupyter-notebook)")
	}
	root := nbrun.Root(t)
	dir := t.TempDir()
	data := privateKernelSpec(t, root, dir)
	nbDir := filepath.Join(dir, "notebooks")
	writeExplorerNotebook(t, filepath.Join(nbDir, "explorer.ipynb"))
	exercises, err := os.ReadFile(filepath.Join(root, exercisesNotebook))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(nbDir, "08_exercises.ipynb"), exercises, 0o644); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(root, "notebooks", "04_multi_head.ipynb"), filepath.Join(nbDir, "04_multi_head.ipynb"))
	port, token := freePort(t), "attnbook-explorer-test"
	server := exec.Command(py, "-m", "notebook", "--no-browser", "--ip=127.0.0.1", fmt.Sprintf("--port=%d", port),
		"--NotebookApp.token="+token, "--NotebookApp.notebook_dir="+nbDir)
	if os.Geteuid() == 0 {
		server.Args = append(server.Args, "--allow-root") // containers and CI machines run as root
	}
	server.Env = jupyterEnv(data, dir)
	startServer(t, server, filepath.Join(dir, "server.log"), 2, 10*time.Second)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitServer(t, base, token)
	classic := classicNotebook
	classic.copies = nbDir
	playExplorer(t, classic, chromium, base, token)
}

// playExplorer runs the tries and the live session in one front end.
func playExplorer(t *testing.T, fe explorerFrontEnd, chromium, base, token string) {
	// Stop the kernels through the server before the server stops (cleanups run last first): a
	// server interrupted or killed leaves the kernels it has not finished stopping running, each
	// in a session of its own, out of reach of the server's process group.
	t.Cleanup(func() { _ = deleteAll(base, token, "kernels") })
	browser := newExplorerBrowser(t, chromium)
	// Each try gets a new tab; closing the old one skips its "Leave site?" question.
	var ctx context.Context
	closeTab := func() {}
	newTab := func() {
		closeTab()
		var cancel context.CancelFunc
		ctx, cancel = chromedp.NewContext(browser)
		closeTab = cancel
		// A tab opened beside another stays in the background, where JupyterLab never draws
		// its cells (no animation frames): bring it to the front.
		if err := chromedp.Run(ctx, page.BringToFront()); err != nil {
			t.Fatalf("%s: new tab: %v", fe.name, err)
		}
	}
	t.Cleanup(func() { closeTab() })
	shots := screenshotDir(t)
	shot := func(name string) {
		var png []byte
		if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
			t.Logf("screenshot %s: %v", name, err)
			return
		}
		path := filepath.Join(shots, fe.name+"-"+name+".png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Error(err)
		}
	}
	cellText := func(i int) string {
		var s string
		js := fmt.Sprintf(`(() => { const c = %s[%d]; return c ? Array.from(c.querySelectorAll(%q)).map(e => e.innerText).join('\n') : ''; })()`, fe.cells, i, fe.outputs)
		if err := chromedp.Run(ctx, chromedp.Evaluate(js, &s)); err != nil {
			t.Fatalf("%s: reading cell %d: %v", fe.name, i, err)
		}
		return s
	}
	until := func(what string, limit time.Duration, ok func() bool) time.Duration {
		t.Helper()
		start := time.Now()
		for !ok() {
			if time.Since(start) > limit {
				shot("timeout")
				t.Fatalf("%s: %s: not after %v", fe.name, what, limit)
			}
			time.Sleep(300 * time.Millisecond)
		}
		return time.Since(start)
	}
	evalBool := func(js string) bool {
		var b bool
		// A page that hangs (a modal dialog) must not hang the test.
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := chromedp.Run(tctx, chromedp.Evaluate(js, &b)); err != nil {
			t.Logf("%s: evaluating %.60q: %v", fe.name, js, err)
			return false
		}
		return b
	}

	// idleNow: the page's kernel indicator says idle, or the server does. The server's view alone
	// is not enough: under load, the Jupyter server's activity watcher sometimes never sees a
	// fresh GoNB kernel's status messages although the page got the kernel's replies
	// (/api/kernels said "starting" for 90 s, three times in one CI run).
	idleNow := func() bool {
		return (fe.idle != "" && evalBool(fe.idle)) || kernelIdle(base, token)
	}
	// runAllDone: the kernel idle and no cell of the notebook showing the busy prompt [*] (Run All
	// queues every cell at once; between two cells the kernel is idle for a moment).
	runAllDone := func() bool {
		return idleNow() && !evalBool(fmt.Sprintf(`%s.some(c => { const p = c.querySelector(%q); return !!p && p.textContent.includes('*'); })`, fe.cells, fe.prompt))
	}

	// open shows file in a new tab with a fresh kernel and waits until both are ready. A kernel
	// that does not come up within 90 s (seen once in thirty starts on a loaded 2-core machine:
	// GoNB never answered the page's first request) is given one more start, and the test says so.
	open := func(file string) {
		t.Helper()
		for attempt := 1; ; attempt++ {
			newTab()
			if err := deleteAll(base, token, "sessions"); err != nil { // the next page load starts a fresh kernel
				t.Fatal(err)
			}
			if err := chromedp.Run(ctx, chromedp.Navigate(fe.url(base, file, token))); err != nil {
				t.Fatalf("%s: %v", fe.name, err)
			}
			ready := func() bool { return evalBool(fe.ready) && idleNow() }
			start := time.Now()
			for !ready() && time.Since(start) < 90*time.Second {
				time.Sleep(300 * time.Millisecond)
			}
			if ready() {
				return
			}
			shot("not-ready")
			var kernels []map[string]any
			_ = apiGet(base, token, "/api/kernels", &kernels)
			t.Logf("%s: page ready %v, kernels %v", fe.name, evalBool(fe.ready), kernels)
			if attempt == 2 {
				t.Fatalf("%s: %s and its kernel were not ready in 90 s, twice", fe.name, file)
			}
			t.Logf("%s: %s and its kernel were not ready in 90 s: starting again", fe.name, file)
		}
	}

	// 1 and 2: first Run Alls, each on a fresh kernel.
	for try := 1; try <= explorerTries; try++ {
		open("explorer.ipynb")
		if err := runWithin(ctx, 30*time.Second, fe.runAll...); err != nil {
			shot("no-run-all")
			t.Fatalf("%s: Run All: %v", fe.name, err)
		}
		took := until("Run All reaches the cell after the explorer", 5*time.Minute, func() bool {
			return strings.Contains(cellText(2), "after the explorer")
		})
		explorer := cellText(1)
		hasGrid := evalBool(fmt.Sprintf(`!!%s[1].querySelector('svg.attnbook-heads')`, fe.cells))
		t.Logf("%s try %d: Run All done in %.1f s; explorer: %q, grid %v", fe.name, try, took.Seconds(), firstLine(explorer), hasGrid)
		if strings.Contains(explorer, noAnswer) {
			t.Errorf("%s try %d: the explorer fell back: %q", fe.name, try, firstLine(explorer))
		} else if !strings.Contains(explorer, runAllHint) || !hasGrid {
			t.Errorf("%s try %d: the explorer shows %q (grid %v), want the grid under the Run All hint", fe.name, try, explorer, hasGrid)
		}
		if try == 1 {
			shot("run-all")
		}
	}

	// 1 and 2 on the course's own notebook 04 (a copy): its explorer sits far down, below forty
	// cells, where a front end may not have drawn it yet when Run All reaches it.
	open("04_multi_head.ipynb")
	saved := filepath.Join(fe.copies, "04_multi_head.ipynb")
	before04, _ := os.Stat(saved)
	// Run All has started once the first cell shows [*] or its count: a Run All that the menu did
	// not take (seen once in CI: "ended" after 5 s, nothing run) is given once more, and said so;
	// without this check the idle kernel would pass for the end of the run.
	firstRan := fmt.Sprintf(`(() => { const c = %s[0]; const p = c && c.querySelector(%q); return !!p && /\[[*0-9]/.test(p.textContent); })()`, fe.cells, fe.prompt)
	for attempt := 1; ; attempt++ {
		if err := runWithin(ctx, 30*time.Second, fe.runAll...); err != nil {
			shot("no-run-all")
			t.Fatalf("%s: Run All: %v", fe.name, err)
		}
		start := time.Now()
		for !evalBool(firstRan) && time.Since(start) < 30*time.Second {
			time.Sleep(300 * time.Millisecond)
		}
		if evalBool(firstRan) {
			break
		}
		shot(fmt.Sprintf("04-not-started-%d", attempt))
		if attempt == 2 {
			t.Fatalf("%s: Run All of notebook 04 did not start its first cell in 30 s, twice", fe.name)
		}
		t.Logf("%s: RUN ALL AGAIN: notebook 04's first cell did not start within 30 s of Run All", fe.name)
	}
	took := until("Run All of notebook 04 ends (the kernel idle for 5 s)", 15*time.Minute, idleFor(runAllDone, 5*time.Second))
	if err := chromedp.Run(ctx, fe.save); err != nil {
		t.Fatalf("%s: saving notebook 04: %v", fe.name, err)
	}
	until("notebook 04 is saved", time.Minute, func() bool {
		st, err := os.Stat(saved)
		return err == nil && !st.ModTime().Equal(before04.ModTime())
	})
	time.Sleep(time.Second) // the file is complete
	shot("04-run-all")
	explorer04 := ""
	for _, c := range loadJSON(t, saved)["cells"].([]any) {
		cell := c.(map[string]any)
		if !strings.Contains(joinSource(cell["source"]), "display.ExploreHeads(") {
			continue
		}
		out, _ := json.Marshal(cell["outputs"])
		explorer04 = string(out)
	}
	t.Logf("%s: Run All of notebook 04 in %.0f s; its explorer's outputs: %.200q", fe.name, took.Seconds(), explorer04)
	if strings.Contains(explorer04, noAnswer) || !strings.Contains(explorer04, runAllHint) || !strings.Contains(explorer04, "attnbook-heads") {
		t.Errorf("%s: notebook 04's explorer after Run All shows %.300q: want the grid under the Run All hint", fe.name, explorer04)
	}

	// 3: the explorer cell on its own: the slider, then Done. GoNB opens its widget channel (a
	// second websocket to the kernel) while the cell runs. The Jupyter server holds a new
	// websocket until the kernel answers kernel_info unless it sees the kernel busy, and GoNB
	// answers kernel_info only after the running cell: when the server's view of a fresh kernel
	// is stuck at "starting" (see idleNow) the channel misses GoNB's 3 s and the explorer falls
	// back to the grid under noAnswerNote. That case gets one more run of the cell, and says so.
	open("explorer.ipynb")
	slider := fmt.Sprintf(`%s[1].querySelector('input[type=range]')`, fe.cells)
	for run := 1; ; run++ {
		if err := chromedp.Run(ctx, fe.selectCell(1), chromedp.KeyEvent("\r", chromedp.KeyModifiers(shiftKey))); err != nil {
			t.Fatalf("%s: running the explorer cell alone: %v", fe.name, err)
		}
		state := kernelState(base, token)
		shown, fellBack := false, false
		for start := time.Now(); ; time.Sleep(300 * time.Millisecond) {
			if shown = evalBool("!!" + slider); shown {
				break
			}
			if fellBack = strings.Contains(cellText(1), noAnswer); fellBack || time.Since(start) > time.Minute {
				break
			}
		}
		if shown {
			break
		}
		shot(fmt.Sprintf("no-slider-%d", run))
		if !fellBack || run == 2 {
			t.Fatalf("%s: run %d of the explorer cell alone: no slider; the cell shows %.300q; the server saw the kernel %q when the cell started",
				fe.name, run, cellText(1), state)
		}
		t.Logf("%s: RUN AGAIN: the explorer fell back to the grid (%q) while the server saw the kernel %q: running the cell once more",
			fe.name, firstLine(cellText(1)), state)
		until("the explorer cell ends", time.Minute, runAllDone)
	}
	moveJS := fmt.Sprintf(`(() => { const s = %s; s.value = 1; s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change')); return true; })()`, slider)
	if !evalBool(moveJS) {
		t.Fatalf("%s: could not move the slider", fe.name)
	}
	until("the slider shows head 1", 30*time.Second, func() bool { return strings.Contains(cellText(1), "head 1") })
	shot("live")
	before := executionCount(t, ctx, fe, 2)
	// Click Done with the mouse where the button is on screen, each try bounded. The explorer's
	// own button: the classic Notebook with ipywidgets' extension installed (Debian's jupyter-notebook
	// recommends it) puts a hidden widget area with a close button (×) first in every code cell;
	// clicking "the cell's first button" waited without end for that one to show (a CI run hung
	// here 25 minutes) or clicked nothing.
	doneAt := fmt.Sprintf(`(() => { const b = %s[1].querySelector('[id^=attnbook_explorer_] button'); if (!b) return []; b.scrollIntoView({block: 'center'}); const r = b.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`, fe.cells)
	until("clicking Done", 30*time.Second, func() bool {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		var xy []float64
		if err := chromedp.Run(cctx, chromedp.Evaluate(doneAt, &xy)); err != nil || len(xy) != 2 {
			return false
		}
		return chromedp.Run(cctx, chromedp.MouseClickXY(xy[0], xy[1])) == nil
	})
	until("Done leaves the grid", 30*time.Second, func() bool {
		return evalBool(fmt.Sprintf(`(() => { const c = %s[1]; return !c.querySelector('input[type=range]') && !!c.querySelector('svg.attnbook-heads') && !c.querySelector(%q).innerText.includes('*'); })()`, fe.cells, fe.prompt))
	})
	shot("done")
	var active string
	_ = chromedp.Run(ctx, chromedp.Evaluate(`document.activeElement ? document.activeElement.tagName + '.' + document.activeElement.className : ''`, &active))
	if strings.HasPrefix(active, "BUTTON") {
		t.Errorf("%s: after Done the focus stays on the button (%s)", fe.name, active)
	}
	// Gaps: output areas of the explorer cell that show nothing but take room.
	var gap float64
	gapJS := fmt.Sprintf(`(() => { let h = 0; for (const o of %s[1].querySelectorAll(%q)) { if (o.innerText.trim() === '' && !o.querySelector('svg, img, input, button')) h += o.getBoundingClientRect().height; } return h; })()`, fe.cells, fe.outputs)
	if err := chromedp.Run(ctx, chromedp.Evaluate(gapJS, &gap)); err != nil {
		t.Fatal(err)
	}
	if gap > 2 {
		t.Errorf("%s: after Done the explorer cell keeps %.0f px of empty outputs (a blank gap)", fe.name, gap)
	}
	// Shift-Enter, with no click: the next cell (selected when the explorer cell was run) runs.
	if err := chromedp.Run(ctx, chromedp.KeyEvent("\r", chromedp.KeyModifiers(shiftKey))); err != nil {
		t.Fatal(err)
	}
	until("Shift-Enter after Done runs the next cell", 30*time.Second, func() bool {
		n := executionCount(t, ctx, fe, 2)
		return n > 0 && n != before // a fresh kernel: "[2]", not the count the page showed
	})
	shot("next-cell")
	t.Logf("%s: live explorer ok; empty outputs %.0f px; focus after Done on %q", fe.name, gap, active)

	// Issue 25: notebook 08's hints look clickable (a disclosure marker, a link colour, a hand
	// cursor) and open on a click.
	newTab()
	if err := chromedp.Run(ctx, chromedp.Navigate(base+fe.exercises+"?token="+token)); err != nil {
		t.Fatal(err)
	}
	until("notebook 08's hints are shown", 2*time.Minute, func() bool { return evalBool(`document.querySelectorAll('details > summary').length >= 10`) })
	var hint struct {
		Display, Cursor, Color, Text string
		Opened                       bool
	}
	hintJS := `(() => {
	const s = document.querySelector('details > summary'), st = getComputedStyle(s);
	const r = {Display: st.display, Cursor: st.cursor, Color: st.color, Text: s.innerText};
	s.scrollIntoView(); s.click(); r.Opened = s.parentElement.open;
	return r;
})()`
	if err := chromedp.Run(ctx, chromedp.Evaluate(hintJS, &hint)); err != nil {
		t.Fatal(err)
	}
	shot("hint")
	if hint.Display != "list-item" || hint.Cursor != "pointer" || hint.Color != "rgb(11, 92, 173)" || !hint.Opened ||
		!strings.Contains(hint.Text, "Hint 1 (click to open)") {
		t.Errorf("%s: notebook 08's first hint is %+v: want a list-item (with its ▸ marker), a pointer, the link colour rgb(11, 92, 173), the words (click to open), and open on a click", fe.name, hint)
	}
}

// CDP's modifier bits for Shift and Ctrl (input.ModifierShift, input.ModifierCtrl).
const (
	shiftKey = 8
	ctrlKey  = 2
)

// executionCount is the number in code cell i's prompt ("[3]:" → 3), 0 when it has none.
func executionCount(t *testing.T, ctx context.Context, fe explorerFrontEnd, i int) int {
	var s string
	js := fmt.Sprintf(`(() => { const p = %s[%d].querySelector(%q); return p ? p.innerText : ''; })()`, fe.cells, i, fe.prompt)
	if err := chromedp.Run(ctx, chromedp.Evaluate(js, &s)); err != nil {
		t.Fatal(err)
	}
	var n int
	if _, err := fmt.Sscanf(s[strings.Index(s, "[")+1:], "%d", &n); err != nil {
		return 0
	}
	return n
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// pythonWith returns the first Python that imports module: Debian's /usr/bin/python3 (where
// apt installs Jupyter), else python3 on PATH; "" when none does.
func pythonWith(module string) string {
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import "+module).Run() == nil {
			return py
		}
	}
	return ""
}

// privateKernelSpec registers the attnbook kernel of this checkout in a private Jupyter data
// folder under dir (`kernel setup` with $JUPYTER_DATA_DIR), leaving the user's kernels alone,
// and returns that folder.
func privateKernelSpec(t *testing.T, root, dir string) string {
	t.Helper()
	data := filepath.Join(dir, "jupyter-data")
	cmd := exec.Command("go", "run", "./kernel", "setup")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "JUPYTER_DATA_DIR="+data)
	if out, err := cmd.CombinedOutput(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
			nbrun.Missing(t, "kernel setup: "+string(out))
		}
		t.Fatalf("kernel setup: %v\n%s", err, out)
	}
	return data
}

// jupyterEnv is a Jupyter server's environment: the private data folder (the kernel spec), its
// own config and runtime folders, and no headless flag (a person is watching).
func jupyterEnv(data, dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ATTNBOOK_HEADLESS=") && !strings.HasPrefix(kv, "JUPYTER_") {
			env = append(env, kv)
		}
	}
	return append(env, "JUPYTER_DATA_DIR="+data, "JUPYTER_CONFIG_DIR="+filepath.Join(dir, "jupyter-config"),
		"JUPYTER_RUNTIME_DIR="+filepath.Join(dir, "jupyter-runtime"))
}

func writeExplorerNotebook(t *testing.T, path string) {
	t.Helper()
	var cells []any
	for i, src := range explorerCells {
		cells = append(cells, codeCell(fmt.Sprintf("explorer-%d", i), src))
	}
	nb := map[string]any{
		"cells": cells,
		"metadata": map[string]any{
			"kernelspec":    map[string]any{"name": "attnbook", "display_name": "Go (attnbook)", "language": "go"},
			"language_info": map[string]any{"name": "go"},
		},
		"nbformat": 4, "nbformat_minor": 5,
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	saveJSON(t, path, nb)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startServer starts cmd with its output in logPath, and stops it when the test ends: interrupts
// SIGINTs (the classic Notebook asks for confirmation on the first, so it takes two; `kernel up
// -lab` takes one: a second kills its docker client, leaving the container to its deferred
// `docker rm -f`), then SIGKILL after grace. The channel is closed when cmd exits.
func startServer(t *testing.T, cmd *exec.Cmd, logPath string, interrupts int, grace time.Duration) <-chan struct{} {
	t.Helper()
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", cmd.Path, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		for range interrupts {
			cmd.Process.Signal(os.Interrupt)
		}
		select {
		case <-done:
		case <-time.After(grace):
			cmd.Process.Kill()
			<-done
		}
		log.Close()
		if t.Failed() {
			out, _ := os.ReadFile(logPath)
			t.Logf("server log, its warnings and errors:\n%s", tail(logProblems(string(out)), 4000))
			t.Logf("server log:\n%s", tail(string(out), 4000))
		}
	})
	return done
}

// logProblems returns the lines of a server log that say why a kernel did not start or a widget
// did not work: the Jupyter server's warnings and errors ("[W 22:25:04.250 NotebookApp] …", less
// its "Got events for closed stream" noise), GoNB's klog errors and warnings ("E1126 22:25:46…")
// and its info lines that report a failure (a widget channel that did not open is one).
func logProblems(log string) string {
	var b strings.Builder
	for line := range strings.Lines(log) {
		jupyter := strings.HasPrefix(line, "[W ") || strings.HasPrefix(line, "[E ")
		klog := len(line) > 5 && strings.ContainsRune("EWI", rune(line[0])) && strings.Trim(line[1:5], "0123456789") == ""
		switch {
		case jupyter && !strings.Contains(line, "Got events for closed stream"),
			klog && (line[0] != 'I' || strings.Contains(line, "ailed")):
			b.WriteString(line)
		}
	}
	return b.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// waitServer waits until the Jupyter server answers its status API.
func waitServer(t *testing.T, base, token string) {
	t.Helper()
	for start := time.Now(); time.Since(start) < 2*time.Minute; time.Sleep(300 * time.Millisecond) {
		resp, err := http.Get(base + "/api/status?token=" + token)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatalf("the Jupyter server at %s did not answer in 2 minutes", base)
}

// apiClient talks to the Jupyter server's REST API; a server that does not answer fails the call.
var apiClient = &http.Client{Timeout: 10 * time.Second}

// apiGet decodes a Jupyter REST API answer into v.
func apiGet(base, token, path string, v any) error {
	resp, err := apiClient.Get(base + path + "?token=" + token)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

// deleteAll deletes every item of the server's collection at base ("sessions": each session's
// kernel stops with it; "kernels": DELETE /api/kernels/ID waits for the kernel to stop, or kills it).
func deleteAll(base, token, collection string) error {
	var items []struct {
		ID string `json:"id"`
	}
	if err := apiGet(base, token, "/api/"+collection, &items); err != nil {
		return err
	}
	for _, it := range items {
		req, _ := http.NewRequest(http.MethodDelete, base+"/api/"+collection+"/"+it.ID+"?token="+token, nil)
		if resp, err := apiClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	return nil
}

// runWithin runs actions in the tab ctx, failing after limit (chromedp waits for a missing
// element forever).
func runWithin(ctx context.Context, limit time.Duration, actions ...chromedp.Action) error {
	tctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	return chromedp.Run(tctx, actions...)
}

// idleFor returns a condition that holds once idle has held for d.
func idleFor(idle func() bool, d time.Duration) func() bool {
	var since time.Time
	return func() bool {
		if !idle() {
			since = time.Time{}
			return false
		}
		if since.IsZero() {
			since = time.Now()
		}
		return time.Since(since) >= d
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// kernelIdle reports whether the one running kernel is idle (started and not busy).
func kernelIdle(base, token string) bool {
	return kernelState(base, token) == "idle"
}

// kernelState is the Jupyter server's execution_state of its only kernel ("starting", "idle",
// "busy"), or a short note when it has none or several.
func kernelState(base, token string) string {
	var kernels []struct {
		State string `json:"execution_state"`
	}
	if err := apiGet(base, token, "/api/kernels", &kernels); err != nil {
		return "(" + err.Error() + ")"
	}
	if len(kernels) != 1 {
		return fmt.Sprintf("(%d kernels)", len(kernels))
	}
	return kernels[0].State
}

// newExplorerBrowser starts headless Chromium (1400×1000, scale 1) for the test's lifetime.
func newExplorerBrowser(t *testing.T, chromium string) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("force-device-scale-factor", "1"),
		chromedp.WindowSize(1400, 1000),
	)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Run(bctx); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	return bctx
}

// screenshotDir is the repository's git-ignored out/display folder.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(nbrun.Root(t), "out", "display")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
