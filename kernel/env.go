package main

import (
	"context"
	"debug/buildinfo"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/attnbook/attnbook/pkg/backend"
)

// Module is this repository's module path: the repository root is the directory whose go.mod
// declares it.
const Module = "github.com/attnbook/attnbook"

// findRoot walks up from dir to the directory whose go.mod declares Module.
func findRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if modulePath(filepath.Join(d, "go.mod")) == Module {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod for %s in %s or its parents: run this from the attnbook repository", Module, dir)
		}
	}
}

// modulePath is the module path declared by a go.mod file, or "".
func modulePath(gomod string) string { return strings.Trim(goModLine(gomod, "module"), `"`) }

// goEnv is what the kernel commands need from `go env`.
type goEnv struct {
	GOROOT, GOBIN, GOPATH, GOVERSION, GOARCH, GOEXPERIMENT, GOTOOLCHAIN string
}

// SIMDExperiment is the GOEXPERIMENT value every go command of attnbook (kernel subcommands,
// notebook cells, tests, the image) builds with on amd64: GoMLX's pure-Go backend then compiles
// its AVX2/AVX-512 kernels (a 1024³ float32 product: 603 ms without, 38 ms with, on this
// project's 2-core machine). Go 1.26 has the experiment; other architectures build without it.
const SIMDExperiment = "simd"

// Experiment is the GOEXPERIMENT value go commands get: the user's own experiments plus simd on
// amd64 with Go 1.26 or later; the user's value unchanged elsewhere, or when it already names
// simd or nosimd. "" means leave GOEXPERIMENT unset.
func (g goEnv) Experiment() string {
	if g.GOARCH != "amd64" || !goAtLeast(g.GOVERSION, 26) {
		return g.GOEXPERIMENT
	}
	for _, x := range strings.Split(g.GOEXPERIMENT, ",") {
		if x = strings.TrimSpace(x); x == SIMDExperiment || x == "no"+SIMDExperiment {
			return g.GOEXPERIMENT
		}
	}
	if strings.TrimSpace(g.GOEXPERIMENT) == "" {
		return SIMDExperiment
	}
	return g.GOEXPERIMENT + "," + SIMDExperiment
}

// SIMD reports whether go commands build GoMLX's SIMD kernels (Experiment names simd).
func (g goEnv) SIMD() bool {
	for _, x := range strings.Split(g.Experiment(), ",") {
		if strings.TrimSpace(x) == SIMDExperiment {
			return true
		}
	}
	return false
}

// GODEBUG is the GODEBUG value programs built with Experiment() run with: the user's own, plus
// backend.ExpGODEBUG (math.Exp without FMA) when they have the SIMD kernels (amd64); see there.
func (g goEnv) GODEBUG() string {
	if g.GOARCH != "amd64" || !g.SIMD() { // cpu.fma is an amd64 option: elsewhere Go warns about it
		return os.Getenv("GODEBUG")
	}
	return backend.WithExpGODEBUG(os.Getenv("GODEBUG"))
}

// Toolchain is the GOTOOLCHAIN value go commands get: the release this command's go runs (e.g.
// "go1.27.3", which GOTOOLCHAIN=auto picked from go.mod's toolchain line, or the user's export),
// so that every go command the kernel starts, and every notebook cell, builds with the same Go
// even where the machine's go is set to GOTOOLCHAIN=local. "" (leave it as it is) for a devel or
// otherwise unnamed toolchain.
func (g goEnv) Toolchain() string {
	if !releaseVersion.MatchString(g.GOVERSION) {
		return ""
	}
	return g.GOVERSION
}

var releaseVersion = regexp.MustCompile(`^go1\.\d+(\.\d+)?$`)

// Environ is os.Environ() with GOEXPERIMENT set to Experiment(), GODEBUG to GODEBUG() and
// GOTOOLCHAIN to Toolchain(): the environment of every go command a kernel subcommand runs (go
// test passes it on to the tests).
func (g goEnv) Environ() []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "GOEXPERIMENT=") || strings.HasPrefix(kv, "GODEBUG=") ||
			(g.Toolchain() != "" && strings.HasPrefix(kv, "GOTOOLCHAIN="))
	})
	if t := g.Toolchain(); t != "" {
		env = append(env, "GOTOOLCHAIN="+t)
	}
	if x := g.Experiment(); x != "" {
		env = append(env, "GOEXPERIMENT="+x)
	}
	if d := g.GODEBUG(); d != "" {
		env = append(env, "GODEBUG="+d)
	}
	return env
}

// goAtLeast reports whether a `go env GOVERSION` like "go1.26.8" is Go 1.minor or later (a devel
// toolchain counts as new).
func goAtLeast(goVersion string, minor int) bool {
	var m int
	if _, err := fmt.Sscanf(goVersion, "go1.%d", &m); err != nil {
		return strings.Contains(goVersion, "devel")
	}
	return m >= minor
}

// GoBinary is the absolute path of the go command notebooks build with.
func (g goEnv) GoBinary() string { return filepath.Join(g.GOROOT, "bin", "go") }

// ToolDir is where `go install` puts binaries: $GOBIN, else the first $GOPATH/bin.
func (g goEnv) ToolDir() string {
	if g.GOBIN != "" {
		return g.GOBIN
	}
	return filepath.Join(filepath.SplitList(g.GOPATH)[0], "bin")
}

