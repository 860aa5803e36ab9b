package eager

import (
	"fmt"
	"slices"

	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/graph"
	"github.com/gomlx/gomlx/core/tensors"
)

// Shape returns a's dimensions, like list(a.shape); empty for a 0-d tensor.
func Shape(a *tensors.Tensor) []int {
	checkTensor("Shape", "a", a)
	return dimsOf(a)
}

// T is a.T: the transpose of a 2-D tensor. A 0-d or 1-D tensor is returned unchanged (what
// PyTorch 1.x did, with a deprecation warning); for more dimensions it panics, as PyTorch 2 does,
// pointing to Permute and MT.
func T(a *tensors.Tensor) *tensors.Tensor {
	checkTensor("T", "a", a)
	switch r := a.Rank(); {
	case r < 2:
		return a
	case r > 2:
		failf("T", "a %s has %d dimensions; .T is only defined for 2-D tensors: use "+
			"eager.MT(a) to transpose the last two dimensions or eager.Permute(a, %s) to reverse them",
			desc(a, false), r, reversedDims(r))
	}
	return transposeAxes(a, []int{1, 0})
}

func reversedDims(r int) string {
	s := ""
	for i := r - 1; i >= 0; i-- {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprint(i)
	}
	return s
}

// MT is a.mT: the last two dimensions transposed (batches of matrices). a needs at least 2
// dimensions.
func MT(a *tensors.Tensor) *tensors.Tensor {
	checkTensor("MT", "a", a)
	if a.Rank() < 2 {
		failf("MT", "a %s: tensor.mT is only supported on matrices or batches of matrices; got %d-D tensor",
			desc(a, false), a.Rank())
	}
	return Transpose(a, -2, -1)
}

// Transpose is a.transpose(dim0, dim1) (torch.transpose): dims dim0 and dim1 swapped. Negative
// dims count from the end.
func Transpose(a *tensors.Tensor, dim0, dim1 int) *tensors.Tensor {
	checkTensor("Transpose", "a", a)
	r := a.Rank()
	d0 := normDim("Transpose", "dim0", dim0, r, a)
	d1 := normDim("Transpose", "dim1", dim1, r, a)
	if d0 == d1 || r < 2 {
		return a
	}
	perm := make([]int, r)
	for i := range perm {
		perm[i] = i
	}
	perm[d0], perm[d1] = perm[d1], perm[d0]
	return transposeAxes(a, perm)
}

// Permute is a.permute(*dims) (torch.permute): dimension i of the result is dimension dims[i] of
// a. Negative dims count from the end.
func Permute(a *tensors.Tensor, dims ...int) *tensors.Tensor {
	checkTensor("Permute", "a", a)
	r := a.Rank()
	if len(dims) != r {
		failf("Permute", "a %s has %d dimensions but dims %v has %d entries", desc(a, false), r, dims, len(dims))
	}
	perm := make([]int, r)
	seen := make([]bool, max(r, 1))
	for i, d := range dims {
		p := normDim("Permute", fmt.Sprintf("dims[%d]", i), d, r, a)
		if seen[p] {
			failf("Permute", "dims %v repeats dimension %d (a is %s)", dims, p, desc(a, false))
		}
		seen[p] = true
		perm[i] = p
	}
	isIdentity := true
	for i, p := range perm {
		if p != i {
			isIdentity = false
		}
	}
	if isIdentity {
		return a
	}
	return transposeAxes(a, perm)
}

func transposeAxes(a *tensors.Tensor, perm []int) *tensors.Tensor {
	return run1("permute", intsKey(perm), func(xs []*graph.Node) *graph.Node {
		return graph.TransposeAllAxes(xs[0], perm...)
	}, a)
}

// View is a.view(*dims): a with new dimensions and the same elements in the same (row-major)
// order. One dimension may be -1 and is inferred. It panics when the sizes don't match.
//
// GoMLX tensors have no strides, so every tensor is "contiguous": View never fails for layout
// reasons (where PyTorch asks for .contiguous() first) and is the same as Reshape. The result
// shares nothing with a that could be mutated: eager has no in-place operations.
func View(a *tensors.Tensor, dims ...int) *tensors.Tensor { return reshape("View", a, dims) }

// Reshape is a.reshape(*dims) (torch.reshape): the same as View, see there.
func Reshape(a *tensors.Tensor, dims ...int) *tensors.Tensor { return reshape("Reshape", a, dims) }

// Contiguous is a.contiguous(): it returns a itself. GoMLX tensors are always dense and
// row-major (there are no strided views), so there is nothing to do; it exists so cells can mirror
// PyTorch's `x.transpose(1, 2).contiguous().view(...)` line by line.
func Contiguous(a *tensors.Tensor) *tensors.Tensor {
	checkTensor("Contiguous", "a", a)
	return a
}

