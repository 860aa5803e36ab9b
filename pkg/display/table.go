package display

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
)

// TableBuilder configures an HTML table of a tensor; create it with Table.
type TableBuilder struct {
	t        *tensors.Tensor
	title    string
	axes     []string
	labels   map[int][]string
	collapse int
	name     string // the function named in errors, when not Table
}

// Table renders a tensor as HTML: a header with the shape (torch.Size), dtype and element
// count, then one 2-D table per leading index (`[0, :, :]`, `[1, :, :]`, ...) with row and
// column indices (or labels) on labelled axes. Numbers use exactly PyTorch's print
// formatting; above 1000 elements rows and columns are summarised with ⋮ and … like
// print(t). Tables with more than 64 elements start collapsed (<details>).
func Table(t *tensors.Tensor) *TableBuilder {
	return &TableBuilder{t: t, collapse: 64, labels: map[int][]string{}}
}

// Title sets a title shown before the shape in the header.
func (b *TableBuilder) Title(title string) *TableBuilder { b.title = title; return b }

// Axes names the axes, one name per dimension (default "dim 0", "dim 1", ...).
func (b *TableBuilder) Axes(names ...string) *TableBuilder { b.axes = names; return b }

// Labels labels the positions of one axis, e.g. Labels(0, tokens...) for the rows of a
// [T, d] tensor.
func (b *TableBuilder) Labels(axis int, labels ...string) *TableBuilder {
	b.labels[axis] = labels
	return b
}

// CollapseAbove sets the element count above which the table starts collapsed (default 64;
// negative: never collapsed).
func (b *TableBuilder) CollapseAbove(n int) *TableBuilder { b.collapse = n; return b }

const (
	thStyle   = `style="background:#f3f3f3;color:#555555;font-weight:normal;padding:2px 6px;border:1px solid #dddddd;text-align:right"`
	tdStyle   = `style="padding:2px 6px;border:1px solid #dddddd;text-align:right"`
	tdSpecial = `style="padding:2px 6px;border:1px solid #dddddd;text-align:right;color:#999999"`
)

