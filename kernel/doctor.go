package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/attnbook/attnbook/kernel/internal/thptools"
	"github.com/attnbook/attnbook/pkg/backend"
)

// check is one line of doctor's report.
type check struct {
	Name, Value string
	Problem     string // empty when fine; else what is wrong and how to fix it
	Optional    bool   // a problem that does not fail doctor
}

func cmdDoctor(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: go run ./kernel doctor\n\nShows versions, the GoMLX backend notebooks get and why, whether cells get GoMLX's SIMD kernels,\nevery attnbook kernel spec and the checkout it serves, XLA plugins and the GPU.\nMarks: ok = in place, -- = optional and missing, MISSING = required (exit 3).")
	}
	if code, done := parseFlags(fs, args, e.Stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	fmt.Fprintf(e.Stdout, "doctor: attnbook at %s\n", e.Root)
	checks := doctorChecks(ctx, e)
	missing := 0
	for _, c := range checks {
		mark := c.Mark()
		if mark == markMissing {
			missing++
		}
		fmt.Fprintf(e.Stdout, "  %-8s %-10s %s\n", mark, c.Name, c.Value)
		if c.Problem != "" {
			fmt.Fprintf(e.Stdout, "  %-8s %-10s %s\n", "", "", c.Problem)
		}
	}
	if missing > 0 {
		fmt.Fprintf(e.Stderr, "doctor: %d required part(s) missing: run go run ./kernel setup (details above)\n", missing)
		return exitMissing
	}
	fmt.Fprintln(e.Stdout, "doctor: everything required is in place")
	return exitOK
}

// Doctor's marks: one style for every line.
const (
	markOK       = "ok"      // in place
	markOptional = "--"      // optional and missing (the line below says what it would add)
	markMissing  = "MISSING" // required and missing: doctor exits 3
)

// Mark is the check's mark in doctor's report.
func (c check) Mark() string {
	switch {
	case c.Problem == "":
		return markOK
	case c.Optional:
		return markOptional
	}
	return markMissing
}

