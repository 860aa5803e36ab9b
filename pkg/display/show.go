package display

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/janpfeifer/gonb/gonbui"
	"github.com/janpfeifer/gonb/gonbui/dom"
	"github.com/janpfeifer/gonb/gonbui/widgets"
)

// Where the helpers write; tests replace them. Nil writers mean os.Stdout / os.Stderr as
// they are at the time of the call (go test's examples swap os.Stdout).
var (
	textOut     io.Writer
	errOut      io.Writer
	displayHTML = syncedDisplayHTML
)

// syncedDisplayHTML shows html and waits until GoNB has taken it: a cell that exits right after
// displaying could otherwise lose the output (seen under load with GoNB v0.11.1).
func syncedDisplayHTML(html string) {
	gonbui.DisplayHTML(html)
	gonbui.Sync()
}

func stdout() io.Writer {
	if textOut != nil {
		return textOut
	}
	return os.Stdout
}

func stderr() io.Writer {
	if errOut != nil {
		return errOut
	}
	return os.Stderr
}

// Show prints t on stdout exactly as PyTorch's print(t) does (see Format).
//
// It writes plain text rather than HTML on purpose: the cell's stdout stream is what a
// PyTorch notebook shows for print, so the two notebooks' outputs can be compared line by
// line; text survives every export (HTML, PDF, nbconvert --to markdown) and works the same
// outside a notebook (go test, go run); and GoNB already shows stdout in a monospaced
// block, which is all a <pre> would add. Use ShowTable for a rich view.
func Show(t *tensors.Tensor) { fmt.Fprintln(stdout(), Format(t)) }

// Println prints its arguments separated by spaces, like Python's print: tensors as Format,
// shapes as torch.Size, float32/float64 as Python's float repr, bools as True/False,
// anything else as fmt.Sprint. Println("Sum:", s) prints "Sum: tensor(1.0000)".
func Println(args ...any) { fmt.Fprintln(stdout(), Sprint(args...)) }

// Sprint is Println's text without the newline.
func Sprint(args ...any) string {
	parts := make([]string, len(args))
	for i, a := range args {
		switch x := a.(type) {
		case *tensors.Tensor:
			parts[i] = Format(x)
		case shapes.Shape:
			parts[i] = Size(x.Dimensions...)
		case float32:
			parts[i] = Float(x)
		case float64:
			parts[i] = pyRepr(x)
		case bool:
			parts[i] = map[bool]string{true: "True", false: "False"}[x]
		default:
			parts[i] = fmt.Sprint(x)
		}
	}
	return strings.Join(parts, " ")
}

// ShowHTML displays html in the notebook, or prints err on one line to stderr. It accepts a
// renderer's results directly: ShowHTML(display.Table(t).Done()).
func ShowHTML(html string, err error) {
	if err != nil {
		reportError(err)
		return
	}
	displayHTML(html)
}

// ShowSVG displays an SVG element (wrapped in a <div>, as gonbui.DisplaySVG does, so it
// survives HTML export), or prints err on one line to stderr.
func ShowSVG(svg string, err error) {
	if err != nil {
		reportError(err)
		return
	}
	displayHTML("<div>" + svg + "</div>")
}

// ShowFigure renders r (any builder of this package) and displays it, or prints the error.
func ShowFigure(r Renderer) {
	if r == nil {
		reportError(fmt.Errorf("display.ShowFigure: nil renderer"))
		return
	}
	out, err := safeDone(r)
	if err == nil && strings.HasPrefix(out, "<svg") {
		// As gonbui.DisplaySVG does: a bare SVG output is lost when Jupyter exports to HTML.
		out = "<div>" + out + "</div>"
	}
	ShowHTML(out, err)
}

// ShowTable displays t as an HTML table (see Table).
func ShowTable(t *tensors.Tensor) { ShowFigure(Table(t)) }

// ShowHeatmap displays a `[T_q, T_k]` weights matrix with optional token labels for both
// axes (see Heatmap for masks, dropout and more options).
func ShowHeatmap(weights *tensors.Tensor, tokens ...string) {
	ShowFigure(Heatmap(weights).Tokens(tokensOrNil(tokens)...))
}

// ShowHeads displays `[h, T_q, T_k]` or `[b, h, T_q, T_k]` weights as small multiples.
func ShowHeads(weights *tensors.Tensor, tokens ...string) {
	ShowFigure(Heads(weights).Tokens(tokensOrNil(tokens)...))
}

// ShowMask displays a `[T_q, T_k]` bool or 0/1 mask.
func ShowMask(mask *tensors.Tensor, tokens ...string) {
	ShowFigure(MaskView(mask).Tokens(tokensOrNil(tokens)...))
}

func tokensOrNil(tokens []string) []string {
	if len(tokens) == 0 {
		return nil
	}
	return tokens
}

