package display

import (
	"math"
	"strconv"
	"strings"

	"github.com/gomlx/gomlx/core/tensors"
)

// SciMode selects scientific notation for floats, like torch.set_printoptions(sci_mode=...).
type SciMode int

const (
	// SciAuto lets the values decide (PyTorch's default, sci_mode=None).
	SciAuto SciMode = iota
	// SciOn always prints floats as 1.2346e+00 (sci_mode=True).
	SciOn
	// SciOff never uses scientific notation (sci_mode=False).
	SciOff
)

// PrintOptions mirrors torch.set_printoptions. Start from [DefaultPrintOptions]: the zero
// value means precision 0, threshold 0 and linewidth 0.
type PrintOptions struct {
	// Precision is the number of digits after the decimal point (PyTorch default 4).
	Precision int
	// Threshold: tensors with more elements than this are summarised with "..." (1000).
	Threshold int
	// EdgeItems is the number of items kept at each end of a summarised axis (3).
	EdgeItems int
	// Linewidth is the number of characters per line used to wrap rows (80).
	Linewidth int
	// SciMode forces or forbids scientific notation; SciAuto decides from the values.
	SciMode SciMode
	// Suffixes are extra "key=value" entries of the repr, after the dtype, for instance
	// "grad_fn=<MmBackward0>" to reproduce a PyTorch print of a tensor with gradients.
	Suffixes []string
}

// DefaultPrintOptions returns PyTorch's defaults: precision 4, threshold 1000, edge items 3,
// line width 80, automatic scientific notation.
func DefaultPrintOptions() PrintOptions {
	return PrintOptions{Precision: 4, Threshold: 1000, EdgeItems: 3, Linewidth: 80}
}

// Format returns what PyTorch 1.13's print(t) writes for a tensor with t's values, shape
// and dtype, with default print options, e.g. `tensor([[0.2961, 0.5166]])`,
// `tensor([ 4, 10, 21])`, `tensor(35)` or `tensor([1, 2], dtype=torch.int32)`.
//
// float32, int64 and bool print without a dtype (they are PyTorch's defaults); float64,
// float16, bfloat16 and the other integer types add `dtype=torch.<name>`. A tensor that
// cannot be read (nil, finalized, complex) formats as `tensor(<error: ...>)`.
func Format(t *tensors.Tensor) string {
	return FormatWith(t, DefaultPrintOptions())
}

// FormatWith is [Format] with explicit print options (torch.set_printoptions) and repr
// suffixes.
func FormatWith(t *tensors.Tensor, opts PrintOptions) string {
	v, err := readValues(t)
	if err != nil {
		return "tensor(<error: " + err.Error() + ">)"
	}
	return formatValues(v, opts)
}

// formatValues ports torch/_tensor_str.py's _str_intern for a plain, strided, CPU tensor.
func formatValues(v *values, o PrintOptions) string {
	o = sanitizeOptions(o)
	const prefix = "tensor("
	indent := len(prefix)
	var suffixes []string
	var body string
	dtName, isDefault := torchDType(v.dtype)
	if v.size() == 0 {
		// PyTorch prints the size unless the tensor is 1-D, and the dtype unless it is
		// float32 (an empty tensor has no values to hint at int64 or bool).
		if len(v.dims) != 1 {
			suffixes = append(suffixes, "size="+pyTuple(v.dims))
		}
		if dtName != "torch.float32" {
			suffixes = append(suffixes, "dtype="+dtName)
		}
		body = "[]"
	} else {
		if !isDefault {
			suffixes = append(suffixes, "dtype="+dtName)
		}
		body = tensorStr(v, indent, o)
	}
	suffixes = append(suffixes, o.Suffixes...)
	return addSuffixes(prefix+body, suffixes, indent, o.Linewidth)
}

func sanitizeOptions(o PrintOptions) PrintOptions {
	o.Precision = max(0, min(o.Precision, 60))
	o.EdgeItems = max(0, o.EdgeItems)
	o.Threshold = max(0, o.Threshold)
	return o
}

