// Package torchrand reproduces PyTorch's CPU random numbers bit for bit, in pure Go.
//
// A Generator holds the state of torch's default CPU generator: a 32-bit Mersenne Twister
// (MT19937, seeded like torch.manual_seed) plus the one cached normal value of the small randn
// path. Its methods draw exactly what the matching PyTorch call draws, in the same order, and
// return the same float32 bit patterns:
//
//	torch.manual_seed(s)                  New(s), (*Generator).ManualSeed
//	torch.rand(*dims)                     Rand, FillRand
//	torch.rand(*dims, dtype=float64)      Float64s
//	torch.randn(*dims)                    Randn, FillRandn
//	tensor.uniform_(from, to)             Uniform
//	tensor.normal_(mean, std)             Normal
//	nn.Linear(in, out, bias) init         Linear
//	nn.Dropout(p) in training mode        Dropout, DropoutMask
//
// So a notebook that seeds a Generator with the seed of a PyTorch notebook and builds its layers
// in the same order gets the same weights, the same dropout masks and the same printed numbers.
// The algorithms, and the tests that pin them, are described in specs/torch-rng.md; the goldens
// in testdata/ were produced by testdata/gen_goldens.py with PyTorch 1.13.
//
// # Which PyTorch
//
// The reference is PyTorch's CPU path on x86-64 with its AVX2 kernels, built without MKL (Debian's
// python3-torch, and the path that produced the seed documents' numbers). Elsewhere PyTorch
// itself draws other numbers, and this package does not follow it there:
//
//   - PyTorch wheels built with MKL, on Intel CPUs, draw dropout (bernoulli_) masks from MKL's
//     own stream, seeded by one draw of the generator: other masks than here.
//   - On arm64 (Apple silicon, aarch64 Linux) randn of 16 or more elements uses the platform's
//     libm log/sin/cos instead of the AVX2 polynomials: values 1–3 ulp away from here.
//   - PyTorch's float64 randn is computed with glibc's libm; Go's math differs by 1–3 ulp there.
//     This package only offers float32 normals (whose small path, computed in float64 and
//     rounded, matches).
//
// The numbers do not depend on GOARCH, GOAMD64 or the number of threads: every product that
// PyTorch rounds is rounded explicitly, and the fused multiply-adds of the AVX2 kernels are
// computed by a correctly rounded float32 FMA.
//
// # Errors
//
// Bad arguments (negative dimensions, p outside [0, 1], non-positive Linear sizes, a nil or
// non-float32 tensor, ...) panic with an *ArgumentError whose message names the function and the
// argument, like "torchrand.Dropout: p must be in [0, 1], got NaN". Zero-sized dimensions are
// legal, as in PyTorch: torch.rand(0) is an empty tensor and draws nothing. Catch turns such a
// panic back into an error.
//
// A Generator is not safe for concurrent use.
package torchrand
