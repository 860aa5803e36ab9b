// Package backend picks the GoMLX backend that attnbook's notebooks, modules and tests share.
//
// The rule, in order:
//
//  1. $GOMLX_BACKEND, when set, is honoured as GoMLX documents it ("go", "xla:cpu", "xla:cuda",
//     "xla:/abs/path/plugin.so").
//  2. XLA when a PJRT plugin is installed locally: CUDA when an NVIDIA GPU and a CUDA plugin are
//     present (go-xla's search path, or JAX's pip package jax-cuda*-pjrt), else the CPU plugin.
//  3. Otherwise the pure-Go backend "go" (github.com/gomlx/compute/gobackend), started with
//     sequential op scheduling (see Default). Whether its SIMD matrix kernels are in: [SIMD].
//
// Nothing is ever downloaded: GoMLX's XLA auto-install is switched off before any backend is made.
//
// Built with `-tags noxla` the XLA backend (and its cgo) is left out: programs link in a fraction
// of the time, which is what notebook cells want on machines without a PJRT plugin. The attnbook
// kernel spec sets that tag when `go run ./kernel setup` finds no plugin.
package backend

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"

	"github.com/gomlx/compute"
	_ "github.com/gomlx/compute/gobackend" // registers "go"
)

// EnvVar is the environment variable that overrides the choice: GoMLX's own GOMLX_BACKEND.
const EnvVar = compute.ConfigEnvVar

// Choice is a backend configuration and the reason it was picked.
type Choice struct {
	Config  string   // GoMLX configuration string, e.g. "go", "xla:cpu", "xla:/path/xla_cuda_plugin.so".
	Reason  string   // One sentence: why this backend.
	Plugins []string // PJRT plugins found locally (names, or absolute paths for JAX's plugins).
	GPU     bool     // Whether an NVIDIA GPU device was seen.
}

// Name is the backend's short name: "go" or "xla".
func (c Choice) Name() string { name, _, _ := strings.Cut(c.Config, ":"); return name }

// String is the one line notebooks and commands print, e.g.
// "backend: go (pure Go) — no XLA PJRT plugin installed; set GOMLX_BACKEND to override".
func (c Choice) String() string {
	what := c.Config
	switch c.Name() {
	case "go":
		what = "go (pure Go)"
	case "xla", "stablehlo", "hlo", "shlo":
		what = c.Config + " (XLA/PJRT)"
	}
	return fmt.Sprintf("backend: %s — %s", what, c.Reason)
}

// Choose applies the rule above to this machine without creating a backend.
func Choose() Choice {
	return choose(os.LookupEnv, localPlugins(), jaxCUDAPlugins(), hasNvidiaGPU())
}

func choose(lookup func(string) (string, bool), plugins, jaxCUDA []string, gpu bool) Choice {
	c := Choice{Plugins: append(append([]string(nil), plugins...), jaxCUDA...), GPU: gpu}
	if cfg, ok := lookup(EnvVar); ok && cfg != "" {
		c.Config, c.Reason = cfg, fmt.Sprintf("set by $%s", EnvVar)
		return c
	}
	has := func(name string) bool {
		for _, p := range plugins {
			if p == name {
				return true
			}
		}
		return false
	}
	switch {
	case gpu && has("cuda"):
		c.Config, c.Reason = "xla:cuda", "an NVIDIA GPU and the CUDA PJRT plugin are installed"
	case gpu && len(jaxCUDA) > 0:
		c.Config, c.Reason = "xla:"+jaxCUDA[0], "an NVIDIA GPU and JAX's CUDA PJRT plugin are installed"
	case has("cpu"):
		c.Config, c.Reason = "xla:cpu", "the XLA CPU PJRT plugin is installed"
		if gpu {
			c.Reason += " (a GPU is present but no CUDA plugin)"
		}
	case !XLACompiled:
		c.Config, c.Reason = "go", "built without XLA (-tags noxla): no PJRT plugin was installed at setup"
	default:
		c.Config, c.Reason = "go", fmt.Sprintf("no XLA PJRT plugin installed; set $%s to override", EnvVar)
	}
	return c
}

// jaxCUDAPlugins finds JAX's CUDA PJRT plugin (pip package jax-cuda12-pjrt / jax-cuda13-pjrt),
// which go-xla does not search for, in the usual Python package folders.
func jaxCUDAPlugins() []string {
	var roots []string
	if home, err := os.UserHomeDir(); err == nil {
		roots = append(roots, filepath.Join(home, ".local/lib/python3*/site-packages"))
	}
	roots = append(roots, "/usr/lib/python3*/*-packages", "/usr/local/lib/python3*/*-packages",
		"/opt/*/lib/python3*/site-packages")
	if venv := os.Getenv("VIRTUAL_ENV"); venv != "" {
		roots = append(roots, filepath.Join(venv, "lib/python3*/site-packages"))
	}
	var found []string
	for _, root := range roots {
		matches, _ := filepath.Glob(filepath.Join(root, "jax_plugins/xla_cuda*/xla_cuda_plugin.so"))
		found = append(found, matches...)
	}
	return found
}

func hasNvidiaGPU() bool {
	matches, _ := filepath.Glob("/dev/nvidia[0-9]*")
	return len(matches) > 0
}

var (
	once         sync.Once
	shared       compute.Backend
	sharedErr    error
	sharedChoice Choice
)

// Default returns the process-wide backend chosen by Choose, creating it on first use.
// The pure-Go backend is started with parallel op scheduling and no limit on its worker slots,
// "go" as "go:parallelism=-1,ops_parallel", because its default slot limit can deadlock (see
// RunConfig).
// It returns an error (never panics, never downloads) when the chosen backend cannot start,
// e.g. GOMLX_BACKEND=xla:cpu without the plugin.
func Default() (compute.Backend, error) {
	once.Do(func() {
		sharedChoice = Choose()
		shared, sharedErr = New(sharedChoice.Config)
		if sharedErr != nil {
			sharedErr = fmt.Errorf("backend %q (%s): %w", sharedChoice.Config, sharedChoice.Reason, sharedErr)
		}
	})
	return shared, sharedErr
}