// pyTuple prints dims as Python prints a tuple: (0, 3), (5,), ().
func pyTuple(dims []int) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = strconv.Itoa(d)
	}
	if len(dims) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// addSuffixes ports _add_suffixes: each suffix goes after ", " unless it would pass the
// line width, then on a new line indented under "tensor(".
func addSuffixes(tensorStr string, suffixes []string, indent, linewidth int) string {
	var sb strings.Builder
	sb.WriteString(tensorStr)
	// Python: len(s) - s.rfind("\n") + 1, where rfind returns -1 when there is no newline.
	lastLineLen := len(tensorStr) - strings.LastIndex(tensorStr, "\n") + 1
	for _, suffix := range suffixes {
		if lastLineLen+len(suffix)+2 > linewidth {
			sb.WriteString(",\n" + strings.Repeat(" ", indent) + suffix)
			lastLineLen = indent + len(suffix)
		} else {
			sb.WriteString(", " + suffix)
			lastLineLen += len(suffix) + 2
		}
	}
	sb.WriteString(")")
	return sb.String()
}

// tensorStr ports _tensor_str for a non-empty tensor.
func tensorStr(v *values, indent int, o PrintOptions) string {
	summarize := v.size() > o.Threshold
	var fm *formatter
	if summarize {
		fm = newFormatter(v, summarizedIndices(v.dims, o.EdgeItems), o)
	} else {
		fm = newFormatter(v, nil, o)
	}
	strides := rowMajorStrides(v.dims)
	return tensorStrWithFormatter(v, fm, v.dims, strides, 0, indent, summarize, o)
}

func rowMajorStrides(dims []int) []int {
	strides := make([]int, len(dims))
	s := 1
	for i := len(dims) - 1; i >= 0; i-- {
		strides[i] = s
		s *= dims[i]
	}
	return strides
}

// summarizedIndices ports get_summarized_data: the flat indices of the elements that remain
// after keeping edge items at each end of every axis longer than 2*edge.
func summarizedIndices(dims []int, edge int) []int {
	var out []int
	strides := rowMajorStrides(dims)
	var rec func(axis, offset int)
	rec = func(axis, offset int) {
		if axis == len(dims) {
			out = append(out, offset)
			return
		}
		n := dims[axis]
		for _, i := range keptIndices(n, edge, axis == len(dims)-1) {
			rec(axis+1, offset+i*strides[axis])
		}
	}
	rec(0, 0)
	return out
}

// keptIndices lists the positions kept along an axis of length n when summarising.
// PyTorch slices the last axis as t[:edge] and t[-edge:] — and t[-0:] is the whole
// axis — but picks rows of the other axes with range(len-edge, len), which is empty for 0.
func keptIndices(n, edge int, lastAxis bool) []int {
	idx := make([]int, 0, n)
	if n <= 2*edge {
		for i := range n {
			idx = append(idx, i)
		}
		return idx
	}
	for i := range edge {
		idx = append(idx, i)
	}
	start := n - edge
	if lastAxis && edge == 0 {
		start = 0
	}
	for i := start; i < n; i++ {
		idx = append(idx, i)
	}
	return idx
}

