package display

import (
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/comms"
	"github.com/janpfeifer/gonb/gonbui/dom"
	"github.com/janpfeifer/gonb/gonbui/widgets"
)

// HeadlessEnv is the environment variable that tells ExploreHeads there is no browser on the
// other side of the kernel (`go run ./kernel run`, the notebook tests): set to a non-empty
// value, ExploreHeads draws the static grid at once instead of waiting for the widgets to answer.
const HeadlessEnv = "ATTNBOOK_HEADLESS"

// FrontEndWait is how long ExploreHeads waits for the notebook's front end to answer before it
// concludes that nobody is watching (a closed browser tab, a front end without GoNB's widget
// channel) and draws the static grid with a line saying so. The wait starts once the kernel has
// taken the question, so a kernel busy setting up its channel to the browser (GoNB gives that 3 s)
// does not eat into it.
var FrontEndWait = 5 * time.Second

// Lines ExploreHeads writes above the grid when it does not show the slider.
const (
	// queuedNote: other cells wait behind this one (Run All), and nobody must wait on a person.
	queuedNote = "Run All draws every head at once: run this cell on its own (Shift-Enter) for a slider that shows one head at a time."
	// noAnswerNote: the front end did not answer.
	noAnswerNote = "no interactive front end answered within %g s: showing all heads"
)

// ExploreHeads shows one head at a time with a GoNB slider to pick the head, for
// `[h, T_q, T_k]` or `[b, h, T_q, T_k]` weights on one shared colour scale, then leaves the
// static grid of all heads (ShowHeads) in the cell, so a saved or exported notebook keeps a
// complete picture and no dead widget.
//
// While the slider is live the cell is busy (a GoNB cell is a running program) and no other
// cell runs. The cell is left by any of:
//
//   - the Done button next to the slider (the keyboard then goes back to the notebook);
//   - idle without slider moves (0 means 2 minutes);
//   - interrupting the kernel (■): the grid is drawn, then the cell stops as interrupted.
//
// Run All never waits on a person: when other cells are queued behind this one, it draws the
// grid under a one-line hint to run the cell on its own for the slider. When the front end does
// not answer within FrontEndWait it draws the grid under a line saying so. Outside a notebook
// (go run, go test) and when HeadlessEnv is set (a notebook executed headless, e.g. by
// nbclient) it only draws the grid. Bad input panics, as in ShowFigure.
func ExploreHeads(weights *tensors.Tensor, idle time.Duration, tokens ...string) {
	if err := exploreHeads(weights, idle, tokensOrNil(tokens)); err != nil {
		fail(err)
	}
}

// frontEnd is what the notebook's front end answers ExploreHeads.
type frontEnd int

const (
	noAnswer frontEnd = iota // nothing within FrontEndWait
	alone                    // this cell runs on its own: a person may move the slider
	queued                   // other cells wait behind this one (Run All, Shift-Enter pressed ahead)
)

// explorerUI is the live side of ExploreHeads: GoNB's widgets in a notebook, fakes in tests.
type explorerUI struct {
	// isLive reports whether a front end may be watching (before any widget is made).
	isLive func() bool
	// probe asks the front end whether other cells are queued behind this one, and waits for the
	// answer at most wait after the kernel has taken the question.
	probe func(wait time.Duration) frontEnd
	// update replaces the content of a display (gonbui.UpdateHTML).
	update func(displayID, html string)
	// setText sets an element's text (dom.SetInnerText).
	setText func(elementID, text string)
	// controls creates the slider (0..heads-1) and the Done button in element parentID and
	// returns once the front end has answered (GoNB's widgets block until then; they never
	// return when nobody is watching). Done hands the keyboard back to the notebook.
	controls func(parentID, labelID, firstTitle string, heads int) *explorerControls
	// interrupts delivers the kernel's interrupt (GoNB sends the cell program SIGINT); stop
	// ends the delivery.
	interrupts func() (c <-chan os.Signal, stop func())
	// reraise ends the program as interrupted, after the grid is drawn.
	reraise func()
}

// explorerControls are the live widgets: slider moves (the head index) and Done clicks.
type explorerControls struct {
	moves  <-chan int
	clicks <-chan int
	close  func()
}

// probeJS answers ExploreHeads's probe at address %[1]q: "queued" when more than one cell of the
// notebook shows the busy prompt [*] (Run All marks every cell it queued), else "alone". The
// classic Notebook prompts are .input_prompt ("In [*]:"), JupyterLab's .jp-InputPrompt ("[*]:").
const probeJS = `(() => {
	const me = document.currentScript;
	const book = (me && me.closest('.jp-Notebook, #notebook')) || document;
	const busy = Array.from(book.querySelectorAll('.jp-InputPrompt, .input_prompt')).filter(e => e.textContent.includes('[*]')).length;
	const comm = globalThis.gonb_comm;
	if (comm) comm.send(%[1]q, busy > 1 ? 'queued' : 'alone');
})();`

