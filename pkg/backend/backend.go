// Package backend picks the GoMLX backend that attnbook's notebooks, modules and tests share.
//
// The rule, in order:
//
//  1. $GOMLX_BACKEND, when set, is honoured as GoMLX documents it ("go", "xla:cpu", "xla:cuda",
//     "xla:/abs/path/plugin.so").
//  2. XLA when a PJRT plugin is installed locally: CUDA when an NVIDIA GPU and a CUDA plugin are
//     present (go-xla's search path, or JAX's pip package jax-cuda*-pjrt), else the CPU plugin.
//  3. Otherwise the pure-Go backend (github.com/gomlx/compute/gobackend), configured by
//     [GoConfig]. Whether its SIMD matrix kernels are in: [SIMD].
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
	"runtime"
	"slices"
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
		c.Config, c.Reason = GoConfig(), "built without XLA (-tags noxla): no PJRT plugin was installed at setup"
	default:
		c.Config, c.Reason = GoConfig(), fmt.Sprintf("no XLA PJRT plugin installed; set $%s to override", EnvVar)
	}
	return c
}

// GoConfig is the pure-Go backend's configuration on this machine: "go", or on a machine with
// fewer than 8 cores (GOMAXPROCS) "go:num_executors=N" with N = GOMAXPROCS.
//
// The backend runs independent ops of a graph on NumExecutors goroutines (default 8) taken from
// the same pool of 2·GOMAXPROCS worker slots that an op's own parallel work (a matrix product's
// row blocks, a softmax's rows) needs. With more executors than cores, the executors hold the
// slots, large products run on one core while small ops time-share the others. One executor per
// core leaves the other half of the slots to the ops. Measured on a 2-core AMD EPYC Zen 4
// (2026-11-27, BenchmarkTrainStep in pkg/gpt, 200 steps, four alternations, the same graph):
// nanoGPT's training step 76–90 ms with the default, 59–66 ms with num_executors=2; the chapter's
// multi-head forward at 8×1024×768×12 866 → 515 ms (docs/benchmarks.md). Machines with 8 or more
// cores keep gobackend's default (not measured here).
func GoConfig() string {
	if n := runtime.GOMAXPROCS(0); n < gobackendExecutors {
		return fmt.Sprintf("go:num_executors=%d", n)
	}
	return "go"
}

// gobackendExecutors is gobackend's default number of executors (DefaultNumExecutors in
// compute's internal/gobackend, v0.1.14).
const gobackendExecutors = 8

// jaxCUDAPlugins finds JAX's CUDA PJRT plugin (pip package jax-cuda12-pjrt / jax-cuda13-pjrt),
// which go-xla does not search for, in the usual Python package folders.
func jaxCUDAPlugins() []string {
	home, _ := os.UserHomeDir()
	return jaxCUDAPluginsIn(home, os.Getenv("PATH"), os.Getenv("VIRTUAL_ENV"))
}