// safeDone runs r.Done, turning a panic into an error: a helper must never crash a cell.
func safeDone(r Renderer) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("display: %T.Done panicked: %v", r, p)
		}
	}()
	return r.Done()
}

// reportError prints err on one line to stderr.
func reportError(err error) {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	fmt.Fprintln(stderr(), "error: "+msg)
}

// ExploreHeads shows one head at a time with a GoNB slider to pick the head, for
// `[h, T_q, T_k]` or `[b, h, T_q, T_k]` weights on one shared colour scale. It returns when
// the Done button is pressed or after idle without slider moves (0: 2 minutes), then
// replaces the interactive part with the static grid of all heads (ShowHeads), so a saved or
// exported notebook keeps a complete picture and no dead widget. Outside a notebook it only
// displays the static grid.
func ExploreHeads(weights *tensors.Tensor, idle time.Duration, tokens ...string) {
	tokens = tokensOrNil(tokens)
	grid, err := safeDone(Heads(weights).Tokens(tokens...))
	if err != nil {
		reportError(err)
		return
	}
	pictures, titles, err := headPictures(weights, tokens)
	if err != nil {
		reportError(err)
		return
	}
	if !gonbui.IsNotebook || len(pictures) < 2 {
		displayHTML(grid)
		return
	}
	if idle <= 0 {
		idle = 2 * time.Minute
	}
	uid := gonbui.UniqueId()
	controlsDisplay, controlsID := "attnbook_controls_"+uid, "attnbook_controls_div_"+uid
	pictureDisplay, labelID := "attnbook_picture_"+uid, "attnbook_label_"+uid
	gonbui.UpdateHTML(controlsDisplay, fmt.Sprintf(`<div id="%s" style="font-family:sans-serif"></div>`, controlsID))
	slider := widgets.Slider(0, len(pictures)-1, 0).AppendTo(controlsID).Done()
	dom.Append(controlsID, fmt.Sprintf(`&nbsp;<span id="%s" style="font-family:monospace">%s</span>&nbsp;`, labelID, esc(titles[0])))
	button := widgets.Button("Done").AppendTo(controlsID).Done()
	gonbui.UpdateHTML(pictureDisplay, "<div>"+pictures[0]+"</div>")
	moves := slider.Listen().LatestOnly()
	clicks := button.Listen()
	defer moves.Close()
	defer clicks.Close()
	timer := time.NewTimer(idle)
	defer timer.Stop()
loop:
	for {
		select {
		case <-clicks.C:
			break loop
		case <-timer.C:
			break loop
		case v := <-moves.C:
			v = max(0, min(v, len(pictures)-1))
			dom.SetInnerText(labelID, titles[v])
			gonbui.UpdateHTML(pictureDisplay, "<div>"+pictures[v]+"</div>")
			timer.Reset(idle)
		}
	}
	gonbui.UpdateHTML(pictureDisplay, "")
	gonbui.UpdateHTML(controlsDisplay, "")
	displayHTML("<div>" + grid + "</div>")
}

// headPictures renders one heatmap per head, all on the scale of the whole tensor.
func headPictures(weights *tensors.Tensor, tokens []string) (pictures, titles []string, err error) {
	const fn = "display.ExploreHeads"
	if weights == nil {
		return nil, nil, fmt.Errorf("%s: tensor is nil", fn)
	}
	limit := -1
	if dims := weights.Shape().Dimensions; len(dims) >= 2 {
		limit = maxPanels * dims[len(dims)-1] * dims[len(dims)-2]
	}
	v, err := readValuesPrefix(weights, limit)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", fn, err)
	}
	r := len(v.dims)
	if (r != 3 && r != 4) || v.size() == 0 {
		return nil, nil, fmt.Errorf("%s: weights must be a non-empty [h, T_q, T_k] or [b, h, T_q, T_k], got shape %v", fn, v.dims)
	}
	tq, tk := v.dims[r-2], v.dims[r-1]
	all := newMatrix(v, 0, v.size()/tk, tk)
	scale, _ := autoScale([]*matrix{all})
	n := v.size() / (tq * tk) // at most maxPanels were read.
	for p := range n {
		sub := &values{dtype: v.dtype, kind: v.kind, dims: []int{tq, tk}, f: v.f[p*tq*tk : (p+1)*tq*tk]}
		title := fmt.Sprintf("head %d", p)
		if r == 4 {
			title = fmt.Sprintf("batch %d · head %d", p/v.dims[1], p%v.dims[1])
		}
		o := defaultHeatOptions(DefaultMaxCells)
		o.rowLabels, o.colLabels, o.title, o.scale = tokens, tokens, title, &scale
		svg, err := renderHeat(fn, sub, &o, false)
		if err != nil {
			return nil, nil, err
		}
		pictures, titles = append(pictures, svg), append(titles, title)
	}
	return pictures, titles, nil
}