func doctorChecks(ctx context.Context, e *env) []check {
	var cs []check
	built := runtime.Version()
	cs = append(cs, check{Name: "Go", Value: fmt.Sprintf("%s (%s); this command was built with %s", e.Go.GOVERSION, e.Go.GoBinary(), built)})
	if _, _, err := checkGo(e); err != nil {
		cs[0].Problem = err.Error()
	}
	for _, t := range goTools(e.Go.GOVERSION) {
		c := check{Name: t.Name, Optional: !t.Required}
		have := t.Installed(e)
		switch {
		case have == "":
			c.Value = "not installed (" + t.Why + ")"
			c.Problem = fmt.Sprintf("want %s in %s: go %s", t.Version, e.Go.ToolDir(), strings.Join(t.Install, " "))
		case have != t.Version:
			c.Value = fmt.Sprintf("%s at %s", have, t.Path(e))
			c.Problem = fmt.Sprintf("want %s: go %s", t.Version, strings.Join(t.Install, " "))
		default:
			c.Value = fmt.Sprintf("%s at %s", have, t.Path(e))
		}
		cs = append(cs, c)
	}

	py := probePython(ctx)
	jc := check{Name: "Jupyter"}
	switch {
	case py == nil:
		jc.Value = "no Python found"
	default:
		server := py.Server()
		if server == "" {
			server = "no Jupyter server"
		}
		jc.Value = fmt.Sprintf("%s; jupyter_client %s, nbclient %s (Python %s at %s)", server,
			orNone(py.Packages["jupyter_client"]), orNone(py.Packages["nbclient"]), py.Version, py.Path)
	}
	if py == nil || !py.CanServe() || !py.CanRun() {
		cmdline, _ := jupyterInstallCommand()
		jc.Problem = "need a Jupyter server and nbclient: " + cmdline
	}
	cs = append(cs, jc)
	cs = append(cs, kernelSpecCheck(e, py))
	cs = append(cs, otherSpecChecks(e, py)...)
	cs = append(cs, simdCheck(ctx, e, py))

	gomlx, goxla := depVersion("github.com/gomlx/gomlx"), depVersion("github.com/gomlx/go-xla")
	if gomlx == "unknown" { // not linked into this command: what go.mod pins
		gomlx = moduleRequire(filepath.Join(e.Root, "go.mod"), "github.com/gomlx/gomlx")
	}
	cs = append(cs, check{Name: "GoMLX", Value: fmt.Sprintf("%s (go-xla %s)", gomlx, goxla)})
	mc := check{Name: "modules", Value: "every module go.mod requires is in the module cache (cells run offline)"}
	if err := modulesOffline(ctx, e); err != nil {
		mc.Value, mc.Problem = err.Error(), "download them: go run ./kernel setup"
	}
	cs = append(cs, mc)

	choice := backend.Choose()
	how := "cells link XLA too"
	if wantNoXLA() {
		how = "cells build with -tags=noxla and CGO_ENABLED=0 to link fast; run setup again after installing a PJRT plugin"
	}
	cs = append(cs, check{Name: "backend", Value: choice.String() + " (what a notebook gets: " + strconv.Quote(choice.Config) + ", same environment, GOMLX_NO_AUTO_INSTALL=1; " + how + ")"})
	cpu, cuda := "not installed", "not installed"
	for _, p := range choice.Plugins {
		switch {
		case p == "cpu":
			cpu = "installed"
		case p == "cuda":
			cuda = "installed (go-xla)"
		case strings.Contains(p, "cuda"):
			cuda = "JAX's plugin at " + p
		}
	}
	cudaWhy := "optional: needs an NVIDIA GPU (none here); see docs/engine.md (Backends)"
	if choice.GPU {
		cudaWhy = "optional: a GPU is present: install JAX's jax-cuda13-pjrt or go-xla's CUDA plugin; see docs/engine.md (Backends)"
	}
	cs = append(cs,
		check{Name: "XLA CPU", Value: cpu, Optional: true, Problem: ifThen(cpu == "not installed", "optional: faster than pure Go; see docs/engine.md (Backends)")},
		check{Name: "XLA CUDA", Value: cuda, Optional: true, Problem: ifThen(cuda == "not installed", cudaWhy)},
		check{Name: "GPU", Value: gpuDescription(ctx, choice.GPU)},
	)
	cs = append(cs, memoryCheck())
	return append(cs, firstHourChecks(e)...)
}

// kernelSpecCheck compares the user's "attnbook" kernel spec with what setup writes here.
func kernelSpecCheck(e *env, py *python) check {
	c := check{Name: "kernel"}
	dir, err := userSpecDir(py)
	if err != nil {
		c.Value, c.Problem = "unknown Jupyter data dir", err.Error()
		return c
	}
	have := readSpec(dir)
	if have == nil {
		c.Value = fmt.Sprintf("%q not registered (%s)", KernelName, dir)
		c.Problem = "register it: go run ./kernel setup"
		return c
	}
	root, _ := defaultRoot(have, e.Root)
	o := e.specOptions(dir, root)
	o.ByFolder = true
	want := newKernelSpec(o)
	c.Value = fmt.Sprintf("%q in %s: %s", KernelName, dir, describeSpec(have))
	if have.Env[thptools.EnvVar] != "" {
		c.Value += "; warm cells compile and link on huge pages (" + have.Env[thptools.EnvVar] + ")"
		if tools := have.Env[thptools.EnvVar]; thptools.Resident(tools, "compile") {
			c.Value += ", with a resident compiler and linker"
		} else if thptools.Resident(tools, "link") {
			c.Value += ", with a resident linker"
		}
		if thptools.Goimports(have.Env[thptools.EnvVar]) != "" {
			c.Value += "; goimports reads the cell builder's go env"
		}
		if thptools.GoNB(have.Env[thptools.EnvVar]) != "" {
			c.Value += "; GoNB leaves go get to the cell builder"
		}
	}
	current := reflect.DeepEqual(*have, want)
	if files, err := specFiles(o, e.Go.GoBinary()); err == nil {
		for name, f := range files {
			if name != "kernel.json" && !f.current(filepath.Join(dir, name)) {
				current = false
			}
		}
	}
	switch {
	case have.Argv[0] != want.Argv[0]:
		c.Problem = "it serves one checkout for every notebook (written by an older attnbook): go run ./kernel setup"
	case !current:
		c.Problem = "it is out of date: go run ./kernel setup"
	case !executable(filepath.Join(dir, "bin", cellBuildName)):
		c.Problem = "bin/" + cellBuildName + " is missing (bin/go is a link to it: cells cannot build): go run ./kernel setup"
	}
	return c
}

