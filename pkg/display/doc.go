// Package display shows tensors, masks and attention weights so that a student can read
// and see them in a GoNB notebook.
//
// Text: [Format] prints a tensor character for character as PyTorch 1.13's print(t) does
// (4 decimals, scientific notation when the values span more than 1000×, line wrapping at
// 80 columns, "..." summaries above 1000 elements), so a Go notebook's output can be diffed
// against the PyTorch notebook it mirrors. [Size], [Shape], [Item] and [Float] print shapes
// and scalars the Python way.
//
// Pictures: every renderer is a builder — call the constructor, chain setters, finish with
// Done, which returns the markup and an error (never a panic) — so it also satisfies
// [Renderer]:
//
//   - [Table]: an HTML table with a shape/dtype header, labelled axes, collapsed when big.
//   - [Heatmap]: a `[T_q, T_k]` attention matrix as inline SVG: token labels on both axes
//     (rows = queries, columns = keys), a colour legend, values in small matrices,
//     masked cells hatched grey, dropped-out cells crossed, a "rows sum to 1" note
//     that is only written when the data says so.
//   - [Heads]: `[h, T_q, T_k]` or `[b, h, T_q, T_k]` as titled small multiples.
//   - [MaskView]: a boolean or 0/1 mask.
//   - [Compare]: two or more pictures side by side with captions.
//   - [HeadSplit]: how view/transpose (or a wrong reshape) moves the numbers of
//     `[b, t, d]` into `[b, h, t, hd]`.
//   - [BarChart]: grouped horizontal bars (timings, ratios) with values, a legend and an
//     optional dashed reference line.
//
// Everything is self-contained: no scripts, no CDN, no external fonts, no element ids, only
// presentation attributes — it renders the same in JupyterLab, the classic Notebook and
// exported HTML. Every label and title is escaped. Grids of up to 576 cells draw each cell as a
// rectangle with a tooltip; bigger ones (a GPT's heads) draw each panel's cells as one embedded
// PNG of one pixel per cell, scaled up without smoothing, with the same colours, labels and
// marks: four heads of 32×32 weigh about 30 KB instead of 650 KB.
//
// GoNB helpers ([Show], [ShowTable], [ShowHeatmap], [ShowHeads], [ShowMask], [ShowFigure],
// [ExploreHeads]) display the result in the cell. On bad input they panic with a one-line error
// naming the function, the argument and the values ("display.ShowHeatmap: 2 query labels
// ["a" "b"] for 3 rows (queries) of shape [3 3]: want 3 labels, one per row"), so the cell
// fails with that message as its first line instead of passing with no picture. Go code that
// wants the error as a value calls the builder's Done or [TryShow].
package display
