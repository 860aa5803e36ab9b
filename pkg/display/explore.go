package display

import (
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/dom"
	"github.com/janpfeifer/gonb/gonbui/widgets"
)

// HeadlessEnv is the environment variable that tells ExploreHeads there is no browser on the
// other side of the kernel (`go run ./kernel run`, the notebook tests): set to a non-empty
// value, ExploreHeads draws the static grid at once instead of waiting for the widgets to answer.
const HeadlessEnv = "ATTNBOOK_HEADLESS"

// FrontEndWait is how long ExploreHeads waits for the notebook's front end to bring its slider
// and button to life before it concludes that nobody is watching (a headless run through
// nbclient, a closed browser tab) and draws the static grid instead. GoNB itself gives the
// front end 3 s to connect its widget channel.
var FrontEndWait = 5 * time.Second

// ExploreHeads shows one head at a time with a GoNB slider to pick the head, for
// `[h, T_q, T_k]` or `[b, h, T_q, T_k]` weights on one shared colour scale, then leaves the
// static grid of all heads (ShowHeads) in the cell, so a saved or exported notebook keeps a
// complete picture and no dead widget.
//
// While the slider is live the cell is busy (a GoNB cell is a running program) and no other
// cell runs. The cell is left by any of:
//
//   - the Done button next to the slider;
//   - idle without slider moves (0 means 2 minutes);
//   - interrupting the kernel (■): the grid is drawn, then the cell stops as interrupted.
//
// Where nobody can move the slider it only draws the grid and returns: outside a notebook
// (go run, go test), when HeadlessEnv is set, and when the front end does not answer within
// FrontEndWait (a notebook executed headless, e.g. by nbclient). Bad input panics, as in
// ShowFigure.
func ExploreHeads(weights *tensors.Tensor, idle time.Duration, tokens ...string) {
	if err := exploreHeads(weights, idle, tokensOrNil(tokens)); err != nil {
		fail(err)
	}
}

// explorerUI is the live side of ExploreHeads: GoNB's widgets in a notebook, fakes in tests.
type explorerUI struct {
	// isLive reports whether a front end may be watching (before any widget is made).
	isLive func() bool
	// update replaces the content of a display (gonbui.UpdateHTML).
	update func(displayID, html string)
	// setText sets an element's text (dom.SetInnerText).
	setText func(elementID, text string)
	// controls creates the slider (0..heads-1) and the Done button in element parentID and
	// returns once the front end has answered (GoNB's widgets block until then; they never
	// return when nobody is watching).
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

var explorer = explorerUI{
	isLive: func() bool { return gonbui.IsNotebook && os.Getenv(HeadlessEnv) == "" },
	update: gonbui.UpdateHTML,
	setText: func(id, text string) {
		dom.SetInnerText(id, text)
	},
	controls: func(parentID, labelID, firstTitle string, heads int) *explorerControls {
		slider := widgets.Slider(0, heads-1, 0).AppendTo(parentID).Done()
		dom.Append(parentID, fmt.Sprintf(`&nbsp;<span id="%s" style="font-family:monospace">%s</span>&nbsp;`,
			labelID, esc(firstTitle)))
		button := widgets.Button("Done").AppendTo(parentID).Done()
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
	if idle <= 0 {
		idle = 2 * time.Minute
	}
	uid := gonbui.UniqueId()
	controlsDisplay, controlsID := "attnbook_controls_"+uid, "attnbook_controls_div_"+uid
	pictureDisplay, labelID := "attnbook_picture_"+uid, "attnbook_label_"+uid
	finish := func() {
		ui.update(pictureDisplay, "")
		ui.update(controlsDisplay, "")
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
		finish() // Nobody is watching: the static grid, and on with the cell.
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
			finish()
			return nil
		case <-timer.C:
			finish()
			return nil
		case <-sigs:
			finish()
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