// doneJS makes the Done button (id %[1]q) hand the keyboard back to the notebook when clicked,
// so that Shift-Enter runs the next cell without a click: the classic Notebook goes back to
// command mode, JupyterLab's notebook takes the focus.
const doneJS = `(() => {
	const b = document.getElementById(%[1]q);
	if (!b) return;
	b.addEventListener('click', () => {
		b.blur();
		const nb = globalThis.Jupyter && globalThis.Jupyter.notebook;
		if (nb && nb.keyboard_manager) {
			nb.keyboard_manager.enable();
			nb.command_mode();
			const cell = nb.get_selected_cell();
			if (cell) cell.element.focus();
			return;
		}
		const lab = b.closest('.jp-Notebook');
		if (lab) lab.focus();
	});
})();`

var explorer = explorerUI{
	isLive: func() bool { return gonbui.IsNotebook && os.Getenv(HeadlessEnv) == "" },
	probe: func(wait time.Duration) frontEnd {
		address := "/attnbook/explorer/" + gonbui.UniqueId()
		answers := comms.Listen[string](address) // GoNB sets up its channel to the browser first.
		defer answers.Close()
		dom.TransientJavascript(fmt.Sprintf(probeJS, address)) // Returns once GoNB has taken it.
		select {
		case a := <-answers.C:
			if a == "queued" {
				return queued
			}
			return alone
		case <-time.After(wait):
			return noAnswer
		}
	},
	update: gonbui.UpdateHTML,
	setText: func(id, text string) {
		dom.SetInnerText(id, text)
	},
	controls: func(parentID, labelID, firstTitle string, heads int) *explorerControls {
		slider := widgets.Slider(0, heads-1, 0).AppendTo(parentID).Done()
		dom.Append(parentID, fmt.Sprintf(`&nbsp;<span id="%s" style="font-family:monospace">%s</span>&nbsp;`,
			labelID, esc(firstTitle)))
		button := widgets.Button("Done").AppendTo(parentID).Done()
		dom.TransientJavascript(fmt.Sprintf(doneJS, button.HtmlId()))
		moves, clicks := slider.Listen().LatestOnly(), button.Listen()
		return &explorerControls{moves: moves.C, clicks: clicks.C, close: func() { moves.Close(); clicks.Close() }}
	},
	interrupts: func() (<-chan os.Signal, func()) {
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt)
		return c, func() { signal.Stop(c) }
	},
	reraise: func() {
		if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(os.Interrupt) == nil {
			time.Sleep(time.Second) // The default action ends the program.
		}
		os.Exit(130)
	},
}

func exploreHeads(weights *tensors.Tensor, idle time.Duration, tokens []string) error {
	const fn = "display.ExploreHeads"
	hb := Heads(weights).Tokens(tokens...)
	hb.o.name = fn
	grid, err := safeDone(hb)
	if err != nil {
		return err
	}
	pictures, titles, err := headPictures(weights, tokens)
	if err != nil {
		return err
	}
	ui := explorer
	if len(pictures) < 2 || !ui.isLive() {
		displayHTML(grid)
		return nil
	}
	withNote := func(note string) string {
		return `<div><div style="font-family:sans-serif;font-size:13px;color:#555555;margin:2px 0 6px">` + esc(note) + `</div>` + grid + `</div>`
	}
	switch ui.probe(FrontEndWait) {
	case queued:
		displayHTML(withNote(queuedNote))
		return nil
	case noAnswer:
		displayHTML(withNote(fmt.Sprintf(noAnswerNote, FrontEndWait.Seconds())))
		return nil
	}
	if idle <= 0 {
		idle = 2 * time.Minute
	}
	uid := gonbui.UniqueId()
	controlsDisplay, controlsID := "attnbook_controls_"+uid, "attnbook_controls_div_"+uid
	pictureDisplay, labelID := "attnbook_picture_"+uid, "attnbook_label_"+uid
	finish := func(note string) {
		ui.update(pictureDisplay, "")
		ui.update(controlsDisplay, "")
		if note != "" {
			displayHTML(withNote(note))
			return
		}
		displayHTML("<div>" + grid + "</div>")
	}
	ui.update(controlsDisplay, fmt.Sprintf(`<div id="%s" style="font-family:sans-serif"></div>`, controlsID))
	ui.update(pictureDisplay, "<div>"+pictures[0]+"</div>")

	// The widgets answer only when a front end is watching: wait for them at most FrontEndWait.
	ready := make(chan *explorerControls, 1)
	go func() { ready <- ui.controls(controlsID, labelID, titles[0], len(pictures)) }()
	var c *explorerControls
	select {
	case c = <-ready:
	case <-time.After(FrontEndWait):
		finish(fmt.Sprintf(noAnswerNote, FrontEndWait.Seconds())) // The static grid, and on with the cell.
		return nil
	}
	defer c.close()
	sigs, stop := ui.interrupts()
	defer stop()
	timer := time.NewTimer(idle)
	defer timer.Stop()
	for {
		select {
		case <-c.clicks:
			finish("")
			return nil
		case <-timer.C:
			finish("")
			return nil
		case <-sigs:
			finish("")
			stop()
			ui.reraise()
			return nil
		case v := <-c.moves:
			v = max(0, min(v, len(pictures)-1))
			ui.setText(labelID, titles[v])
			ui.update(pictureDisplay, "<div>"+pictures[v]+"</div>")
			timer.Reset(idle)
		}
	}
}
