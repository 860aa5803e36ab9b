package display_test

import (
	"fmt"
	"math"
	"strings"

	"github.com/attnbook/attnbook/pkg/display"
	"github.com/gomlx/gomlx/core/tensors"
)

// Format prints exactly what PyTorch's print(t) prints (seed 001 values).
func ExampleFormat() {
	wQuery := tensors.FromValue([][]float32{{0.2961, 0.5166}, {0.2517, 0.6886}, {0.0740, 0.8665}})
	fmt.Println(display.Format(wQuery))
	fmt.Println(display.Format(tensors.FromValue([]int64{4, 10, 21})))
	fmt.Println(display.Format(tensors.FromScalar(int64(35))))
	fmt.Println(display.Format(tensors.FromValue([][]bool{{false, true}})))
	fmt.Println(display.Format(tensors.FromValue([]float32{6.3272e+01, 1.8804e-02}))) // max/min > 1000: scientific
	inf := float32(math.Inf(-1))
	fmt.Println(display.Format(tensors.FromValue([][]float32{{0.1, inf}, {0.2, 0.4}})))
	fmt.Println(display.Format(tensors.FromValue([]float64{2, -1})))
	// Output:
	// tensor([[0.2961, 0.5166],
	//         [0.2517, 0.6886],
	//         [0.0740, 0.8665]])
	// tensor([ 4, 10, 21])
	// tensor(35)
	// tensor([[False,  True]])
	// tensor([6.3272e+01, 1.8804e-02])
	// tensor([[0.1000,   -inf],
	//         [0.2000, 0.4000]])
	// tensor([ 2., -1.], dtype=torch.float64)
}

// FormatWith takes torch.set_printoptions settings and extra repr suffixes.
func ExampleFormatWith() {
	t := tensors.FromValue([][]float32{{0.2996, 0.8053}, {0.3061, 0.8210}})
	opts := display.DefaultPrintOptions()
	opts.Suffixes = []string{"grad_fn=<MmBackward0>"}
	fmt.Println(display.FormatWith(t, opts))
	opts = display.DefaultPrintOptions()
	opts.Precision = 2
	fmt.Println(display.FormatWith(t, opts))
	// Output:
	// tensor([[0.2996, 0.8053],
	//         [0.3061, 0.8210]], grad_fn=<MmBackward0>)
	// tensor([[0.30, 0.81],
	//         [0.31, 0.82]])
}

// Big tensors are summarised with "..." like print(t).
func ExampleFormat_summarised() {
	data := make([]int64, 2000)
	for i := range data {
		data[i] = int64(i)
	}
	fmt.Println(display.Format(tensors.FromFlatDataAndDimensions(data, 2, 1000)))
	// Output:
	// tensor([[   0,    1,    2,  ...,  997,  998,  999],
	//         [1000, 1001, 1002,  ..., 1997, 1998, 1999]])
}

func ExampleSize() {
	fmt.Println(display.Size(2, 6, 3))
	fmt.Println(display.Shape(tensors.FromFlatDataAndDimensions(make([]float32, 12), 6, 2)))
	// Output:
	// torch.Size([2, 6, 3])
	// torch.Size([6, 2])
}

// Float prints a float32 the way Python prints float(x): the float64 repr.
func ExampleFloat() {
	fmt.Println(display.Float(0.95440006)) // seed 001's x_0 · query
	fmt.Println(display.Float(2))
	fmt.Println(display.Float(1e-5))
	// Output:
	// 0.9544000625610352
	// 2.0
	// 9.999999747378752e-06
}

// Item prints a one-element tensor as an f-string prints a 0-d tensor.
func ExampleItem() {
	fmt.Println("dot:", display.Item(tensors.FromScalar(float32(1.4950001))))
	fmt.Println(display.Item(tensors.FromScalar(int64(35))))
	// Output:
	// dot: 1.4950001239776611
	// 35
}

// Println mirrors Python's print with several arguments.
func ExamplePrintln() {
	w := tensors.FromValue([]float32{0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656})
	display.Println("Attention weights:", w)
	display.Println("Sum:", tensors.FromScalar(float32(0.99999994)))
	display.Println("keys.shape:", tensors.FromFlatDataAndDimensions(make([]float32, 12), 6, 2).Shape())
	// Output:
	// Attention weights: tensor([0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656])
	// Sum: tensor(1.0000)
	// keys.shape: torch.Size([6, 2])
}

// causal returns torch.triu(torch.ones(n, n), diagonal=1).bool(): true = hidden.
func causal(n int) *tensors.Tensor {
	m := make([]bool, n*n)
	for i := range n {
		for j := range n {
			m[i*n+j] = j > i
		}
	}
	return tensors.FromFlatDataAndDimensions(m, n, n)
}

// Heatmap draws attention weights; the result is an SVG element for gonbui.DisplayHTML
// (or display.ShowFigure in a notebook).
func ExampleHeatmap() {
	weights := tensors.FromValue([][]float32{
		{1.0000, 0.0000, 0.0000},
		{0.5517, 0.4483, 0.0000},
		{0.3800, 0.3097, 0.3103},
	})
	svg, err := display.Heatmap(weights).
		Tokens("Your", "journey", "starts").
		Masked(causal(3)).
		Title("Causal attention").
		Done()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(strings.HasPrefix(svg, "<svg"))
	fmt.Println("cells:", strings.Count(svg, `class="cell`), "masked:", strings.Count(svg, `class="cell masked`))
	fmt.Println(strings.Contains(svg, "every row sums to 1"))
	// Output:
	// true
	// cells: 9 masked: 3
	// true
}

