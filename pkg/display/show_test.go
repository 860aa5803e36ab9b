package display

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gomlx/gomlx/core/tensors"
)

// capture replaces the helpers' outputs for one test.
func capture(t *testing.T) (out *bytes.Buffer, html *[]string) {
	t.Helper()
	out, html = &bytes.Buffer{}, &[]string{}
	oldOut, oldDisplay := textOut, displayHTML
	textOut = out
	displayHTML = func(s string) { *html = append(*html, s) }
	t.Cleanup(func() { textOut, displayHTML = oldOut, oldDisplay })
	return out, html
}

// panicText runs fn and returns the message it panicked with ("" if it returned).
func panicText(fn func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			if err, ok := r.(error); ok {
				msg = err.Error()
			} else {
				msg = fmt.Sprintf("non-error panic %T: %v", r, r)
			}
		}
	}()
	fn()
	return ""
}

func ones(dims ...int) *tensors.Tensor { return tensors.FromScalarAndDimensions(float32(1), dims...) }

func TestShowHelpers(t *testing.T) {
	w := seedCausalWeights()
	for _, tc := range []struct {
		name   string
		call   func()
		stdout string
		panics string // the panic message must start with this
		html   []string
	}{
		{name: "Show", call: func() { Show(tensors.FromValue([]int64{4, 10, 21})) }, stdout: "tensor([ 4, 10, 21])\n"},
		{name: "Println", call: func() { Println("x_0 :", tensors.FromValue([]float32{0.43, 0.15}), "dot:", float32(0.95440006), true) },
			stdout: "x_0 : tensor([0.4300, 0.1500]) dot: 0.9544000625610352 True\n"},
		{name: "ShowHeatmap", call: func() { ShowHeatmap(w, seedTokens...) }, html: []string{`<div><svg xmlns="http://www.w3.org/2000/svg" class="attnbook-heatmap"`}},
		{name: "ShowHeatmap no tokens", call: func() { ShowHeatmap(w) }, html: []string{`<div><svg`}},
		{name: "ShowHeads", call: func() { ShowHeads(seed002Scores(), "a", "b", "c") }, html: []string{`<div><svg xmlns="http://www.w3.org/2000/svg" class="attnbook-heads"`}},
		{name: "ShowMask", call: func() { ShowMask(causalBool(3)) }, html: []string{`<div><svg xmlns="http://www.w3.org/2000/svg" class="attnbook-mask"`}},
		{name: "ShowMask 0/1 floats", call: func() { ShowMask(trilOnes(3)) }, html: []string{`<div><svg xmlns="http://www.w3.org/2000/svg" class="attnbook-mask"`}},
		{name: "ShowTable", call: func() { ShowTable(w) }, html: []string{`<div class="attnbook-table"`}},
		{name: "ShowFigure compare", call: func() {
			ShowFigure(Compare().Add("a", Heatmap(w)).Add("b", Heatmap(w)))
		}, html: []string{`<div class="attnbook-compare"`}},
		{name: "ShowSVG", call: func() { ShowSVG(HeadSplit(2, 2, 2).Done()) }, html: []string{`<div><svg`}},
		{name: "ShowHTML", call: func() { ShowHTML(Table(w).Done()) }, html: []string{`<div class="attnbook-table"`}},

		// Issue 14 (4): every display error fails the cell, naming what was expected and given.
		{name: "label count", call: func() { ShowHeatmap(ones(3, 3), "a", "b") },
			panics: `display.ShowHeatmap: 2 query labels ["a" "b"] for 3 rows (queries) of shape [3 3]: want 3 labels, one per row`},
		{name: "key label count", call: func() { ShowFigure(Heatmap(ones(2, 3)).Keys("k0", "k1")) },
			panics: `display.Heatmap: 2 key labels ["k0" "k1"] for 3 columns (keys) of shape [2 3]: want 3 labels, one per column`},
		{name: "hostile labels are quoted", call: func() { ShowHeatmap(ones(2, 2), "<b>\n", "x", "y") },
			panics: `display.ShowHeatmap: 3 query labels ["<b> " "x" "y"] for 2 rows (queries)`},
		{name: "bad rank", call: func() { ShowHeatmap(seed002Scores()) },
			panics: "display.ShowHeatmap: weights must be [T_q, T_k] (rank 2), got shape [1 2 3 3] (use display.Heads"},
		{name: "heads labels", call: func() { ShowHeads(seed002Scores(), "a") }, panics: `display.ShowHeads: 1 query labels ["a"] for 3 rows (queries) of shape [1 2 3 3]`},
		{name: "nil tensor", call: func() { ShowMask(nil) }, panics: "display.ShowMask: mask: tensor is nil"},
		{name: "Show nil", call: func() { Show(nil) }, panics: "display.Show: t: tensor is nil"},
		{name: "ShowTable nil", call: func() { ShowTable(nil) }, panics: "display.ShowTable: tensor is nil"},
		{name: "ShowHTML error", call: func() { ShowHTML(Table(nil).Done()) }, panics: "display.Table: tensor is nil"},
		{name: "nil renderer", call: func() { ShowFigure(nil) }, panics: "display.ShowFigure: r is a nil Renderer"},
		{name: "panicking renderer", call: func() { ShowFigure(panicky{}) }, panics: "display: display.panicky.Done panicked: boom"},
		{name: "mask value 0.3", call: func() { ShowMask(tensors.FromValue([][]float32{{1, 0.3}, {0, 1}})) },
			panics: "display.ShowMask: mask (shape [2 2]) holds 0.30000001192092896 at [0 1]: a mask holds only 0/1 or true/false"},
		{name: "mask value 2", call: func() { ShowMask(tensors.FromValue([][]int64{{1, 0}, {2, 1}})) },
			panics: "display.ShowMask: mask (shape [2 2]) holds 2.0 at [1 0]"},
		{name: "mask value NaN", call: func() { ShowMask(tensors.FromValue([][]float32{{1, 0}, {0, float32(math.NaN())}})) },
			panics: "display.ShowMask: mask (shape [2 2]) holds nan at [1 1]"},
		{name: "mask value -inf", call: func() { ShowMask(tensors.FromValue([][]float32{{0, float32(math.Inf(-1))}, {0, 0}})) },
			panics: "display.ShowMask: mask (shape [2 2]) holds -inf at [0 1]"},
		{name: "heatmap Masked value 0.5", call: func() { ShowFigure(Heatmap(ones(2, 2)).Masked(tensors.FromValue([][]float32{{0, 0.5}, {0, 0}}))) },
			panics: "display.Heatmap: mask (shape [2 2]) holds 0.5 at [0 1]"},
		{name: "ExploreHeads bad input", call: func() { ExploreHeads(w, time.Second) },
			panics: "display.ExploreHeads: weights must be [h, T_q, T_k] or [b, h, T_q, T_k], got shape [6 6]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, html := capture(t)
			msg := panicText(tc.call)
			if out.String() != tc.stdout {
				t.Errorf("stdout %q, want %q", out.String(), tc.stdout)
			}
			switch {
			case tc.panics == "" && msg != "":
				t.Errorf("unexpected panic %q", msg)
			case tc.panics != "" && !strings.HasPrefix(msg, tc.panics):
				t.Errorf("panic %q, want it to start with %q", msg, tc.panics)
			case tc.panics != "" && strings.Contains(msg, "\n"):
				t.Errorf("panic message %q spans several lines", msg)
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

// TestTryShow: the error-returning variant for Go code displays nothing and returns the error.
func TestTryShow(t *testing.T) {
	_, html := capture(t)
	err := TryShow(Heatmap(ones(3, 3)).Tokens("a", "b"))
	if err == nil || !strings.HasPrefix(err.Error(), `display.Heatmap: 2 query labels ["a" "b"] for 3 rows`) {
		t.Errorf("TryShow error %v", err)
	}
	if len(*html) != 0 {
		t.Errorf("TryShow displayed %d outputs despite the error", len(*html))
	}
	if err := TryShow(Heatmap(ones(2, 2))); err != nil || len(*html) != 1 {
		t.Errorf("TryShow of a good heatmap: err %v, %d outputs", err, len(*html))
	}
}

type panicky struct{}

func (panicky) Done() (string, error) { panic("boom") }

// TestShowFailsTheProgram runs a display error the way a GoNB cell does, as a program of its
// own: it must exit non-zero with the message as the first line of stderr (the cell's error
// output), and with GOTRACEBACK=none (no stack trace) as its only line.
func TestShowFailsTheProgram(t *testing.T) {
	if os.Getenv("ATTNBOOK_DISPLAY_CHILD") == "1" {
		displayHTML = func(string) {}
		// On a goroutine of its own, so that testing's recover stays out of it, as in a cell.
		go ShowHeatmap(ones(3, 3), "a", "b")
		select {}
	}
	want := `panic: display.ShowHeatmap: 2 query labels ["a" "b"] for 3 rows (queries) of shape [3 3]: want 3 labels, one per row`
	for _, traceback := range []string{"single", "none"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestShowFailsTheProgram$")
		cmd.Env = append(os.Environ(), "ATTNBOOK_DISPLAY_CHILD=1", "GOTRACEBACK="+traceback)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if err == nil {
			t.Fatalf("GOTRACEBACK=%s: the program exited 0 after a display error", traceback)
		}
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if lines[0] != want {
			t.Errorf("GOTRACEBACK=%s: first stderr line %q, want %q", traceback, lines[0], want)
		}
		if traceback == "none" && len(lines) != 1 {
			t.Errorf("GOTRACEBACK=none: %d stderr lines, want 1:\n%s", len(lines), stderr.String())
		}
	}
}

// fakeExplorer replaces the GoNB side of ExploreHeads for one test.
type fakeExplorer struct {
	live       bool
	answer     frontEnd          // what the probe answers (noAnswer: after FrontEndWait)
	controls   *explorerControls // nil: the controls never answer
	updates    []string          // the explorer display's contents, in order (first 12 bytes)
	shown      []string          // titles shown by slider moves
	sigs       chan os.Signal
	reraised   bool
	controlsAt chan struct{}
}

func (f *fakeExplorer) install(t *testing.T) {
	saved, savedWait := explorer, FrontEndWait
	t.Cleanup(func() { explorer, FrontEndWait = saved, savedWait })
	FrontEndWait = 200 * time.Millisecond
	f.sigs = make(chan os.Signal, 1)
	f.controlsAt = make(chan struct{}, 1)
	explorer = explorerUI{
		isLive: func() bool { return f.live },
		update: func(id, html string) { f.updates = append(f.updates, html) },
		probe: func(_ string, wait time.Duration) frontEnd {
			if f.answer == noAnswer {
				time.Sleep(wait)
			}
			return f.answer
		},
		controls: func(_ string, heads int, _, _ string) *explorerControls {
			f.updates = append(f.updates, "controls")
			f.controlsAt <- struct{}{}
			if f.controls == nil {
				select {} // nobody wires the controls when no front end answers.
			}
			f.controls.show = func(title, _ string) { f.shown = append(f.shown, title) }
			return f.controls
		},
		interrupts: func() (<-chan os.Signal, func()) { return f.sigs, func() {} },
		reraise:    func() { f.reraised = true },
	}
}

// TestExploreHeads: issue 14 (2), ExploreHeads(eager.Full(0.25, 2, 4, 4), 3*time.Second) hung
// under a headless kernel run; now it draws the grid and returns, and a live explorer is left by
// the Done button, by idling, or by an interrupt, each leaving the grid.
func TestExploreHeads(t *testing.T) {
	weights := tensors.FromScalarAndDimensions(float32(0.25), 2, 4, 4)
	gridPrefix := `<div><svg xmlns="http://www.w3.org/2000/svg" class="attnbook-heads"`
	run := func(t *testing.T, f *fakeExplorer, idle time.Duration, act func()) (html []string, took time.Duration) {
		t.Helper()
		f.install(t)
		_, out := capture(t)
		done := make(chan struct{})
		start := time.Now()
		go func() {
			defer close(done)
			ExploreHeads(weights, idle)
		}()
		if act != nil {
			<-f.controlsAt
			act()
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("ExploreHeads did not return")
		}
		return *out, time.Since(start)
	}
	// checkGrid: the one explorer display ends with the static grid (under note), and nothing
	// else was displayed.
	checkGrid := func(t *testing.T, f *fakeExplorer, html []string, note string) {
		t.Helper()
		want := "<div>" + gridPrefix[len("<div>"):]
		if note != "" {
			want = `<div><div style="font-family:sans-serif;font-size:13px;color:#555555;margin:2px 0 6px">` + note + `</div>` + gridPrefix[len("<div>"):]
		}
		n := len(f.updates)
		if len(html) != 0 || n == 0 || !strings.HasPrefix(f.updates[n-1], want) {
			last := ""
			if n > 0 {
				last = f.updates[n-1]
			}
			t.Errorf("displayed %d outputs, explorer display ends with %.300q: want only the display, ending with the grid under %q", len(html), last, note)
		}
	}

	t.Run("not live: grid at once", func(t *testing.T) {
		f := &fakeExplorer{live: false}
		html, _ := run(t, f, 3*time.Second, nil)
		if len(html) != 1 || !strings.HasPrefix(html[0], `<svg xmlns="http://www.w3.org/2000/svg" class="attnbook-heads"`) {
			t.Errorf("displayed %.60q, want the grid", html)
		}
		if len(f.updates) != 0 {
			t.Errorf("made widgets outside a live notebook: %q", f.updates)
		}
	})
	t.Run("front end never answers: grid, saying why", func(t *testing.T) {
		f := &fakeExplorer{live: true, answer: noAnswer}
		html, took := run(t, f, 3*time.Second, nil)
		checkGrid(t, f, html, "no interactive front end answered within 0.2 s: showing all heads")
		if took >= 3*time.Second || len(f.updates) != 1 {
			t.Errorf("took %v and showed %d contents: want the grid after FrontEndWait, no controls", took, len(f.updates))
		}
	})
	t.Run("Run All: grid with a hint, no wait", func(t *testing.T) {
		f := &fakeExplorer{live: true, answer: queued}
		html, took := run(t, f, time.Hour, nil)
		checkGrid(t, f, html, queuedNote)
		if took >= time.Second || len(f.updates) != 1 {
			t.Errorf("took %v and showed %d contents: want the grid at once, no controls", took, len(f.updates))
		}
	})
	t.Run("alone, but the widgets never answer", func(t *testing.T) {
		f := &fakeExplorer{live: true, answer: alone}
		html, took := run(t, f, time.Hour, nil)
		checkGrid(t, f, html, "no interactive front end answered within 0.2 s: showing all heads")
		if took >= time.Second {
			t.Errorf("took %v: it waited for the idle timeout instead of FrontEndWait", took)
		}
	})
	t.Run("live: Done button", func(t *testing.T) {
		moves, clicks := make(chan int, 1), make(chan int, 1)
		f := &fakeExplorer{live: true, answer: alone, controls: &explorerControls{moves: moves, clicks: clicks, close: func() {}}}
		html, _ := run(t, f, time.Hour, func() {
			moves <- 1
			time.Sleep(50 * time.Millisecond)
			clicks <- 1
		})
		checkGrid(t, f, html, "")
		if len(f.shown) != 1 || f.shown[0] != "head 1" {
			t.Errorf("slider move showed %q, want [head 1]", f.shown)
		}
	})
	t.Run("live: idle", func(t *testing.T) {
		f := &fakeExplorer{live: true, answer: alone, controls: &explorerControls{moves: make(chan int), clicks: make(chan int), close: func() {}}}
		html, _ := run(t, f, 100*time.Millisecond, func() {})
		checkGrid(t, f, html, "")
	})
	t.Run("live: interrupt", func(t *testing.T) {
		f := &fakeExplorer{live: true, answer: alone, controls: &explorerControls{moves: make(chan int), clicks: make(chan int), close: func() {}}}
		html, _ := run(t, f, time.Hour, func() { f.sigs <- os.Interrupt })
		checkGrid(t, f, html, "")
		if !f.reraised {
			t.Error("the interrupt was swallowed: the cell must still stop as interrupted")
		}
	})
}
