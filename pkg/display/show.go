package display

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/janpfeifer/gonb/gonbui"
)

// Where the helpers write; tests replace them. A nil writer means os.Stdout as it is at the
// time of the call (go test's examples swap os.Stdout).
var (
	textOut     io.Writer
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

// Show prints t on stdout exactly as PyTorch's print(t) does (see Format).
//
// It writes plain text rather than HTML on purpose: the cell's stdout stream is what a
// PyTorch notebook shows for print, so the two notebooks' outputs can be compared line by
// line; text survives every export (HTML, PDF, nbconvert --to markdown) and works the same
// outside a notebook (go test, go run); and GoNB already shows stdout in a monospaced
// block, which is all a <pre> would add. Use ShowTable for a rich view.
//
// A tensor that cannot be read (nil, finalized) makes Show panic, like every Show helper.
func Show(t *tensors.Tensor) {
	v, err := readValues(t)
	if err != nil {
		fail(fmt.Errorf("display.Show: t: %w", err))
	}
	fmt.Fprintln(stdout(), formatValues(v, DefaultPrintOptions()))
}

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

// ShowHTML displays html in the notebook; a non-nil err makes it panic with err instead (see
// [ShowFigure]). It accepts a renderer's results directly: ShowHTML(display.Table(t).Done()).
func ShowHTML(html string, err error) {
	if err != nil {
		fail(err)
	}
	displayHTML(html)
}

// ShowSVG displays an SVG element (wrapped in a <div>, as gonbui.DisplaySVG does, so it
// survives HTML export); a non-nil err makes it panic with err instead.
func ShowSVG(svg string, err error) {
	if err != nil {
		fail(err)
	}
	displayHTML("<div>" + svg + "</div>")
}

// ShowFigure renders r (any builder of this package) and displays it.
//
// Bad input (wrong shapes, label counts, mask values...) makes it panic with an error whose
// message names the function, the argument and the values, so that the notebook cell fails
// with that message as its first line ("panic: display.ShowHeatmap: 2 query labels ..."): a
// picture that was never drawn must not pass for success in a notebook run. Go code that
// wants the error as a value uses [TryShow] or the builder's Done.
func ShowFigure(r Renderer) {
	if err := TryShow(r); err != nil {
		fail(err)
	}
}

// TryShow is ShowFigure returning the error (and displaying nothing) instead of panicking.
func TryShow(r Renderer) error {
	if r == nil {
		return fmt.Errorf("display.ShowFigure: r is a nil Renderer")
	}
	out, err := safeDone(r)
	if err != nil {
		return err
	}
	if strings.HasPrefix(out, "<svg") {
		// As gonbui.DisplaySVG does: a bare SVG output is lost when Jupyter exports to HTML.
		out = "<div>" + out + "</div>"
	}
	displayHTML(out)
	return nil
}

// ShowTable displays t as an HTML table (see Table). It panics on bad input, like ShowFigure.
func ShowTable(t *tensors.Tensor) {
	b := Table(t)
	b.name = "display.ShowTable"
	ShowFigure(b)
}

// ShowHeatmap displays a `[T_q, T_k]` weights matrix with optional token labels for both
// axes, one per row and column (see Heatmap for masks, dropout and more options). It panics on
// bad input, like ShowFigure.
func ShowHeatmap(weights *tensors.Tensor, tokens ...string) {
	b := Heatmap(weights).Tokens(tokensOrNil(tokens)...)
	b.o.name = "display.ShowHeatmap"
	ShowFigure(b)
}

// ShowHeads displays `[h, T_q, T_k]` or `[b, h, T_q, T_k]` weights as small multiples. It
// panics on bad input, like ShowFigure.
func ShowHeads(weights *tensors.Tensor, tokens ...string) {
	b := Heads(weights).Tokens(tokensOrNil(tokens)...)
	b.o.name = "display.ShowHeads"
	ShowFigure(b)
}

// ShowMask displays a `[T_q, T_k]` mask of bools or of 0s and 1s (other values, such as 0.3,
// 2, -inf or NaN, are refused). It panics on bad input, like ShowFigure.
func ShowMask(mask *tensors.Tensor, tokens ...string) {
	b := MaskView(mask).Tokens(tokensOrNil(tokens)...)
	b.name = "display.ShowMask"
	ShowFigure(b)
}

func tokensOrNil(tokens []string) []string {
	if len(tokens) == 0 {
		return nil
	}
	return tokens
}

// nameOr returns name, or def when name is empty.
func nameOr(name, def string) string {
	if name == "" {
		return def
	}
	return name
}

// safeDone runs r.Done, turning a panic into an error.
func safeDone(r Renderer) (out string, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("display: %T.Done panicked: %v", r, p)
		}
	}()
	return r.Done()
}

// fail reports a display error the way a notebook cell notices: it panics with err, whose
// message (on one line) is then the first line of the cell's error output. (With
// GOTRACEBACK=none in the kernel's environment it is the only line.)
func fail(err error) {
	panic(errors.New(strings.Join(strings.Fields(err.Error()), " ")))
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