// inferDims resolves a view/reshape request against a's size, PyTorch's way.
func inferDims(op string, a *tensors.Tensor, dims []int) []int {
	size := a.Size()
	out := slices.Clone(dims)
	infer := -1
	known := 1
	for i, d := range dims {
		switch {
		case d == -1:
			if infer >= 0 {
				failf(op, "cannot view %s as %v: only one dimension can be inferred (-1)", desc(a, false), dims)
			}
			infer = i
		case d < 0:
			failf(op, "cannot view %s as %v: invalid dimension %d", desc(a, false), dims, d)
		default:
			known *= d
		}
	}
	if _, ok := elemCount(dims); !ok {
		failf(op, "cannot view %s as %v: the dimensions multiply past 2^63-1", desc(a, false), dims)
	}
	if infer >= 0 {
		if known == 0 || size%known != 0 {
			failf(op, "cannot view %s as %v: %d elements can't be split into blocks of %d",
				desc(a, false), dims, size, known)
		}
		out[infer] = size / known
		return out
	}
	if known != size {
		failf(op, "cannot view %s as %v: %d elements, not %d", desc(a, false), dims, size, known)
	}
	return out
}

func reshape(op string, a *tensors.Tensor, dims []int) *tensors.Tensor {
	checkTensor(op, "a", a)
	out := inferDims(op, a, dims)
	if slices.Equal(out, a.Shape().Dimensions) {
		return a
	}
	return reshapeTo(a, out)
}

// reshapeTo reshapes a to dims (already validated).
func reshapeTo(a *tensors.Tensor, dims []int) *tensors.Tensor {
	if a.Size() == 0 {
		return emptyTensor(a, dims)
	}
	return run1("reshape", intsKey(dims), func(xs []*graph.Node) *graph.Node {
		return graph.Reshape(xs[0], dims...)
	}, a)
}

// emptyTensor is a tensor with no elements (some dimension 0) of a's dtype: built locally,
// since computations on empty tensors are not worth compiling.
func emptyTensor(a *tensors.Tensor, dims []int) *tensors.Tensor {
	return tensors.FromShape(shapes.Make(a.DType(), dims...))
}

// Unsqueeze is a.unsqueeze(dim) (also a[None, ...]): a new dimension of size 1 inserted at dim,
// which may be -(rank+1) … rank.
func Unsqueeze(a *tensors.Tensor, dim int) *tensors.Tensor {
	checkTensor("Unsqueeze", "a", a)
	d := normInsertDim("Unsqueeze", "dim", dim, a.Rank(), "a "+desc(a, false))
	out := slices.Insert(dimsOf(a), d, 1)
	return reshapeTo(a, out)
}

// Squeeze is a.squeeze(dim): dimension dim removed when its size is 1; a unchanged otherwise
// (PyTorch's rule).
func Squeeze(a *tensors.Tensor, dim int) *tensors.Tensor {
	checkTensor("Squeeze", "a", a)
	d := normDim("Squeeze", "dim", dim, a.Rank(), a)
	if a.Rank() == 0 || a.Shape().Dimensions[d] != 1 {
		return a
	}
	return reshapeTo(a, slices.Delete(dimsOf(a), d, d+1))
}

// Stack is torch.stack(ts, dim): the tensors, all of the same shape, joined along a new dimension
// dim (-(rank+1) … rank). Mixed dtypes are promoted like PyTorch.
func Stack(dim int, ts ...*tensors.Tensor) *tensors.Tensor {
	if len(ts) == 0 {
		failf("Stack", "expects a non-empty list of tensors")
	}
	for i, t := range ts {
		checkTensor("Stack", fmt.Sprintf("ts[%d]", i), t)
	}
	first := ts[0].Shape().Dimensions
	for i, t := range ts[1:] {
		if !slices.Equal(t.Shape().Dimensions, first) {
			failf("Stack", "expects each tensor to be equal size, but got %s at entry 0 and %s at entry %d (all: %s)",
				dimsStr(first), desc(t, false), i+1, shapeList(ts))
		}
	}
	d := normInsertDim("Stack", "dim", dim, len(first), "tensors "+dimsStr(first))
	outDims := slices.Insert(slices.Clone(first), d, len(ts))
	dt := ts[0].DType()
	for _, t := range ts[1:] {
		dt = promoteTypes(dt, t.DType())
	}
	if product(outDims) == 0 {
		return tensors.FromShape(shapes.Make(dt, outDims...))
	}
	return run1("stack", fmt.Sprint(d), func(xs []*graph.Node) *graph.Node {
		for i := range xs {
			xs[i] = graph.InsertAxes(convertNode(xs[i], dt), d)
		}
		if len(xs) == 1 {
			return xs[0]
		}
		return graph.Concatenate(xs, d)
	}, ts...)
}