// Bad input is an error from Done, never a panic. (The Show helpers panic with that error, so
// that a notebook cell fails with it; TryShow returns it.)
func ExampleHeatmap_errors() {
	_, err := display.Heatmap(tensors.FromFlatDataAndDimensions(make([]float32, 18), 2, 3, 3)).Done()
	fmt.Println(err)
	_, err = display.Heatmap(tensors.FromFlatDataAndDimensions(make([]float32, 9), 3, 3)).Tokens("a", "b").Done()
	fmt.Println(err)
	// Output:
	// display.Heatmap: weights must be [T_q, T_k] (rank 2), got shape [2 3 3] (use display.Heads for [h, T_q, T_k] or [b, h, T_q, T_k])
	// display.Heatmap: 2 query labels ["a" "b"] for 3 rows (queries) of shape [3 3]: want 3 labels, one per row
}

// Heads draws [h, T_q, T_k] or [b, h, T_q, T_k] weights as small multiples.
func ExampleHeads() {
	w := make([]float32, 2*3*3)
	for i := range w {
		w[i] = 1.0 / 3
	}
	svg, _ := display.Heads(tensors.FromFlatDataAndDimensions(w, 2, 3, 3)).Tokens("a", "b", "c").Done()
	fmt.Println(strings.Contains(svg, ">head 0<"), strings.Contains(svg, ">head 1<"), strings.Count(svg, `class="cell`))
	// Output:
	// true true 18
}

// Compare puts two pictures side by side, with captions.
func ExampleCompare() {
	w := tensors.FromValue([][]float32{{1, 0}, {0.5, 0.5}})
	html, err := display.Compare().
		Add("masked_fill(-inf), then softmax", display.Heatmap(w).Masked(causal(2))).
		Add("softmax, × tril, renormalise", display.Heatmap(w)).
		Done()
	fmt.Println(err, strings.Count(html, "<figure"), strings.Count(html, "<svg"))
	// Output:
	// <nil> 2 2
}

// MaskView draws a mask; Meaning says what true means.
func ExampleMaskView() {
	svg, _ := display.MaskView(causal(4)).Meaning("hidden", "visible").Done()
	fmt.Println(strings.Count(svg, "mask-true"), strings.Contains(svg, "True: hidden"))
	// Output:
	// 6 true
}

// Table shows a tensor as an HTML table, with PyTorch's number formatting.
func ExampleTable() {
	html, _ := display.Table(tensors.FromValue([][]float32{{0.2961, 0.5166}})).Axes("row", "col").Done()
	fmt.Println(strings.Contains(html, "torch.Size([1, 2])"), strings.Contains(html, ">0.2961<"))
	// Output:
	// true true
}

// HeadSplit shows which numbers of x [b, t, d] each head receives.
func ExampleHeadSplit() {
	svg, _ := display.HeadSplit(3, 2, 3).Tokens("Your", "journey", "starts").Done()
	fmt.Println(strings.Contains(svg, "x.view(b, t, h, hd)"), strings.Contains(svg, ".transpose(1, 2)"))
	wrong, _ := display.HeadSplit(3, 2, 3).WithoutTranspose().Done()
	fmt.Println(strings.Contains(wrong, "head 0 ← tokens 0, 1"))
	// Output:
	// true true
	// true
}

// BarChart draws notebook 09's comparison (the numbers here are made up): the forward time of
// each formulation in GoMLX and in two PyTorch builds, then the same as ratios to one of them,
// with a dashed line at 1. In a notebook: display.ShowFigure(display.BarChart(…)…).
func ExampleBarChart() {
	formulations := []string{"wrapper", "chapter", "fast"}
	svg, err := display.BarChart(formulations...).
		Series("GoMLX (pure Go)", 900, 800, 650).
		Series("PyTorch (reference BLAS)", 12000, 11500, 11000).
		Series("PyTorch (OpenBLAS)", 950, 850, math.NaN()). // NaN: not measured, drawn as "n/a"
		Unit(" ms").Title("MHA forward, median").Note("shorter is faster").Done()
	fmt.Println(err, strings.Count(svg, `class="bar"`), strings.Contains(svg, ">650 ms<"), strings.Contains(svg, ">n/a<"))

	svg, err = display.BarChart(formulations...).
		Series("GoMLX / PyTorch (OpenBLAS)", 900.0/950, 800.0/850, math.NaN()).
		Unit("×").Reference(1, "as fast as PyTorch").Title("GoMLX time / PyTorch time").Done()
	fmt.Println(err, strings.Count(svg, `class="bar"`), strings.Contains(svg, ">0.95×<"), strings.Contains(svg, ">as fast as PyTorch<"))

	_, err = display.BarChart(formulations...).Series("GoMLX", 900, 800).Done()
	fmt.Println(err)
	// Output:
	// <nil> 8 true true
	// <nil> 2 true true
	// display.BarChart: series "GoMLX" has 2 values for 3 categories ["wrapper" "chapter" "fast"]: want one value per category (NaN for a missing one)
}