// jaxCUDAPluginsIn searches the user's site-packages under home, the system's, those under
// /opt/*, the virtual environment virtualEnv and every virtual environment whose bin folder is
// on pathList (a folder X/bin with X/pyvenv.cfg: the python3 a user runs, activated or not).
func jaxCUDAPluginsIn(home, pathList, virtualEnv string) []string {
	var roots []string
	if home != "" {
		roots = append(roots, filepath.Join(home, ".local/lib/python3*/site-packages"))
	}
	roots = append(roots, "/usr/lib/python3*/*-packages", "/usr/local/lib/python3*/*-packages",
		"/opt/*/lib/python3*/site-packages")
	venvs := filepath.SplitList(pathList)
	for i, dir := range venvs {
		venvs[i] = filepath.Dir(filepath.Clean(dir))
	}
	if virtualEnv != "" {
		venvs = append([]string{filepath.Clean(virtualEnv)}, venvs...)
	}
	for _, venv := range venvs {
		if _, err := os.Stat(filepath.Join(venv, "pyvenv.cfg")); err == nil {
			roots = append(roots, filepath.Join(venv, "lib/python3*/site-packages"))
		}
	}
	var found []string
	for _, root := range roots {
		matches, _ := filepath.Glob(filepath.Join(root, "jax_plugins/xla_cuda*/xla_cuda_plugin.so"))
		for _, m := range matches {
			if !slices.Contains(found, m) {
				found = append(found, m)
			}
		}
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

// IsGo reports whether b is the pure-Go backend (its String is gobackend.BackendName, "go").
func IsGo(b compute.Backend) bool { return b.String() == "go" }

// Chosen is the Choice behind Default (after Default has been called; else Choose()).
func Chosen() Choice {
	if shared == nil && sharedErr == nil {
		return Choose()
	}
	return sharedChoice
}

// newBackend is compute.NewWithConfig of cudaConfig(config) with its panics (unknown backend
// name) turned into errors.
func newBackend(config string) (b compute.Backend, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	config, quiet := cudaConfig(config, dirExists)
	if quiet && os.Getenv(cudaChecksEnvVar) == "" {
		os.Setenv(cudaChecksEnvVar, "0")
	}
	return compute.NewWithConfig(config)
}

// cudaChecksEnvVar switches off go-xla's check for NVIDIA's libraries beside a CUDA plugin.
const cudaChecksEnvVar = "GOPJRT_CUDA_CHECKS"

// cudaConfig adjusts an XLA configuration whose plugin is a CUDA one (its name or path says
// "cuda" or "nvidia", as go-xla's pjrt.IsCUDAName decides) in two ways:
//
//   - Float32 products at full float32 precision: go-xla v0.4.13 multiplies float32 on CUDA in
//     TF32 (10-bit mantissa) unless the configuration says otherwise; PyTorch does not
//     (torch.backends.cuda.matmul.allow_tf32 is off by default), and the course prints PyTorch's
//     numbers. On an NVIDIA H200 (JAX's CUDA 13 plugin) TF32 put the chapter's attention output
//     3.6e-4 (normwise relative) away from PyTorch's. So ",notf32" is added unless the
//     configuration already says "tf32" or "notf32" (",tf32" keeps GoMLX's fast default).
//   - quiet reports a JAX plugin in a Python environment's layout (site-packages/jax_plugins/
//     xla_cuda*/xla_cuda_plugin.so with NVIDIA's wheels in site-packages/nvidia, which the plugin
//     finds by its own RPATH): go-xla looks for the libraries one folder lower only and warns
//     that they are missing when they are not. The caller then sets GOPJRT_CUDA_CHECKS=0.
func cudaConfig(config string, isDir func(string) bool) (adjusted string, quiet bool) {
	name, rest, _ := strings.Cut(config, ":")
	if name != "xla" {
		return config, false
	}
	plugin, options, _ := strings.Cut(rest, ",")
	if up := strings.ToUpper(plugin); !strings.Contains(up, "CUDA") && !strings.Contains(up, "NVIDIA") {
		return config, false
	}
	adjusted = config
	saysTF32 := func(o string) bool { return o == "tf32" || o == "notf32" || strings.HasPrefix(o, "tf32=") }
	if !slices.ContainsFunc(strings.Split(options, ","), saysTF32) {
		adjusted += ",notf32"
	}
	if filepath.IsAbs(plugin) && filepath.Base(filepath.Dir(filepath.Dir(plugin))) == "jax_plugins" {
		quiet = isDir(filepath.Join(filepath.Dir(plugin), "../../nvidia"))
	}
	return adjusted, quiet
}

func dirExists(dir string) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir()
}

// New starts the backend of config as Default starts its choice: GoMLX's panics (an unknown
// backend name) turned into errors, nothing downloaded, float32 products on CUDA at full
// precision as PyTorch's (no TF32: cudaConfig). For programs that compare several
// backends side by side (the benchmark); notebooks use Default.
//
// The pure-Go backend starts as config says; Default gives it [GoConfig]. (Until compute v0.1.6
// attnbook started it as "go:parallelism=-1,ops_parallel": with its default worker-slot limit, a
// graph with more independent large products than 2·GOMAXPROCS slots deadlocked. v0.1.14 runs
// them: TestManyIndependentProducts.)
func New(config string) (compute.Backend, error) { return newBackend(config) }

// MustDefault is Default for notebook cells and tests: it panics with Default's error.
func MustDefault() compute.Backend {
	b, err := Default()
	if err != nil {
		panic(err)
	}
	return b
}