// Cat is torch.cat(ts, dim): the tensors joined along the existing dimension dim; all other
// dimensions must match. Mixed dtypes are promoted like PyTorch.
func Cat(dim int, ts ...*tensors.Tensor) *tensors.Tensor {
	if len(ts) == 0 {
		failf("Cat", "expects a non-empty list of tensors")
	}
	for i, t := range ts {
		checkTensor("Cat", fmt.Sprintf("ts[%d]", i), t)
		if t.Rank() == 0 {
			failf("Cat", "zero-dimensional tensor ts[%d] cannot be concatenated (all: %s)", i, shapeList(ts))
		}
	}
	r := ts[0].Rank()
	d := normDim("Cat", "dim", dim, r, ts[0])
	first := ts[0].Shape().Dimensions
	outDims := slices.Clone(first)
	outDims[d] = 0
	dt := dtypes.InvalidDType
	for i, t := range ts {
		dims := t.Shape().Dimensions
		if len(dims) != r {
			failf("Cat", "tensors must have the same number of dimensions: got %d (ts[0] %s) and %d (ts[%d] %s)",
				r, dimsStr(first), len(dims), i, dimsStr(dims))
		}
		for j := range r {
			if j != d && dims[j] != first[j] {
				failf("Cat", "sizes of tensors must match except in dimension %d: ts[0] %s and ts[%d] %s differ in dimension %d",
					d, dimsStr(first), i, dimsStr(dims), j)
			}
		}
		outDims[d] += dims[d]
		dt = promoteTypes(dt, t.DType())
	}
	// Empty inputs add nothing (and GoMLX can't compile them): leave them out.
	var parts []*tensors.Tensor
	for _, t := range ts {
		if t.Size() > 0 {
			parts = append(parts, t)
		}
	}
	if product(outDims) == 0 || len(parts) == 0 {
		return tensors.FromShape(shapes.Make(dt, outDims...))
	}
	if len(parts) == 1 {
		return convert("Cat", parts[0], dt)
	}
	return run1("cat", fmt.Sprint(d), func(xs []*graph.Node) *graph.Node {
		for i := range xs {
			xs[i] = convertNode(xs[i], dt)
		}
		return graph.Concatenate(xs, d)
	}, parts...)
}

// Index is a[i]: the sub-tensor at position i of the first dimension (negative i counts from the
// end), with that dimension removed.
func Index(a *tensors.Tensor, i int) *tensors.Tensor {
	checkTensor("Index", "a", a)
	if a.Rank() == 0 {
		failf("Index", "invalid index of a 0-dim tensor (a is []); use eager.Item to read its value")
	}
	n := a.Shape().Dimensions[0]
	if i < -n || i >= n {
		failf("Index", "index %d is out of bounds for dimension 0 with size %d (a is %s)", i, n, desc(a, false))
	}
	if i < 0 {
		i += n
	}
	outDims := dimsOf(a)[1:]
	if product(outDims) == 0 {
		return emptyTensor(a, outDims)
	}
	return run1("index", fmt.Sprint(i), func(xs []*graph.Node) *graph.Node {
		x := graph.SliceAxis(xs[0], 0, graph.AxisElem(i))
		return graph.Reshape(x, outDims...)
	}, a)
}

// Slice is a[..., start:end] along dimension dim (a[:, start:end] for dim=1): Python's slice
// rules, so negative start/end count from the end and out-of-range bounds are clamped; an empty
// range gives a dimension of size 0.
func Slice(a *tensors.Tensor, dim, start, end int) *tensors.Tensor {
	checkTensor("Slice", "a", a)
	if a.Rank() == 0 {
		failf("Slice", "cannot slice a 0-dim tensor (a is [])")
	}
	d := normDim("Slice", "dim", dim, a.Rank(), a)
	n := a.Shape().Dimensions[d]
	clamp := func(v int) int {
		if v < 0 {
			v += n
		}
		return min(max(v, 0), n)
	}
	s, e := clamp(start), clamp(end)
	e = max(e, s)
	if s == 0 && e == n {
		return a
	}
	outDims := dimsOf(a)
	outDims[d] = e - s
	if product(outDims) == 0 {
		return emptyTensor(a, outDims)
	}
	return run1("slice", fmt.Sprint(d, s, e), func(xs []*graph.Node) *graph.Node {
		return graph.SliceAxis(xs[0], d, graph.AxisRange(s, e))
	}, a)
}