// tensorStrWithFormatter ports _tensor_str_with_formatter and _vector_str.
func tensorStrWithFormatter(v *values, fm *formatter, dims, strides []int, offset, indent int,
	summarize bool, o PrintOptions) string {
	dim := len(dims)
	if dim == 0 {
		return fm.format(v, offset)
	}
	n := dims[0]
	if dim == 1 {
		elementLength := fm.maxWidth + 2
		perLine := max(1, int(math.Floor(float64(o.Linewidth-indent)/float64(elementLength))))
		var data []string
		if summarize && n > 2*o.EdgeItems {
			for i := range o.EdgeItems {
				data = append(data, fm.format(v, offset+i*strides[0]))
			}
			data = append(data, " ...")
			start := n - o.EdgeItems
			if o.EdgeItems == 0 {
				start = 0 // self[-0:] is the whole vector.
			}
			for i := start; i < n; i++ {
				data = append(data, fm.format(v, offset+i*strides[0]))
			}
		} else {
			for i := range n {
				data = append(data, fm.format(v, offset+i*strides[0]))
			}
		}
		var lines []string
		for i := 0; i < len(data); i += perLine {
			lines = append(lines, strings.Join(data[i:min(i+perLine, len(data))], ", "))
		}
		return "[" + strings.Join(lines, ",\n"+strings.Repeat(" ", indent+1)) + "]"
	}
	sub := func(i int) string {
		return tensorStrWithFormatter(v, fm, dims[1:], strides[1:], offset+i*strides[0], indent+1, summarize, o)
	}
	var slices []string
	if summarize && n > 2*o.EdgeItems {
		for i := range o.EdgeItems {
			slices = append(slices, sub(i))
		}
		slices = append(slices, "...")
		for i := n - o.EdgeItems; i < n; i++ {
			slices = append(slices, sub(i))
		}
	} else {
		for i := range n {
			slices = append(slices, sub(i))
		}
	}
	sep := "," + strings.Repeat("\n", dim-1) + strings.Repeat(" ", indent+1)
	return "[" + strings.Join(slices, sep) + "]"
}

// formatter ports torch._tensor_str._Formatter: one width and one notation for the whole
// tensor, decided from the (summarised) values converted to float64.
type formatter struct {
	floating bool
	intMode  bool
	sciMode  bool
	maxWidth int
	prec     int
}

// newFormatter scans the elements at the given flat indices (all when idx is nil).
func newFormatter(v *values, idx []int, o PrintOptions) *formatter {
	fm := &formatter{floating: v.kind == kindFloat, intMode: true, maxWidth: 1, prec: o.Precision}
	each := func(fn func(i int)) {
		if idx == nil {
			for i := range v.size() {
				fn(i)
			}
			return
		}
		for _, i := range idx {
			fn(i)
		}
	}
	if !fm.floating {
		each(func(i int) {
			fm.maxWidth = max(fm.maxWidth, len(elementString(v, i)))
		})
	} else {
		var nonzeroFinite []float64
		each(func(i int) {
			if x := v.f[i]; isFinite(x) && x != 0 {
				nonzeroFinite = append(nonzeroFinite, x)
			}
		})
		if len(nonzeroFinite) > 0 {
			minAbs, maxAbs := math.Inf(1), 0.0
			for _, x := range nonzeroFinite {
				a := math.Abs(x)
				minAbs = min(minAbs, a)
				maxAbs = max(maxAbs, a)
				if x != math.Ceil(x) {
					fm.intMode = false
				}
			}
			if fm.intMode {
				// All whole numbers: print "2." (width +1 for the dot) unless they span too much.
				if maxAbs/minAbs > 1000.0 || maxAbs > 1.0e8 {
					fm.sciMode = true
					for _, x := range nonzeroFinite {
						fm.maxWidth = max(fm.maxWidth, len(pyFloatFormat(x, 'e', fm.prec)))
					}
				} else {
					for _, x := range nonzeroFinite {
						fm.maxWidth = max(fm.maxWidth, len(pyFloatFormat(x, 'f', 0))+1)
					}
				}
			} else {
				if maxAbs/minAbs > 1000.0 || maxAbs > 1.0e8 || minAbs < 1.0e-4 {
					fm.sciMode = true
					for _, x := range nonzeroFinite {
						fm.maxWidth = max(fm.maxWidth, len(pyFloatFormat(x, 'e', fm.prec)))
					}
				} else {
					for _, x := range nonzeroFinite {
						fm.maxWidth = max(fm.maxWidth, len(pyFloatFormat(x, 'f', fm.prec)))
					}
				}
			}
		}
	}
	// PyTorch applies a forced sci_mode after the scan, for every dtype (it only matters for
	// floats), and even when there was no non-zero finite value.
	switch o.SciMode {
	case SciOn:
		fm.sciMode = true
	case SciOff:
		fm.sciMode = false
	}
	return fm
}

// elementString is str(value) for ints and bools.
func elementString(v *values, i int) string {
	if v.kind == kindBool {
		if v.b[i] {
			return "True"
		}
		return "False"
	}
	return v.intString(i)
}

