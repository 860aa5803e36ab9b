package backend

import (
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/attnbook/attnbook/internal/sgemm"
	"github.com/gomlx/compute/dtypes"
)

// This file puts internal/sgemm behind the pure-Go backend's float32 DotGeneral. compute v0.1.14
// keeps its DotGeneral kernels in a registry of an internal package
// (internal/gobackend/dot: FindRegisteredImplementation returns a *ImplementationRegistration
// whose implFn field holds a DotGeneralExecFn[float32, float32]); it has no public way to add
// one. installSgemm looks both float32 entries up through a linkname, checks the function's
// signature by reflection, keeps compute's function and puts sgemmDot in its place: the products
// useSgemm accepts go to sgemm, the others to compute's function.

// hookedCompute is the compute version whose internals this file mirrors: attnbook's go.mod
// requires it (TestHookedComputeIsRequired), and a program that links another one (a module
// that imports attnbook and upgrades compute) leaves sgemm out.
const hookedCompute = "v0.1.14"

// computeVersion is the github.com/gomlx/compute version this program was built with ("" when
// the build records no dependencies, as in test binaries: go.mod's requirement holds there).
func computeVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/gomlx/compute" {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return ""
}

// dotRegistration mirrors compute v0.1.14's dot.ImplementationRegistration.
type dotRegistration struct {
	name     string
	implFn   any
	priority int
}

//go:linkname findDotRegistration github.com/gomlx/compute/internal/gobackend/dot.FindRegisteredImplementation
func findDotRegistration(layout int, inputDType, outputDType dtypes.DType) *dotRegistration

// dotFunc mirrors dot.DotGeneralExecFn[float32, float32]: backend is a *gobackend.Backend;
// lhs [batch, m, k], rhs [batch, k, n] (layout 0) or [batch, n, k] (layout 1), output [batch, m, n];
// nodeData is the product's *dot.NodeData (compute may cache packed operands in it; nil is accepted).
type dotFunc func(backend unsafe.Pointer, layout int, lhs, rhs []float32, batch, m, n, k int, output []float32, nodeData unsafe.Pointer)

// compute's dot layouts (dot.LayoutNonTransposed, dot.LayoutTransposed).
const (
	layoutNonTransposed = 0
	layoutTransposed    = 1
)

var (
	sgemmOnce  sync.Once
	sgemmState string          // what installSgemm did, for SIMD's detail
	computeDot [2]dotFunc      // compute's float32 functions, by layout
	sgemmUsed  [2]atomic.Int64 // products sgemmDot handed to sgemm, by layout (tests)
)

// installSgemm puts sgemmDot in front of compute's float32 DotGeneral, once per process, unless
// the CPU has no kernel for it or $ATTNBOOK_SGEMM is off. It changes nothing when compute's registry
// does not look as expected (another compute version), and says so in sgemmState.
func installSgemm() {
	sgemmOnce.Do(func() {
		switch {
		case !sgemm.Available():
			sgemmState = sgemmOff + "the CPU has neither AVX-512 nor AVX2 with FMA (or $GOMLX_GO_SIMD_AVX512/$GOMLX_GO_SIMD_AVX2 switch them off)"
			return
		case matmulSwitchedOff():
			sgemmState = sgemmOff + "$" + MatmulEnv + " switches it off"
			return
		case computeVersion() != "" && computeVersion() != hookedCompute:
			sgemmState = sgemmOff + "this program links github.com/gomlx/compute " + computeVersion() + ", the hook knows " + hookedCompute
			return
		}
		var regs [2]*dotRegistration
		for layout := range regs {
			reg := findDotRegistration(layout, dtypes.Float32, dtypes.Float32)
			if err := checkDotRegistration(reg); err != nil {
				sgemmState = fmt.Sprintf(sgemmOff+"compute's float32 DotGeneral (layout %d) is not the %s one this hook knows: %v", layout, hookedCompute, err)
				return
			}
			regs[layout] = reg
		}
		for layout, reg := range regs {
			iface := (*[2]unsafe.Pointer)(unsafe.Pointer(&reg.implFn)) // type word, data word: the func value
			computeDot[layout] = *(*dotFunc)(unsafe.Pointer(&iface[1]))
			replacement := dotFunc(sgemmDot)
			iface[1] = *(*unsafe.Pointer)(unsafe.Pointer(&replacement))
		}
		sgemmState = fmt.Sprintf("float32 products of %d multiply-adds or more (at least 12 rows, 16 columns) on attnbook's %s kernel (internal/sgemm), smaller ones on compute's %q", sgemmMinFMAs, sgemm.Kernel(), regs[0].name)
	})
}

// checkDotRegistration checks that reg's implFn is a function with DotGeneralExecFn[float32,
// float32]'s signature, so that calling it as a dotFunc is sound.
func checkDotRegistration(reg *dotRegistration) error {
	if reg == nil {
		return fmt.Errorf("none registered")
	}
	t := reflect.TypeOf(reg.implFn)
	f32 := reflect.TypeOf([]float32(nil))
	if t == nil || t.Kind() != reflect.Func || t.NumIn() != 10 || t.NumOut() != 0 {
		return fmt.Errorf("implFn is %v", t)
	}
	want := []reflect.Kind{reflect.Pointer, reflect.Int, reflect.Slice, reflect.Slice, reflect.Int, reflect.Int, reflect.Int, reflect.Int, reflect.Slice, reflect.Pointer}
	for i, kind := range want {
		in := t.In(i)
		if in.Kind() != kind || (kind == reflect.Slice && in != f32) {
			return fmt.Errorf("implFn is %v: argument %d is %v", t, i, in)
		}
	}
	return nil
}

// sgemmDot is the float32 DotGeneral the pure-Go backend calls once installSgemm has run.
func sgemmDot(backend unsafe.Pointer, layout int, lhs, rhs []float32, batch, m, n, k int, output []float32, nodeData unsafe.Pointer) {
	if useSgemm(batch, m, n, k) && (layout == layoutNonTransposed || layout == layoutTransposed) {
		sgemm.Multiply(lhs, rhs, layout == layoutTransposed, batch, m, n, k, output, runtime.GOMAXPROCS(0))
		sgemmUsed[layout].Add(1)
		return
	}
	computeDot[layout](backend, layout, lhs, rhs, batch, m, n, k, output, nodeData)
}
