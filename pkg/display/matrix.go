package display

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
)

// matrix is one 2-D panel of values with the per-cell flags the pictures draw.
type matrix struct {
	rows, cols int
	v          []float64 // row-major; -Inf and NaN allowed.
	masked     []bool    // drawn hatched grey.
	dropped    []bool    // drawn crossed (dropout zeroed it).
	rowLabels  []string
	colLabels  []string
	// Downsampling: each cell stands for a blockR×blockC block of the original matrix.
	blockR, blockC     int
	origRows, origCols int
}

func (m *matrix) at(i, j int) int { return i*m.cols + j }

// newMatrix copies the rows×cols panel starting at flat offset of v. Cells equal to -Inf
// count as masked: that is how masked_fill(mask, -inf) scores look.
func newMatrix(v *values, offset, rows, cols int) *matrix {
	m := &matrix{rows: rows, cols: cols, blockR: 1, blockC: 1, origRows: rows, origCols: cols,
		v: make([]float64, rows*cols), masked: make([]bool, rows*cols), dropped: make([]bool, rows*cols)}
	copy(m.v, v.f[offset:offset+rows*cols])
	for i, x := range m.v {
		m.masked[i] = math.IsInf(x, -1)
	}
	return m
}

// maskSpec is an optional mask tensor with its convention.
type maskSpec struct {
	t *tensors.Tensor
	// hideNonZero: true/non-zero cells are hidden (masked_fill convention, torch.triu(ones,
	// diagonal=1).bool()); otherwise zero cells are hidden (torch.tril(ones) multiplied in).
	hideNonZero bool
	v           *values
}

// load reads the mask and checks that it is [rows, cols] or has the weights' full shape.
func (s *maskSpec) load(fn, what string, weightDims []int) error {
	if s == nil || s.t == nil {
		return nil
	}
	r := len(weightDims)
	// Only the panels that are drawn are needed.
	v, err := readValuesPrefix(s.t, maxPanels*weightDims[r-2]*weightDims[r-1])
	if err != nil {
		return fmt.Errorf("%s: %s: %w", fn, what, err)
	}
	okPanel := len(v.dims) == 2 && v.dims[0] == weightDims[r-2] && v.dims[1] == weightDims[r-1]
	okFull := equalDims(v.dims, weightDims)
	if !okPanel && !okFull {
		return fmt.Errorf("%s: %s has shape %v, weights have shape %v: want [%d, %d] or the weights' shape",
			fn, what, v.dims, weightDims, weightDims[r-2], weightDims[r-1])
	}
	if err := checkMaskValues(fn, what, v); err != nil {
		return err
	}
	s.v = v
	return nil
}

// flags returns, for panel p (the p-th [rows, cols] slice of the weights), which cells the
// mask marks.
func (s *maskSpec) flags(p, rows, cols int) []bool {
	if s == nil || s.v == nil {
		return nil
	}
	off := 0
	if len(s.v.dims) != 2 {
		off = p * rows * cols
	}
	out := make([]bool, rows*cols)
	for i := range out {
		nonZero := s.v.f[off+i] != 0
		out[i] = nonZero == s.hideNonZero
	}
	return out
}