// Done renders the table as an HTML fragment.
func (b *TableBuilder) Done() (string, error) {
	fn := nameOr(b.name, "display.Table")
	v, err := readValues(b.t)
	if err != nil {
		return "", fmt.Errorf("%s: %w", fn, err)
	}
	rank := len(v.dims)
	axes := b.axes
	if axes == nil {
		for i := range rank {
			axes = append(axes, "dim "+strconv.Itoa(i))
		}
	} else if len(axes) != rank {
		return "", fmt.Errorf("%s: %d axis names for a tensor of shape %v (rank %d)", fn, len(axes), v.dims, rank)
	} else {
		axes = append([]string(nil), axes...)
		for i := range axes {
			axes[i] = clip(axes[i], 40)
		}
	}
	labels := make([][]string, rank)
	for axis, ls := range b.labels {
		if axis < 0 || axis >= rank {
			return "", fmt.Errorf("%s: labels for axis %d, but the tensor of shape %v has rank %d", fn, axis, v.dims, rank)
		}
		if len(ls) != v.dims[axis] {
			return "", fmt.Errorf("%s: %d labels for axis %d of length %d (shape %v)", fn, len(ls), axis, v.dims[axis], v.dims)
		}
		labels[axis] = ls
	}
	label := func(axis, i int) string {
		if labels[axis] != nil {
			return clip(labels[axis][i], 24)
		}
		return strconv.Itoa(i)
	}

	opts := DefaultPrintOptions()
	summarize := v.size() > opts.Threshold
	var fm *formatter
	if v.size() > 0 {
		if summarize {
			fm = newFormatter(v, summarizedIndices(v.dims, opts.EdgeItems), opts)
		} else {
			fm = newFormatter(v, nil, opts)
		}
	}
	kept := func(axis int) []int {
		if summarize {
			return keptIndices(v.dims[axis], opts.EdgeItems, axis == rank-1)
		}
		return keptIndices(v.dims[axis], math.MaxInt32, false)
	}
	cell := func(idx int) string {
		s := strings.TrimSpace(fm.format(v, idx))
		if v.kind == kindFloat && !isFinite(v.f[idx]) {
			return `<td ` + tdSpecial + `>` + esc(s) + `</td>`
		}
		return `<td ` + tdStyle + `>` + esc(s) + `</td>`
	}

	var sb strings.Builder
	dt, _ := torchDType(v.dtype)
	header := fmt.Sprintf(`<code>%s</code> · %s · %d element%s`, Size(v.dims...), strings.TrimPrefix(dt, "torch."),
		v.size(), map[bool]string{true: "", false: "s"}[v.size() == 1])
	if b.title != "" {
		header = `<b>` + esc(clip(b.title, titleRunes)) + `</b> ` + header
	}
	if summarize {
		header += " (summarised like print)"
	}
	open := " open"
	if b.collapse >= 0 && v.size() > b.collapse {
		open = ""
		header += ` <span style="color:#888888">— click to expand</span>`
	}
	fmt.Fprintf(&sb, `<div class="attnbook-table" style="font-family:sans-serif;font-size:13px;color:#1a1a1a;background:#ffffff"><details%s><summary style="cursor:pointer">%s</summary>`, open, header)

	switch {
	case v.size() == 0:
		sb.WriteString(`<div style="margin:4px 0;color:#888888">empty: no elements</div>`)
	case rank == 0:
		fmt.Fprintf(&sb, `<table class="tensor-table" style="border-collapse:collapse;font-family:monospace;font-size:12px;margin:4px 0"><tr>%s</tr></table>`, cell(0))
	case rank == 1:
		sb.WriteString(`<table class="tensor-table" style="border-collapse:collapse;font-family:monospace;font-size:12px;margin:4px 0"><tr>`)
		fmt.Fprintf(&sb, `<th %s>%s →</th>`, thStyle, esc(axes[0]))
		for n, j := range kept(0) {
			if n > 0 && j != kept(0)[n-1]+1 {
				fmt.Fprintf(&sb, `<th %s>…</th>`, thStyle)
			}
			fmt.Fprintf(&sb, `<th %s>%s</th>`, thStyle, esc(label(0, j)))
		}
		sb.WriteString(`</tr><tr><th ` + thStyle + `></th>`)
		for n, j := range kept(0) {
			if n > 0 && j != kept(0)[n-1]+1 {
				fmt.Fprintf(&sb, `<td %s>…</td>`, tdSpecial)
			}
			sb.WriteString(cell(j))
		}
		sb.WriteString(`</tr></table>`)
	default:
		strides := rowMajorStrides(v.dims)
		rowsK, colsK := kept(rank-2), kept(rank-1)
		// Walk the leading indices (summarised too), one 2-D table each.
		var walk func(axis, offset int, idx []string)
		walk = func(axis, offset int, idx []string) {
			if axis == rank-2 {
				caption := "[" + strings.Join(append(append([]string(nil), idx...), ":", ":"), ", ") + "]"
				if b.axes != nil && len(idx) > 0 {
					var named []string
					for a, s := range idx {
						named = append(named, esc(axes[a])+" "+s)
					}
					caption += " — " + strings.Join(named, " · ")
				}
				fmt.Fprintf(&sb, `<div class="slice" style="margin:6px 0 2px 0;color:#555555;font-family:monospace">%s</div>`, caption)
				sb.WriteString(`<table class="tensor-table" style="border-collapse:collapse;font-family:monospace;font-size:12px;margin:2px 0 6px 0"><tr>`)
				fmt.Fprintf(&sb, `<th %s>%s ↓ · %s →</th>`, thStyle, esc(axes[rank-2]), esc(axes[rank-1]))
				for n, j := range colsK {
					if n > 0 && j != colsK[n-1]+1 {
						fmt.Fprintf(&sb, `<th %s>…</th>`, thStyle)
					}
					fmt.Fprintf(&sb, `<th %s>%s</th>`, thStyle, esc(label(rank-1, j)))
				}
				sb.WriteString(`</tr>`)
				for n, i := range rowsK {
					if n > 0 && i != rowsK[n-1]+1 {
						fmt.Fprintf(&sb, `<tr><th %s>⋮</th><td %s colspan="%d">⋮</td></tr>`, thStyle, tdSpecial, len(colsK)+1)
					}
					fmt.Fprintf(&sb, `<tr><th %s>%s</th>`, thStyle, esc(label(rank-2, i)))
					for n2, j := range colsK {
						if n2 > 0 && j != colsK[n2-1]+1 {
							fmt.Fprintf(&sb, `<td %s>…</td>`, tdSpecial)
						}
						sb.WriteString(cell(offset + i*strides[rank-2] + j*strides[rank-1]))
					}
					sb.WriteString(`</tr>`)
				}
				sb.WriteString(`</table>`)
				return
			}
			ks := kept(axis)
			for n, i := range ks {
				if n > 0 && i != ks[n-1]+1 {
					fmt.Fprintf(&sb, `<div style="margin:2px 0;color:#999999;font-family:monospace">⋮ (%d more along %s)</div>`, i-ks[n-1]-1, esc(axes[axis]))
				}
				walk(axis+1, offset+i*strides[axis], append(append([]string(nil), idx...), esc(label(axis, i))))
			}
		}
		walk(0, 0, nil)
	}
	sb.WriteString(`</details></div>`)
	return sb.String(), nil
}
