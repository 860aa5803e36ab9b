package display

import (
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/comms"
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
//   - the Done button next to the slider (the next cell is then selected, with the keyboard
//     back on the notebook: Shift-Enter runs it);
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

// explorerUI is the live side of ExploreHeads: GoNB's display and comm channel in a notebook,
// fakes in tests.
type explorerUI struct {
	// isLive reports whether a front end may be watching.
	isLive func() bool
	// update replaces the content of a display (gonbui.UpdateHTML).
	update func(displayID, html string)
	// probe asks the front end, through a script in display displayID, whether other cells are
	// queued behind this one; it waits for the answer at most wait, counted from when the kernel
	// has taken the question.
	probe func(displayID string, wait time.Duration) frontEnd
	// controls shows the slider (heads positions), the Done button and the first head in display
	// displayID, and returns once the front end has wired them (never, when nobody is watching).
	controls func(displayID string, heads int, title, picture string) *explorerControls
	// interrupts delivers the kernel's interrupt (GoNB sends the cell program SIGINT); stop
	// ends the delivery.
	interrupts func() (c <-chan os.Signal, stop func())
	// reraise ends the program as interrupted, after the grid is drawn.
	reraise func()
}

// explorerControls are the live controls: slider moves (the head index), Done clicks, and show,
// which puts a head's title and picture under the slider.
type explorerControls struct {
	moves  <-chan int
	clicks <-chan int
	show   func(title, picture string)
	close  func()
}

// probeJS answers ExploreHeads's probe at address %[1]q: "queued" when more than one cell of the
// notebook shows the busy prompt [*] (Run All marks every cell it queued), else "alone". The
// classic Notebook's prompts are .input_prompt ("In [*]:"), JupyterLab's .jp-InputPrompt ("[*]:").
// (JupyterLab 4 may leave cells far off screen out of the page; their prompts are not counted.)
const probeJS = `<script>(() => {
	const me = document.currentScript;
	const book = (me && me.closest('.jp-Notebook, #notebook')) || document;
	const busy = Array.from(book.querySelectorAll('.jp-InputPrompt, .input_prompt')).filter(e => e.textContent.includes('[*]')).length;
	const comm = globalThis.gonb_comm;
	if (comm) comm.send(%[1]q, busy > 1 ? 'queued' : 'alone');
})(); /* %[2]d */</script>`

// controlsHTML is the live explorer: a slider, the head's title, a Done button and the head's
// picture, wired to the program through GoNB's comm channel (gonb_comm): slider positions go to
// address move, Done clicks to done; the program sends the title and picture (SVG) to head, as
// "title\n<svg…>". A click on Done also hides the cell's emptied outputs (GoNB's channel set-up),
// so no blank gap is left, and gives the keyboard back to the notebook with the next cell
// selected, as Shift-Enter left it (command mode in the classic Notebook; in JupyterLab the next
// cell is picked as a click on its prompt would): Shift-Enter then runs it without a click.
// ready is told once the controls are wired.
const controlsHTML = `<div id="%[1]s" style="font-family:sans-serif">
<div style="display:flex;align-items:center;gap:10px;margin:2px 0 6px"><input type="range" min="0" max="%[2]d" value="0" step="1" style="width:%[3]dpx">
<span class="attnbook-label" style="font-family:monospace">%[4]s</span><button type="button">Done</button></div>
<div class="attnbook-picture">%[5]s</div>
<script>(() => {
	const comm = globalThis.gonb_comm, root = document.getElementById(%[1]q);
	if (!comm || !root) return;
	const slider = root.querySelector('input'), label = root.querySelector('.attnbook-label');
	const done = root.querySelector('button'), picture = root.querySelector('.attnbook-picture');
	comm.subscribe(%[6]q, (address, value) => {
		const i = value.indexOf('\n');
		label.textContent = value.slice(0, i);
		picture.innerHTML = value.slice(i + 1);
	});
	slider.addEventListener('input', () => comm.send(%[7]q, parseInt(slider.value)));
	done.addEventListener('click', () => {
		done.disabled = true;
		comm.send(%[8]q, 1);
		done.blur();
		const cell = root.closest('.cell, .jp-Cell');
		if (cell) {
			for (const o of cell.querySelectorAll('.output_area, .jp-OutputArea-child')) {
				if (!o.contains(root) && o.innerText.trim() === '' && !o.querySelector('svg, img, canvas, input')) o.style.display = 'none';
			}
		}
		// After the click has reached the cell (which selects it): select the next cell, as
		// Shift-Enter left it, and give the keyboard back to the notebook.
		setTimeout(() => {
			const nb = globalThis.Jupyter && globalThis.Jupyter.notebook;
			if (nb && nb.keyboard_manager) {
				const cells = nb.get_cells(), at = cells.findIndex(c => c.element[0] === cell);
				if (at >= 0 && at + 1 < cells.length) nb.select(at + 1);
				nb.keyboard_manager.enable();
				nb.command_mode();
				nb.get_selected_cell().element.focus();
				return;
			}
			const next = cell && cell.nextElementSibling;
			const target = next && next.classList.contains('jp-Cell') ? next.querySelector('.jp-InputPrompt') || next : null;
			if (target) {
				for (const type of ['mousedown', 'mouseup']) target.dispatchEvent(new MouseEvent(type, {bubbles: true, cancelable: true, button: 0}));
			}
			const lab = cell && cell.closest('.jp-Notebook');
			if (lab) lab.focus();
		}, 0);
	});
	comm.send(%[9]q, 1);
})();</script></div>`

var explorer = explorerUI{
	isLive: func() bool { return gonbui.IsNotebook && os.Getenv(HeadlessEnv) == "" },
	update: gonbui.UpdateHTML,
	probe: func(displayID string, wait time.Duration) frontEnd {
		address := "/attnbook/explorer/probe/" + gonbui.UniqueId()
		answers := comms.Listen[string](address) // GoNB sets up its channel to the browser first.
		defer answers.Close()
		// GoNB's page script gives up when the kernel acknowledges its channel later than 0.5 s (a
		// busy machine, a kernel just started): ask again every 1.5 s, and have GoNB check its
		// channel (a heartbeat) and set it up again when it is gone.
		const every = 1500 * time.Millisecond
		for try := 0; ; try++ {
			gonbui.UpdateHTML(displayID, fmt.Sprintf(probeJS, address, try))
			gonbui.Sync() // the kernel has taken the question: the wait starts.
			step := min(every, wait)
			select {
			case a := <-answers.C:
				if a == "queued" {
					return queued
				}
				return alone
			case <-time.After(step):
			}
			if wait -= step; wait <= 0 {
				return noAnswer
			}
			comms.Start()
		}
	},
	controls: func(displayID string, heads int, title, picture string) *explorerControls {
		uid := gonbui.UniqueId()
		prefix := "/attnbook/explorer/" + uid
		ready := comms.Listen[int](prefix + "/ready")
		defer ready.Close()
		moves, clicks := comms.Listen[int](prefix+"/move").LatestOnly(), comms.Listen[int](prefix+"/done")
		width := min(360, max(120, 40*heads))
		gonbui.UpdateHTML(displayID, fmt.Sprintf(controlsHTML, "attnbook_explorer_"+uid, heads-1, width, esc(title), picture,
			prefix+"/head", prefix+"/move", prefix+"/done", prefix+"/ready"))
		<-ready.C
		return &explorerControls{moves: moves.C, clicks: clicks.C,
			show:  func(title, picture string) { comms.Send(prefix+"/head", title+"\n"+picture) },
			close: func() { moves.Close(); clicks.Close() }}
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
		if note == "" {
			return "<div>" + grid + "</div>"
		}
		return `<div><div style="font-family:sans-serif;font-size:13px;color:#555555;margin:2px 0 6px">` + esc(note) + `</div>` + grid + `</div>`
	}
	// One display holds the probe, then the controls, then the grid: no empty output is left.
	display := "attnbook_explorer_" + gonbui.UniqueId()
	finish := func(note string) {
		ui.update(display, withNote(note))
		gonbui.Sync()
	}
	silent := fmt.Sprintf(noAnswerNote, FrontEndWait.Seconds())
	switch ui.probe(display, FrontEndWait) {
	case queued:
		finish(queuedNote)
		return nil
	case noAnswer:
		finish(silent)
		return nil
	}
	if idle <= 0 {
		idle = 2 * time.Minute
	}
	// The controls answer only when a front end is watching: wait for them at most FrontEndWait.
	ready := make(chan *explorerControls, 1)
	go func() { ready <- ui.controls(display, len(pictures), titles[0], pictures[0]) }()
	var c *explorerControls
	select {
	case c = <-ready:
	case <-time.After(FrontEndWait):
		finish(silent) // The static grid, and on with the cell.
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
			c.show(titles[v], pictures[v])
			timer.Reset(idle)
		}
	}
}