func equalDims(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// checkLabels validates caller labels against an axis of n entries (an axis of a tensor of
// shape dims), or makes index labels. axis is "query", "key" or "token".
func checkLabels(fn, axis string, labels []string, n int, dims []int) ([]string, error) {
	if labels == nil {
		out := make([]string, n)
		for i := range out {
			out[i] = strconv.Itoa(i)
		}
		return out, nil
	}
	if len(labels) != n {
		where := map[string]string{"query": "rows (queries)", "key": "columns (keys)"}[axis]
		if where == "" {
			where = axis + "s"
		}
		return nil, fmt.Errorf("%s: %d %s labels %s for %d %s of shape %v: want %d labels, one per %s",
			fn, len(labels), axis, quoteLabels(labels), n, where, dims, n, strings.TrimSuffix(strings.Fields(where)[0], "s"))
	}
	return labels, nil
}

// quoteLabels formats labels for an error message: quoted (control characters escaped), long
// labels clipped, at most 8 of them.
func quoteLabels(labels []string) string {
	const most = 8
	parts := make([]string, 0, most+1)
	for i, l := range labels {
		if i == most {
			parts = append(parts, fmt.Sprintf("… (%d more)", len(labels)-most))
			break
		}
		parts = append(parts, strconv.Quote(clip(l, 24)))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// checkMaskValues fails unless every value of a numeric mask is 0 or 1 (bool masks always
// pass): 0.3, 2, -inf or NaN in a mask is a mistake (scores or weights passed as a mask, an
// additive 0/-inf mask), not something to draw as "true".
func checkMaskValues(fn, what string, v *values) error {
	if v.kind == kindBool {
		return nil
	}
	for i, x := range v.f {
		if x != 0 && x != 1 {
			return fmt.Errorf("%s: %s (shape %v) holds %s at %v: a mask holds only 0/1 or true/false; "+
				"for a mask where non-zero means true, pass eager.Bool(mask) (PyTorch: mask.bool())",
				fn, what, v.dims, pyRepr(x), unravel(i, v.dims))
		}
	}
	return nil
}

// unravel turns a flat row-major index into a multi-index of dims.
func unravel(flat int, dims []int) []int {
	idx := make([]int, len(dims))
	for d := len(dims) - 1; d >= 0; d-- {
		if dims[d] > 0 {
			idx[d] = flat % dims[d]
			flat /= dims[d]
		}
	}
	return idx
}

// rowSums reports whether every row of m sums to 1 (within 1e-3; -Inf cells count as 0,
// as exp(-inf) does in a softmax) and the largest deviation.
func rowSums(m *matrix) (ok bool, maxErr float64) {
	for i := range m.rows {
		sum := 0.0
		for j := range m.cols {
			x := m.v[m.at(i, j)]
			if math.IsInf(x, -1) {
				continue
			}
			if !isFinite(x) {
				return false, math.Inf(1)
			}
			sum += x
		}
		maxErr = math.Max(maxErr, math.Abs(sum-1))
	}
	return maxErr <= 1e-3, maxErr
}

// autoScale picks the colour range from the finite, unmasked values of all panels:
// [0, 1] for probabilities, symmetric around 0 when values have both signs, else min..max.
func autoScale(ms []*matrix) (s colorScale, finite bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, m := range ms {
		for i, x := range m.v {
			if m.masked[i] || !isFinite(x) {
				continue
			}
			lo, hi = math.Min(lo, x), math.Max(hi, x)
		}
	}
	switch {
	case lo > hi:
		return colorScale{lo: 0, hi: 1}, false
	case lo >= 0 && hi <= 1:
		return colorScale{lo: 0, hi: 1}, true
	case lo < 0 && hi > 0:
		a := math.Max(-lo, hi)
		return colorScale{lo: -a, hi: a, diverging: true}, true
	case lo == hi:
		return colorScale{lo: lo - 0.5, hi: hi + 0.5}, true
	}
	return colorScale{lo: lo, hi: hi}, true
}

// downsample shrinks m so that no side has more than maxSide cells: each new cell is the
// mean of the finite, unmasked values of its block; a block is masked (dropped) only when
// all its cells are.
func downsample(m *matrix, maxSide int) *matrix {
	br := (m.rows + maxSide - 1) / maxSide
	bc := (m.cols + maxSide - 1) / maxSide
	if br <= 1 && bc <= 1 {
		return m
	}
	br, bc = max(br, 1), max(bc, 1)
	rows, cols := (m.rows+br-1)/br, (m.cols+bc-1)/bc
	out := &matrix{rows: rows, cols: cols, blockR: br, blockC: bc, origRows: m.rows, origCols: m.cols,
		v: make([]float64, rows*cols), masked: make([]bool, rows*cols), dropped: make([]bool, rows*cols)}
	for bi := range rows {
		for bj := range cols {
			sum, n, all, nMasked, nDropped := 0.0, 0, 0, 0, 0
			other := math.NaN()
			for i := bi * br; i < min((bi+1)*br, m.rows); i++ {
				for j := bj * bc; j < min((bj+1)*bc, m.cols); j++ {
					k := m.at(i, j)
					all++
					if m.dropped[k] {
						nDropped++
					}
					switch x := m.v[k]; {
					case m.masked[k]:
						nMasked++
					case isFinite(x):
						sum += x
						n++
					default:
						other = x
					}
				}
			}
			k := out.at(bi, bj)
			switch {
			case n > 0:
				out.v[k] = sum / float64(n)
			case nMasked == all:
				out.v[k] = math.Inf(-1)
				out.masked[k] = true
			default:
				out.v[k] = other
			}
			out.dropped[k] = nDropped == all
		}
	}
	out.rowLabels = rangeLabels(m.rowLabels, m.rows, br)
	out.colLabels = rangeLabels(m.colLabels, m.cols, bc)
	return out
}

// rangeLabels names blocks of an axis "a–b" (indices), or keeps the labels when block is 1.
func rangeLabels(labels []string, n, block int) []string {
	if block <= 1 {
		return labels
	}
	var out []string
	for start := 0; start < n; start += block {
		end := min(start+block, n) - 1
		out = append(out, strconv.Itoa(start)+"–"+strconv.Itoa(end))
	}
	return out
}

// cellNumber returns the formatter for values written in cells: whole numbers without
// decimals, then 2, 1 or 0 decimals as the magnitude grows, compact exponents beyond.
func cellNumber(ms []*matrix) func(float64) string {
	maxAbs, whole := 0.0, true
	for _, m := range ms {
		for i, x := range m.v {
			if m.masked[i] || !isFinite(x) {
				continue
			}
			maxAbs = math.Max(maxAbs, math.Abs(x))
			if x != math.Trunc(x) {
				whole = false
			}
		}
	}
	return func(x float64) string {
		if s, ok := nonFinite(x); ok {
			return s
		}
		switch {
		case whole && maxAbs < 1e5:
			return strconv.FormatFloat(x, 'f', 0, 64)
		case maxAbs < 10:
			return strconv.FormatFloat(x, 'f', 2, 64)
		case maxAbs < 100:
			return strconv.FormatFloat(x, 'f', 1, 64)
		case maxAbs < 1e4:
			return strconv.FormatFloat(x, 'f', 0, 64)
		}
		return strconv.FormatFloat(x, 'g', 2, 64)
	}
}

// tipNumber prints a value for a tooltip with PyTorch's 4 decimals (or 4-digit exponent).
func tipNumber(x float64) string {
	a := math.Abs(x)
	if isFinite(x) && x != 0 && (a < 1e-4 || a >= 1e8) {
		return pyFloatFormat(x, 'e', 4)
	}
	return pyFloatFormat(x, 'f', 4)
}
