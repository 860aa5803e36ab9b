// Package eager runs PyTorch-style tensor operations one at a time, so that a Go notebook cell
// can mirror its PyTorch cell line by line:
//
//	scores := inputs @ inputs.T                    scores := eager.MatMul(inputs, eager.T(inputs))
//	weights = torch.softmax(scores, dim=-1)        weights := eager.Softmax(scores, -1)
//	masked = s.masked_fill(mask.bool(), -torch.inf)  masked := eager.MaskedFill(s, eager.Bool(mask), math.Inf(-1))
//
// # Design
//
// Values are GoMLX *tensors.Tensor. Each operation validates its arguments in Go (shapes, dims,
// dtypes), then runs as a tiny GoMLX computation on the process-wide backend of
// github.com/attnbook/attnbook/pkg/backend (pure Go here, XLA where a PJRT plugin is installed).
// The computation is built and compiled once per (operation, static arguments such as dims,
// input shapes and dtypes) and cached for the life of the process; scalar arguments (the s of
// MulScalar, the value of MaskedFill) travel as inputs, so new values don't recompile. On the
// pure-Go backend a cached call costs a few µs to 20 µs (Softmax) and a first call (build and
// compile) a few tens of µs more (see the benchmarks); on XLA compiling is the expensive part,
// which the cache pays once. Small matrix products skip the graph: they are summed on the host
// (see Numerics), so a cell that loops over tokens calling Dot costs well under a µs per call.
// Apply runs any graph function (for instance pkg/attention's) the same way.
//
// Semantics follow PyTorch: broadcasting (aligned on the right, size-1 dimensions repeat, never
// a silent broadcast PyTorch would refuse), negative dims, torch.matmul's 1-D rules, view with one
// inferred -1, and torch's type promotion (int64 + float32 → float32, int64 / int64 → float32
// true division, sums of integers stay int64, a 0-d tensor or a scalar only changes the dtype
// when it is of a higher category). Supported dtypes: float32 and int64 (PyTorch's defaults),
// bool for masks, and float64/int32 where they arrive. Operations never modify their inputs:
// PyTorch's in-place forms (masked_fill_, +=) become assignments of the result.
//
// Bad input panics with an error naming the function, the argument and the shapes, e.g.
//
//	eager.MatMul: a [6 3] and b [6 3]: inner dimensions 3 and 6 differ
//	eager.View: cannot view [12] as [5 -1]: 12 elements can't be split into blocks of 5
//	eager.Transpose: dim1=3 out of range for rank 2 (a is [2 3]; expected -2 to 1)
//
// Contiguity is not a concept here: GoMLX tensors are dense and row-major with no strided views,
// so View never needs Contiguous first, View and Reshape are the same, and Contiguous returns its
// argument.
//
// # Names
//
//	PyTorch                              eager
//	torch.tensor([[0.43, 0.15]])         Tensor([][]float64{{0.43, 0.15}})  (float32, like torch)
//	torch.ones(2, 3) / zeros / full      Ones(2, 3) / Zeros(2, 3) / Full(v, 2, 3)
//	torch.arange(n)                      Arange(n)  (int64)
//	a @ b, torch.matmul(a, b)            MatMul(a, b)
//	a.dot(b), torch.dot(a, b)            Dot(a, b)
//	a.T / a.mT                           T(a) / MT(a)
//	a.transpose(0, 1)                    Transpose(a, 0, 1)
//	a.permute(2, 0, 1)                   Permute(a, 2, 0, 1)
//	a.view(2, -1, 3) / a.reshape(...)    View(a, 2, -1, 3) / Reshape(a, ...)
//	a.contiguous()                       Contiguous(a)
//	a.unsqueeze(0), a[None, :]           Unsqueeze(a, 0)
//	a.squeeze(1)                         Squeeze(a, 1)
//	torch.stack((a, b), dim=0)           Stack(0, a, b)
//	torch.cat([a, b], dim=-1)            Cat(-1, a, b)
//	a[i]                                 Index(a, i)
//	a[:, 1:3] (dim 1)                    Slice(a, 1, 1, 3)
//	a + b, a - b, a * b, a / b, a ** b   Add, Sub, Mul, Div, Pow
//	a + 2, a * 0.5, a / d_k**0.5, a**2   AddScalar, SubScalar, MulScalar, DivScalar, PowScalar
//	-a, torch.exp, torch.sqrt, abs, ~a   Neg, Exp, Sqrt, Abs, Not
//	a.sum(dim=-1, keepdim=True)          Sum(a, -1, true)
//	a.sum()                              SumAll(a)
//	a.mean(dim), a.max(dim).values       Mean(a, dim, keep), Max(a, dim, keep)
//	a.max(), a.argmax(dim)               MaxAll(a), ArgMax(a, dim, keep)
//	torch.softmax(a, dim=-1)             Softmax(a, -1)
//	a.masked_fill(mask, -torch.inf)      MaskedFill(a, mask, math.Inf(-1))
//	torch.triu(a, diagonal=1) / tril     Triu(a, 1) / Tril(a, 0)
//	mask == 0                            Eq(mask, 0)
//	a.float() / a.long() / a.bool()      Float(a) / Long(a) / Bool(a); To(a, dtype)
//	nn.Linear forward, F.linear          Linear(x, weight, bias)  (bias may be nil)
//	a.item()                             Item(a)
//	torch.allclose(a, b)                 AllClose(a, b, 1e-5, 1e-8)
//	a.shape                              Shape(a)
//
// # Numerics
//
// Operations that only move, select, compare or mask values, and all integer arithmetic, are
// exact. Float32 element-wise arithmetic is IEEE-exact, as in PyTorch. Sums of products (Dot,
// MatMul, Linear) of up to 2^18 multiply-adds are computed in Go on the host, adding the float32
// products one by one, left to right, which is what PyTorch's CPU kernels do with Debian's
// reference BLAS: seed 001's x_0.dot(query) = 0.9544000625610352 and every other matrix product
// of the seeds come out bit for bit, on every backend and whatever order the backend's own
// matmul kernels use. Larger products run on the backend's DotGeneral (GoMLX's AVX2/AVX-512
// kernels when built with GOEXPERIMENT=simd, XLA where installed) and differ from PyTorch in
// the last bits, as do PyTorch builds with MKL or OpenBLAS: at the seeds' sizes that path lands up
// to 16 ulp (relative 1.3e-6) away, with or without the SIMD kernels (TestProductULPsDotGeneral).
// Linear adds the bias after the sum, as PyTorch does. Sum follows PyTorch's order for fewer
// than 8 elements along the last dimension and adds left to right otherwise; Softmax agrees
// with PyTorch to 2 ulp (its vectorized exp rounds differently). On XLA the backend chooses
// the order of sums: on an NVIDIA H200 (xla:cuda) sums, means and softmax land up to 6 ulp from
// PyTorch's CPU results (relative 5.1e-7), within the course's 1e-6 (TestOtherULPs).
package eager
