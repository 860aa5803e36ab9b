package sgemm

import (
	"sync"

	"github.com/gomlx/compute/support/envutil"
	"golang.org/x/sys/cpu"
)

// kernel is a micro-kernel and its output tile: c[mr][nr] (+)= a[mr rows, stride lda][:k] ·
// b[k][nr], b packed, c with a row stride of ldc.
type kernel struct {
	name   string
	mr, nr int
	run    func(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)
}

//go:noescape
func kernel12x32(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)

//go:noescape
func kernel6x16(k int, a *float32, lda int, b, c *float32, ldc int, accumulate bool)

func cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32)

// hasFMA reports whether the CPU has FMA3 (CPUID.1:ECX bit 12) and the OS saves YMM registers.
// It asks CPUID itself: cpu.X86.HasFMA follows GODEBUG, and attnbook runs its programs with
// GODEBUG=cpu.fma=off to keep math.Exp off its FMA path (pkg/backend's ExpGODEBUG), which must
// not switch the AVX2 kernel off.
func hasFMA() bool {
	_, _, ecx, _ := cpuid(1, 0)
	return cpu.X86.HasAVX && ecx&(1<<12) != 0
}

var (
	avx512 = &kernel{"AVX-512 (12×32 tiles)", 12, 32, kernel12x32}
	avx2   = &kernel{"AVX2 (6×16 tiles)", 6, 16, kernel6x16}
	// best is the kernel this CPU runs: AVX-512F (with the OS's ZMM support), else AVX2 + FMA.
	// $GOMLX_GO_SIMD_AVX512 and $GOMLX_GO_SIMD_AVX2 switch each off, as they do GoMLX's own kernels
	// (a malformed value is GoMLX's to report: compute's gobackend stops the program on it).
	best = func() *kernel {
		avx512On, _ := envutil.ReadBool(envutil.GoBackendSIMD_AVX512, true)
		avx2On, _ := envutil.ReadBool(envutil.GoBackendSIMD_AVX2, true)
		switch {
		case cpu.X86.HasAVX512F && avx512On:
			return avx512
		case cpu.X86.HasAVX2 && hasFMA() && avx2On:
			return avx2
		}
		return nil
	}()
)

// Available reports whether [Multiply] can run here: an amd64 CPU with AVX-512F, or AVX2 and
// FMA, that the operating system lets use those registers.
func Available() bool { return best != nil }

// Kernel names the micro-kernel [Multiply] uses here, e.g. "AVX-512 (12×32 tiles)"; "" when none.
func Kernel() string {
	if best == nil {
		return ""
	}
	return best.name
}

// multiply is Multiply's work with kernel kern, after its checks (k ≥ 1, workers ≥ 1).
func (kern *kernel) multiply(lhs, rhs []float32, rhsTransposed bool, batch, m, n, k int, out []float32, workers int) {
	parallel(batch, m, kern.mr, workers, func(b, rowStart, rowEnd int, scratch *buffers) {
		kern.multiplyRows(lhs[b*m*k:(b+1)*m*k], rhs[b*k*n:(b+1)*k*n], rhsTransposed, m, n, k,
			rowStart, rowEnd, out[b*m*n:(b+1)*m*n], scratch)
	})
}

// buffers is one worker's packing space, sized for the largest kernel (12×32).
type buffers struct {
	b     []float32        // a panel of the right operand: slivers of [kc][nr]
	edgeA [12 * kc]float32 // the last rows of the left operand when fewer than mr, zero-padded
	edgeC [12 * 32]float32 // an output tile that overhangs the matrix
}

var bufferPool = sync.Pool{New: func() any { return new(buffers) }}

// parallel calls work for every batch item and part of its rows, spread over the workers in
// equal shares: each item's rows are cut into workers/gcd(batch, workers) parts (multiples of mr
// rows), so that the batch·parts pieces divide evenly among the workers. Each piece packs the
// right operand itself.
func parallel(batch, m, mr, workers int, work func(b, rowStart, rowEnd int, scratch *buffers)) {
	type item struct{ b, rowStart, rowEnd int }
	gcd := func(a, b int) int {
		for b != 0 {
			a, b = b, a%b
		}
		return a
	}
	parts := min(workers/gcd(batch, workers), (m+mr-1)/mr)
	rowsPerPart := ((m+parts-1)/parts + mr - 1) / mr * mr
	var items []item
	for b := range batch {
		for r := 0; r < m; r += rowsPerPart {
			items = append(items, item{b, r, min(r+rowsPerPart, m)})
		}
	}
	workers = min(workers, len(items))
	run := func(w int) {
		scratch := bufferPool.Get().(*buffers)
		defer bufferPool.Put(scratch)
		for i := w; i < len(items); i += workers {
			work(items[i].b, items[i].rowStart, items[i].rowEnd, scratch)
		}
	}
	if workers == 1 {
		run(0)
		return
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() { run(w) })
	}
	run(0)
	wg.Wait()
}