// describeSpec says which checkout a kernel spec serves.
func describeSpec(s *kernelSpec) string {
	root := s.Env[RootEnv]
	what := "serves " + root
	if len(s.Argv) > 0 && filepath.Base(s.Argv[0]) == launcherName {
		what = "serves the checkout each notebook is in; default " + root
	}
	if root != "" && !isCheckout(root) {
		what += " (not an attnbook checkout any more)"
	}
	return fmt.Sprintf("%q, %s", s.DisplayName, what)
}

// attnbookSpec is a kernel spec found in one of Jupyter's kernel folders that serves attnbook.
type attnbookSpec struct {
	Name, Dir string
	Spec      *kernelSpec
	Shadowed  bool // a folder earlier in Jupyter's search path has a spec of the same name
}

// attnbookSpecs lists every kernel spec in Jupyter's kernel folders that is attnbook's: named
// attnbook or attnbook-*, or starting a kernel with $ATTNBOOK_ROOT.
func attnbookSpecs(py *python) []attnbookSpec {
	dirs := slices.Clone(py.kernelDirs())
	seen := map[string]bool{}
	var out []attnbookSpec
	for _, kd := range dirs {
		entries, _ := os.ReadDir(kd)
		for _, en := range entries {
			name := en.Name()
			dir := filepath.Join(kd, name)
			s := readSpec(dir)
			if s == nil || !(name == KernelName || strings.HasPrefix(name, KernelName+"-") || s.Env[RootEnv] != "") {
				continue
			}
			out = append(out, attnbookSpec{Name: name, Dir: dir, Spec: s, Shadowed: seen[name]})
			seen[name] = true
		}
	}
	return out
}

// kernelDirs are Jupyter's kernel spec folders, first match first (the user's data dir when
// Python could not say).
func (p *python) kernelDirs() []string {
	if p != nil && len(p.KernelDirs) > 0 {
		return p.KernelDirs
	}
	if d, err := jupyterDataDir(p); err == nil {
		return []string{filepath.Join(d, "kernels")}
	}
	return nil
}

// otherSpecChecks are doctor lines for the attnbook kernel specs besides the user's own: which
// checkout each serves, and whether that checkout still exists.
func otherSpecChecks(e *env, py *python) []check {
	user, _ := userSpecDir(py)
	var cs []check
	for _, s := range attnbookSpecs(py) {
		if s.Dir == user {
			continue
		}
		c := check{Name: "kernel", Optional: true, Value: fmt.Sprintf("%q in %s: %s", s.Name, s.Dir, describeSpec(s.Spec))}
		switch root := s.Spec.Env[RootEnv]; {
		case s.Shadowed:
			c.Value += " (hidden by a spec of the same name earlier in Jupyter's path)"
		case s.Name == KernelName:
			c.Problem = fmt.Sprintf("Jupyter picks this %q before the one setup registers: remove it with jupyter kernelspec remove %s", KernelName, s.Name)
			c.Optional = false
		case root != "" && !isCheckout(root):
			c.Problem = fmt.Sprintf("optional: its checkout is gone: jupyter kernelspec remove %s", s.Name)
		}
		cs = append(cs, c)
	}
	return cs
}