// format ports _Formatter.format: the element padded on the left to the common width.
func (fm *formatter) format(v *values, i int) string {
	var ret string
	if fm.floating {
		x := v.f[i]
		switch {
		case fm.sciMode:
			ret = pyFloatFormat(x, 'e', fm.prec)
		case fm.intMode:
			ret = pyFloatFormat(x, 'f', 0)
			if isFinite(x) {
				ret += "."
			}
		default:
			ret = pyFloatFormat(x, 'f', fm.prec)
		}
	} else {
		ret = elementString(v, i)
	}
	if pad := fm.maxWidth - len(ret); pad > 0 {
		ret = strings.Repeat(" ", pad) + ret
	}
	return ret
}

// pyFloatFormat is Python's "{:.<prec>f}" / "{:.<prec>e}".format(x): the same correctly
// rounded digits as strconv, with Python's spelling of the non-finite values.
func pyFloatFormat(x float64, verb byte, prec int) string {
	if s, ok := nonFinite(x); ok {
		return s
	}
	return strconv.FormatFloat(x, verb, prec, 64)
}

// nonFinite spells NaN and ±Inf as Python and PyTorch do ("nan", "inf", "-inf"); ok is false
// for finite x.
func nonFinite(x float64) (s string, ok bool) {
	switch {
	case math.IsNaN(x):
		return "nan", true
	case math.IsInf(x, 1):
		return "inf", true
	case math.IsInf(x, -1):
		return "-inf", true
	}
	return "", false
}

// Size prints dimensions as PyTorch prints a shape: Size(2, 6, 3) is "torch.Size([2, 6, 3])".
func Size(dims ...int) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = strconv.Itoa(d)
	}
	return "torch.Size([" + strings.Join(parts, ", ") + "])"
}

// Shape prints t.shape as PyTorch does, e.g. "torch.Size([2, 6, 3])".
func Shape(t *tensors.Tensor) string {
	if t == nil {
		return "torch.Size(<nil tensor>)"
	}
	return Size(t.Shape().Dimensions...)
}

// Item prints the single value of a one-element tensor as Python prints t.item() (and as an
// f-string prints a 0-d tensor): floats as the repr of the float64 ("0.9544000625610352"),
// ints in decimal, bools as True/False. Other tensors give "<error: ...>".
func Item(t *tensors.Tensor) string {
	v, err := readValues(t)
	if err != nil {
		return "<error: " + err.Error() + ">"
	}
	if v.size() != 1 {
		return "<error: only one element tensors can be converted to Python scalars, shape is " + Size(v.dims...) + ">"
	}
	switch v.kind {
	case kindFloat:
		return pyRepr(v.f[0])
	case kindBool:
		return elementString(v, 0)
	}
	return v.intString(0)
}

// Float prints a float32 as Python prints float(x) of a float32 tensor element: the shortest
// repr of the float64 value, e.g. Float(0.9544) is "0.9544000625610352", Float(2) is "2.0".
func Float(f float32) string { return pyRepr(float64(f)) }

// pyRepr is Python's repr(float): shortest round-trip digits, fixed notation for
// decimal exponents in [-5, 16) and "1e-05"/"1e+16" style outside it, ".0" on whole numbers.
func pyRepr(x float64) string {
	if s, ok := nonFinite(x); ok {
		return s
	}
	switch {
	case x == 0:
		if math.Signbit(x) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if x < 0 {
		sign, x = "-", -x
	}
	// "d.dddde±XX": shortest digits and the decimal exponent.
	s := strconv.FormatFloat(x, 'e', -1, 64)
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1 // position of the decimal point relative to the digits.
	if decpt <= -4 || decpt > 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es, exp = "-", -exp
		}
		e := strconv.Itoa(exp)
		if len(e) < 2 {
			e = "0" + e
		}
		return sign + m + "e" + es + e
	}
	switch {
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt >= len(digits):
		return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
	default:
		return sign + digits[:decpt] + "." + digits[decpt:]
	}
}