// multiplyRows computes rows [rowStart, rowEnd) of out = lhs · rhs for one matrix.
func (kern *kernel) multiplyRows(lhs, rhs []float32, rhsTransposed bool, m, n, k, rowStart, rowEnd int, out []float32, s *buffers) {
	mr, nr := kern.mr, kern.nr
	for j0 := 0; j0 < n; j0 += nc {
		ncb := min(nc, n-j0)
		panelCols := (ncb + nr - 1) / nr * nr
		if cap(s.b) < kc*panelCols {
			s.b = make([]float32, kc*min(nc, (n+nr-1)/nr*nr))
		}
		for p0 := 0; p0 < k; p0 += kc {
			kcb := min(kc, k-p0)
			packB(s.b, rhs, rhsTransposed, n, k, j0, ncb, p0, kcb, nr)
			for i0 := rowStart; i0 < rowEnd; i0 += mc {
				mcb := min(mc, rowEnd-i0)
				accumulate := p0 > 0
				// The block's last sliver, when it has fewer than mr rows, is read from a
				// zero-padded copy made once for all the slivers of the right operand.
				var edgeA *float32
				if full := mcb / mr * mr; full < mcb {
					edgeA = s.padRows(lhs, k, i0+full, mcb-full, mr, p0, kcb)
				}
				for jr := 0; jr < ncb; jr += nr {
					bSliver := &s.b[jr*kcb]
					cols := min(nr, ncb-jr)
					for ir := 0; ir < mcb; ir += mr {
						rows := min(mr, mcb-ir)
						a, lda := edgeA, kcb
						if rows == mr {
							a, lda = &lhs[(i0+ir)*k+p0], k
						}
						c := (i0+ir)*n + j0 + jr
						if rows == mr && cols == nr {
							kern.run(kcb, a, lda, bSliver, &out[c], n, accumulate)
							continue
						}
						kern.run(kcb, a, lda, bSliver, &s.edgeC[0], nr, false)
						for r := range rows {
							dst := out[c+r*n : c+r*n+cols]
							src := s.edgeC[r*nr : r*nr+cols]
							if accumulate {
								for j, v := range src {
									dst[j] += v
								}
							} else {
								copy(dst, src)
							}
						}
					}
				}
			}
		}
	}
}

// padRows copies rows [i, i+rows) and columns [p0, p0+kcb) of lhs ([m, k]) into s.edgeA as
// [mr, kcb] with the missing rows zero, for the kernel, which reads mr rows.
func (s *buffers) padRows(lhs []float32, k, i, rows, mr, p0, kcb int) *float32 {
	for r := range mr {
		dst := s.edgeA[r*kcb : (r+1)*kcb]
		if r < rows {
			copy(dst, lhs[(i+r)*k+p0:(i+r)*k+p0+kcb])
		} else {
			clear(dst)
		}
	}
	return &s.edgeA[0]
}

// packB copies columns [j0, j0+ncb) and rows [p0, p0+kcb) of the right operand ([k, n], or
// [n, k] when transposed) into dst as slivers of nr columns, each [kcb][nr], columns past ncb zero.
func packB(dst, rhs []float32, transposed bool, n, k, j0, ncb, p0, kcb, nr int) {
	var zeros [kc]float32
	for jr := 0; jr < ncb; jr += nr {
		sliver := dst[jr*kcb : jr*kcb+kcb*nr]
		cols := min(nr, ncb-jr)
		if !transposed {
			for p := range kcb {
				row := sliver[p*nr : p*nr+nr]
				start := (p0+p)*n + j0 + jr
				copy(row, rhs[start:start+cols])
				clear(row[cols:])
			}
			continue
		}
		var rowsBuf [32][]float32
		rows := rowsBuf[:nr]
		for c := range rows {
			rows[c] = zeros[:kcb]
			if c < cols {
				start := (j0+jr+c)*k + p0
				rows[c] = rhs[start : start+kcb]
			}
		}
		for p := range kcb {
			d := sliver[p*nr : p*nr+nr : p*nr+nr]
			for c := range d {
				d[c] = rows[c][p]
			}
		}
	}
}