func readGoEnv(ctx context.Context) (goEnv, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return goEnv{}, errors.New("the go command is not on $PATH: install Go from https://go.dev/dl and add its bin folder to $PATH")
	}
	out, err := exec.CommandContext(ctx, goCmd, "env", "-json", "GOROOT", "GOBIN", "GOPATH", "GOVERSION", "GOARCH", "GOEXPERIMENT", "GOTOOLCHAIN").Output()
	if err != nil {
		return goEnv{}, fmt.Errorf("go env: %w", err)
	}
	var g goEnv
	if err := json.Unmarshal(out, &g); err != nil {
		return goEnv{}, fmt.Errorf("go env: %w", err)
	}
	return g, nil
}

// env is what every subcommand works with: the repository, Go, and where output goes.
type env struct {
	Root           string // repository root
	Go             goEnv
	Stdout, Stderr io.Writer
	Quiet          bool // setup prints only the steps that did something (up)
}

func newEnv(ctx context.Context, stdout, stderr io.Writer) (*env, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	root, err := findRoot(wd)
	if err != nil {
		return nil, err
	}
	g, err := readGoEnv(ctx)
	if err != nil {
		return nil, err
	}
	return &env{Root: root, Go: g, Stdout: stdout, Stderr: stderr}, nil
}

// rel shows path relative to the repository root when it is inside it.
func (e *env) rel(path string) string {
	if r, err := filepath.Rel(e.Root, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

// python is a Python interpreter with Jupyter packages, as found by probePython.
type python struct {
	Path     string            `json:"-"`
	Version  string            `json:"python"`
	Packages map[string]string `json:"packages"` // distribution name → version, for those installed
	DataDir  string            `json:"data_dir"` // jupyter_core's user data dir (kernel specs go in kernels/)
	// ConfigDir is jupyter_core's user config dir (the classic Notebook's custom/ is there).
	ConfigDir string `json:"config_dir"`
	// NotebookStatic is the classic Notebook's static folder (its default custom/), when installed.
	NotebookStatic string `json:"notebook_static"`
	// KernelDirs are the folders Jupyter looks for kernel specs in, first match winning
	// ($JUPYTER_PATH, the user's data dir, then system ones).
	KernelDirs []string `json:"kernel_dirs"`
}

// Has reports whether a distribution (e.g. "nbclient") is installed.
func (p *python) Has(dist string) bool { return p != nil && p.Packages[dist] != "" }

// CanRun reports whether notebooks can be executed headless: nbclient and its kernel client.
func (p *python) CanRun() bool {
	return p.Has("nbclient") && p.Has("nbformat") && p.Has("jupyter_client")
}

// CanServe reports whether a Jupyter server (JupyterLab or the classic Notebook) is installed.
func (p *python) CanServe() bool { return p.Has("jupyterlab") || p.Has("notebook") }

// Server names the Jupyter UI `up` launches: "JupyterLab", "Notebook (classic)" or "".
func (p *python) Server() string {
	switch {
	case p.Has("jupyterlab"):
		return "JupyterLab " + p.Packages["jupyterlab"]
	case p.Has("notebook"):
		return "Notebook " + p.Packages["notebook"] + " (classic; JupyterLab not installed)"
	}
	return ""
}

//go:embed probe.py
var probeScript string

// pythonCandidates lists interpreters to try, best first: $ATTNBOOK_PYTHON, the system Python
// (Debian's Jupyter packages live there, whatever pyenv puts first on $PATH), then python3 on $PATH.
func pythonCandidates() []string {
	var c []string
	if p := os.Getenv("ATTNBOOK_PYTHON"); p != "" {
		c = append(c, p)
	}
	c = append(c, "/usr/bin/python3")
	if p, err := exec.LookPath("python3"); err == nil {
		c = append(c, p)
	}
	if runtime.GOOS == "darwin" {
		c = append(c, "/opt/homebrew/bin/python3", "/usr/local/bin/python3")
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range c {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// probePython returns the first candidate interpreter that has Jupyter (a server or nbclient);
// when none has, the first that runs at all (so callers can report versions), or nil.
func probePython(ctx context.Context) *python {
	var first *python
	for _, path := range pythonCandidates() {
		p := probeOne(ctx, path)
		if p == nil {
			continue
		}
		if p.CanRun() || p.CanServe() {
			return p
		}
		if first == nil {
			first = p
		}
	}
	return first
}

func probeOne(ctx context.Context, path string) *python {
	if _, err := exec.LookPath(path); err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-c", probeScript).Output()
	if err != nil {
		return nil
	}
	p := &python{Path: path}
	if err := json.Unmarshal(out, p); err != nil {
		return nil
	}
	return p
}

// toolVersion reads the module version a Go binary was built from (its build info): the main
// module's version for `go install pkg@version`, else the version of module mod among its
// dependencies (GoNB built from this repository's go.mod with `go install tool`).
// It returns "" when the binary is missing or was built some other way.
func toolVersion(binary, mod string) string {
	info, err := readBuildInfo(binary)
	if err != nil {
		return ""
	}
	if info.Main.Path == mod && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	for _, d := range info.Deps {
		if d.Path == mod {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}

var readBuildInfo = buildinfo.ReadFile