// simdCheck says whether notebook cells get GoMLX's SIMD kernels: the kernel spec's GOEXPERIMENT,
// and backend.SIMD() from a probe built the way cells are built (kernel/internal/simdprobe).
func simdCheck(ctx context.Context, e *env, py *python) check {
	c := check{Name: "SIMD"}
	self, selfDetail := backend.SIMD()
	this := fmt.Sprintf("this command: %s (%s)", onOff(self), selfDetail)
	if !e.Go.SIMD() {
		c.Value = fmt.Sprintf("off for cells: %s/%s with %s has no GOEXPERIMENT=%s (Go 1.26+ on amd64 only); %s",
			runtime.GOOS, e.Go.GOARCH, e.Go.GOVERSION, SIMDExperiment, this)
		if e.Go.GOARCH == "amd64" {
			c.Problem = "optional: Go 1.26 or later makes GoMLX's pure-Go backend ~15x faster at matrix products"
			c.Optional = true
		}
		return c
	}
	if dir, err := userSpecDir(py); err == nil {
		switch s := readSpec(dir); {
		case s == nil:
		case s.Env["GOEXPERIMENT"] != e.Go.Experiment():
			c.Value = fmt.Sprintf("the kernel spec builds cells with GOEXPERIMENT=%q, want %q; %s", s.Env["GOEXPERIMENT"], e.Go.Experiment(), this)
			c.Problem = "cells miss GoMLX's SIMD kernels: go run ./kernel setup"
			return c
		case s.Env["GODEBUG"] != e.Go.GODEBUG():
			c.Value = fmt.Sprintf("the kernel spec runs cells with GODEBUG=%q, want %q; %s", s.Env["GODEBUG"], e.Go.GODEBUG(), this)
			c.Problem = "cells' math.Exp may run 100x slower after the SIMD kernels: go run ./kernel setup"
			return c
		}
	}
	on, detail, err := probeSIMD(ctx, e)
	switch {
	case err != nil:
		c.Value = "cells: unknown; " + this
		c.Problem = "optional: the probe failed: " + oneLine(err.Error())
		c.Optional = true
	case !on:
		c.Value = fmt.Sprintf("off for cells though they build with GOEXPERIMENT=%s (%s); %s", e.Go.Experiment(), detail, this)
		c.Problem = "optional: GoMLX's SIMD kernels are not in: see the detail above"
		c.Optional = true
	default:
		c.Value = fmt.Sprintf("on for cells, tests and benchmarks: GOEXPERIMENT=%s (%s); %s", e.Go.Experiment(), detail, this)
	}
	return c
}

// probeSIMD builds and runs kernel/internal/simdprobe with the cells' environment (GOEXPERIMENT and
// cellBuildEnv): a link from the warm build cache.
func probeSIMD(ctx context.Context, e *env) (on bool, detail string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.Go.GoBinary(), "run", "./kernel/internal/simdprobe")
	cmd.Dir = e.Root
	cmd.Env = withCellBuildEnv(e.Go.Environ(), wantNoXLA())
	out, err := cmd.CombinedOutput()
	if err != nil {
		return false, "", fmt.Errorf("go run ./kernel/internal/simdprobe: %v: %s", err, out)
	}
	state, detail, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	return state == "on", detail, nil
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// moduleRequire is the version a go.mod file requires module mod at, or "unknown".
func moduleRequire(gomod, mod string) string {
	data, _ := os.ReadFile(gomod)
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == mod {
			return f[1]
		}
	}
	return "unknown"
}

func depVersion(mod string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, d := range info.Deps {
		if d.Path == mod {
			if d.Replace != nil {
				return d.Replace.Version + " (replaced)"
			}
			return d.Version
		}
	}
	return "unknown"
}

func gpuDescription(ctx context.Context, gpu bool) string {
	if !gpu {
		return "none (no /dev/nvidia* device)"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader").Output(); err == nil {
		return "NVIDIA " + strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(out)), "\n", "; ")), " ")
	}
	return "NVIDIA device present (nvidia-smi not available)"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func ifThen(cond bool, s string) string {
	if cond {
		return s
	}
	return ""
}

// executable reports whether path is a file someone may execute.
func executable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}