// Chosen is the Choice behind Default (after Default has been called; else Choose()).
func Chosen() Choice {
	if shared == nil && sharedErr == nil {
		return Choose()
	}
	return sharedChoice
}

// newBackend is backends.NewWithConfig with its panics (unknown backend name) turned into errors.
// A "go" configuration's parallelism=-1 is applied after the backend is made (unlimitedWorkers)
// instead of being passed on: gobackend v0.1.6 prints "Go backend: parallelism set to -1" on
// stdout for that option, which every notebook cell would show.
func newBackend(config string) (b compute.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	name, opts, _ := strings.Cut(config, ":")
	unlimited := false
	if name == "go" {
		installSgemm()
		var kept []string
		for _, o := range strings.Split(opts, ",") {
			if o == "parallelism=-1" {
				unlimited = true
				continue
			}
			kept = append(kept, o)
		}
		config = "go:" + strings.Join(kept, ",")
	}
	b, err = compute.NewWithConfig(config)
	if err == nil && unlimited {
		if err = unlimitedWorkers(b); err != nil {
			b.Finalize()
			b = nil
		}
	}
	return b, err
}

// unlimitedWorkers does what the pure-Go backend's option parallelism=-1 does, without its print:
// it calls SetMaxParallelism(-1) on the backend's worker pool (the exported field Workers of
// gobackend's Backend, which lives in an internal package, hence reflection).
func unlimitedWorkers(b compute.Backend) error {
	v := reflect.ValueOf(b)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	var set reflect.Value
	if v.Kind() == reflect.Struct {
		if w := v.FieldByName("Workers"); w.IsValid() {
			set = w.MethodByName("SetMaxParallelism")
		}
	}
	if !set.IsValid() || set.Type().NumIn() != 1 || set.Type().In(0).Kind() != reflect.Int {
		return fmt.Errorf("backend %q (%T): no Workers.SetMaxParallelism(int) to set parallelism=-1 with; this GoMLX version needs another way", b.String(), b)
	}
	set.Call([]reflect.Value{reflect.ValueOf(-1)})
	return nil
}

// New starts the backend of config as Default starts its choice: RunConfig applied, GoMLX's
// panics (an unknown backend name) turned into errors, nothing downloaded. For programs that
// compare several backends side by side (the benchmark); notebooks use Default.
func New(config string) (compute.Backend, error) { return newBackend(RunConfig(config)) }

// MustDefault is Default for notebook cells and tests: it panics with Default's error.
func MustDefault() compute.Backend {
	b, err := Default()
	if err != nil {
		panic(err)
	}
	return b
}

// RunConfig is the configuration Default starts for a chosen one. A "go" configuration that
// chooses neither its op scheduling nor its worker slots gets unlimited slots and parallel
// scheduling ("go" → "go:parallelism=-1,ops_parallel"); one with parallelism=-1 gets
// ops_parallel; one with a slot limit gets ops_sequential ("go:parallelism=4" →
// "go:parallelism=4,ops_sequential"). An explicit ops_parallel or ops_sequential, and every other
// backend, is left as given.
//
// Why: the pure-Go backend of GoMLX v0.28.8 (github.com/gomlx/compute v0.1.6 gobackend, as GoMLX
// v0.26.0's simplego before it) runs the independent ops of a graph in parallel when it executes
// one graph at a time (its default, "dynamic"), each op holding one of its 2·GOMAXPROCS worker
// slots, and a large matrix product then waits in Workers.Saturate for a free slot for its own
// parallel blocks. When 2·GOMAXPROCS large products become ready at once, every slot is held by a
// product waiting for a slot: a deadlock. Measured here on 2 cores with compute v0.1.6: four
// independent [1024, 64]·[64, 1024] products in one graph hang with "go" and "go:ops_parallel",
// three do not (TestManyIndependentProducts; the -deadlock flag re-runs the bare "go" case).
// Seed 003's 12-head HeadList (36 projections) hits it. Without a slot limit (parallelism=-1)
// nothing waits for a slot: every ready op starts as a goroutine, and a matrix product still
// splits itself over GOMAXPROCS workers. Parallel scheduling then lets the backend's
// single-threaded ops (transposes, elementwise ops, softmax) run side by side on the cores:
// measured on 2 cores against ops_sequential, the chapter's attention forward + backward at
// GPT-2 size took a third less time and the GPT training step of notebook 10 29 % less
// (docs/benchmarks.md), for a third more peak memory.
//
// gobackend v0.1.x accepts, comma-separated after "go:": parallelism=N (worker slots; -1
// unlimited), ops_sequential, ops_parallel, dependency_order and creation_order (the order ops
// are scheduled in).
func RunConfig(config string) string {
	name, opts, _ := strings.Cut(config, ":")
	if name != "go" {
		return config
	}
	var list []string
	parallelism := ""
	for _, o := range strings.Split(opts, ",") {
		switch {
		case o == "":
			continue
		case o == "ops_sequential" || o == "ops_parallel":
			return config
		case strings.HasPrefix(o, "parallelism="):
			parallelism = strings.TrimPrefix(o, "parallelism=")
		}
		list = append(list, o)
	}
	switch parallelism {
	case "":
		list = append(list, "parallelism=-1", "ops_parallel")
	case "-1":
		list = append(list, "ops_parallel")
	default:
		list = append(list, "ops_sequential")
	}
	return "go:" + strings.Join(list, ",")
}
