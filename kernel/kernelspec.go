package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/attnbook/attnbook/kernel/internal/thptools"
	"github.com/attnbook/attnbook/pkg/backend"
)

// The Jupyter kernel attnbook registers: GoNB, started with an environment that wires this
// repository into every kernel's Go module.
const (
	KernelName        = "attnbook"
	KernelDisplayName = "Go (attnbook)"
	// RootEnv tells the kernel (and notebooks) where the repository is.
	RootEnv = "ATTNBOOK_ROOT"
	// goEnvVar names the go command cells build with, for bin/go (kernel/internal/cellbuild's shim).
	goEnvVar = "ATTNBOOK_GO"
	// pseudoVersion is the version a replaced, never-published module is required at.
	pseudoVersion = "v0.0.0-00010101000000-000000000000"
)

// kernelSpec is a Jupyter kernel.json; see
// https://jupyter-client.readthedocs.io/en/latest/kernels.html#kernel-specs.
type kernelSpec struct {
	Argv          []string          `json:"argv"`
	DisplayName   string            `json:"display_name"`
	Language      string            `json:"language"`
	InterruptMode string            `json:"interrupt_mode"`
	Env           map[string]string `json:"env"`
}

// specOptions are the inputs of a kernel spec: everything is an absolute path.
type specOptions struct {
	Root     string // repository root, wired into each kernel's module
	SpecDir  string // the kernel spec's own directory (holds bin/go, the shim)
	GoRoot   string // GOROOT of the go command notebooks build with
	ToolDir  string // where gonb, goimports and gopls are installed
	RawError bool   // plain-text errors instead of GoNB's HTML ones (headless runs)
	NoXLA    bool   // build cells with -tags noxla: no PJRT plugin, so link the pure-Go backend only
	// Experiment is the GOEXPERIMENT cells build with ("simd" on amd64: GoMLX's SIMD kernels);
	// "" leaves it unset.
	Experiment string
	// GODEBUG is the GODEBUG cells run with (with the SIMD kernels: backend.ExpGODEBUG, math.Exp
	// without FMA); "" leaves it unset.
	GODEBUG string
	// Toolchain is the GOTOOLCHAIN cells build with: the Go release setup ran with (go.mod's
	// toolchain line, e.g. "go1.27.3"), so a go command set to GOTOOLCHAIN=local elsewhere on the
	// machine never refuses go.mod's go line; "" leaves it unset.
	Toolchain string
	// THPTools is the directory of the huge-page builds of the toolchain's compile and link
	// (kernel/internal/thptools) that warm cells build with, and of the goimports and GoNB built
	// beside them; "" for the stock ones.
	THPTools string
	// ByFolder starts GoNB through bin/attnbook-kernel, which serves the checkout the notebook's
	// folder is in (Root only for notebooks outside any checkout). The user's spec does; the
	// private spec of `kernel run` serves Root only.
	ByFolder bool
}

// gonb is the GoNB the kernel runs: the one built with the tools for cells (it leaves its `go get`
// to the cell builder), else the one installed in ToolDir.
func (o specOptions) gonb() string {
	if gonb := thptools.GoNB(o.THPTools); gonb != "" {
		return gonb
	}
	return filepath.Join(o.ToolDir, "gonb")
}

// specOptions are the spec options for this checkout's Go and tools, serving root, written to
// specDir.
func (e *env) specOptions(specDir, root string) specOptions {
	o := specOptions{Root: root, SpecDir: specDir, GoRoot: e.Go.GOROOT, ToolDir: e.Go.ToolDir(),
		NoXLA: wantNoXLA(), Experiment: e.Go.Experiment(), GODEBUG: e.Go.GODEBUG(), Toolchain: e.Go.Toolchain()}
	if dir, err := e.thpToolsDir(); err == nil && thptools.Ready(dir) {
		o.THPTools = dir
	}
	return o
}

// thpToolsDir is where setup builds the huge-page compile and link for this toolchain.
func (e *env) thpToolsDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return thptools.Dir(cache, e.Go.GOROOT, e.Go.GOVERSION, e.cellCommands()), nil
}

// cellBuildEnv is how every notebook cell builds, in the kernel spec's environment and in what
// setup and doctor build to match it (else the build cache misses): GOFLAGS leaves out DWARF
// debug information, in the link and in every compiled package (-gcflags=all=-dwarf=false), and
// the link leaves out the ELF symbol table too (-ldflags=-s, which implies -w; panics still print
// file and line, from the function tables). Leaving out DWARF in the link cut a warm cell's Go
// link from about 0.78 s to 0.59 s; in the packages, it shrinks the archives a cell links (233 of
// them) from 199 to 139 MB and its link by a further ~12 %; the symbol table, 1.2 MB of a 14.9 MB
// program, took 11 ms of the link's output phase and ~12 ms of a warm cell's build, below the
// spread of whole notebooks' cells (docs/notebooks.md).
// With noXLA (no PJRT plugin here, so the pure-Go backend only) cells also build with
// -tags=noxla, leaving out XLA's cgo, and with CGO_ENABLED=0: nothing they link needs cgo then,
// and the go command skips asking the C compiler for its version, which took 0.05–0.07 s of every
// cell's build (2 cores, `go build` of a notebook 01 cell, alternated).
func cellBuildEnv(noXLA bool) map[string]string {
	const noDebugInfo = "-gcflags=all=-dwarf=false -ldflags=-s"
	if !noXLA {
		return map[string]string{"GOFLAGS": noDebugInfo}
	}
	return map[string]string{"GOFLAGS": "-tags=noxla " + noDebugInfo, "CGO_ENABLED": "0"}
}

// withCellBuildEnv is environ with cellBuildEnv(noXLA) set (replacing what environ had).
func withCellBuildEnv(environ []string, noXLA bool) []string {
	for k, v := range cellBuildEnv(noXLA) {
		environ = append(slices.DeleteFunc(environ, func(kv string) bool { return strings.HasPrefix(kv, k+"=") }), k+"="+v)
	}
	return environ
}

// wantNoXLA reports whether notebooks should build without XLA: when the backend they would pick
// here is the pure-Go one anyway. Installing a PJRT plugin later needs a new `setup` (doctor says so).
func wantNoXLA() bool { return backend.Choose().Name() == "go" }

// newKernelSpec builds the kernel.json content.
//
// Wiring: GoNB starts each kernel by running `go mod init gonb_<id>` in a fresh temporary module.
// The spec puts bin/ of the spec directory first on $PATH; there `go` (goShimName) hands that one
// command to a small script (goShim), which runs it and then adds `require
// github.com/attnbook/attnbook v0.0.0-…` and `replace github.com/attnbook/attnbook =>
// $ATTNBOOK_ROOT`, and copies the repository's go.sum and requirements (so a cell importing GoMLX
// or gonbui directly changes neither go.mod nor go.sum, which would send its build and the next
// one through the go command). GoNB's `go get`, `go env -json …` (from goimports) and
// `go build -o BIN` of a cell are run by bin/go itself, the cell builder
// (kernel/internal/cellbuild), which skips the go command ($ATTNBOOK_GO) when it could not change
// anything; every other go command passes straight through to $GOROOT/bin/go. So every
// notebook imports this repository's packages from its first cell, with nothing in the notebook,
// and an edit under pkg/ shows at the next cell run (go build compiles the replaced directory from
// source). Where setup built them, $ATTNBOOK_THP_TOOLS names the huge-page builds of the
// toolchain's compile and link (kernel/internal/thptools), which the cell builder runs instead of
// the stock ones, and $PATH has the goimports built there (which reads the cell builder's answer
// to its `go env` question instead of asking the go command) before the stock one.
//
// With ByFolder, argv[0] is bin/attnbook-kernel (folderLauncher): Jupyter starts a kernel in the
// notebook's folder, and when that folder is inside an attnbook checkout the launcher sets
// $ATTNBOOK_ROOT to that checkout before it execs GoNB. So one kernel name, "attnbook" (what the
// notebooks' metadata asks for), serves every checkout on the machine, each notebook its own;
// Root is only the default for notebooks outside any checkout.
func newKernelSpec(o specOptions) kernelSpec {
	argv := []string{o.gonb(), "--kernel", "{connection_file}"}
	if o.ByFolder {
		argv[0] = filepath.Join(o.SpecDir, "bin", launcherName)
	}
	if o.RawError {
		argv = append(argv, "--raw_error")
	}
	path := []string{filepath.Join(o.SpecDir, "bin")}
	if goimports := thptools.Goimports(o.THPTools); goimports != "" {
		path = append(path, filepath.Dir(goimports)) // before ToolDir's stock goimports
	}
	path = append(path, filepath.Join(o.GoRoot, "bin"), o.ToolDir,
		"${PATH}") // jupyter_client substitutes the server's own $PATH
	pathList := strings.Join(path, string(os.PathListSeparator))
	env := map[string]string{
		"PATH":                  pathList,
		RootEnv:                 o.Root,
		goEnvVar:                filepath.Join(o.GoRoot, "bin", "go"),
		"GOMLX_NO_AUTO_INSTALL": "1", // GoMLX must never download a PJRT plugin at run time
		// Nor the go command a module: GoNB runs `go get` whenever a cell imports a package no
		// cell imported before, and online that asks the module proxy about every required module
		// (0.5-0.8 s a cell, retractions and deprecations) though go.mod changes in nothing; the
		// notebooks need no module the repository's go.mod lacks. `%env GOPROXY=...` in a cell
		// turns downloads back on for that kernel.
		"GOPROXY": "off",
		// A panic in a cell shows its message only, not every goroutine's stack: our packages
		// panic with one line naming function, argument and shapes. `%env GOTRACEBACK single`
		// in a cell brings the stack trace back.
		"GOTRACEBACK": "none",
	}
	maps.Copy(env, cellBuildEnv(o.NoXLA))
	if o.Experiment != "" {
		env["GOEXPERIMENT"] = o.Experiment
	}
	if o.GODEBUG != "" {
		env["GODEBUG"] = o.GODEBUG
	}
	if o.Toolchain != "" {
		env["GOTOOLCHAIN"] = o.Toolchain
	}
	if o.THPTools != "" {
		env[thptools.EnvVar] = o.THPTools
	}
	return kernelSpec{
		Argv:          argv,
		DisplayName:   KernelDisplayName,
		Language:      "go",
		InterruptMode: "message",
		Env:           env,
	}
}

// cellBuildName is the file name in the spec's bin/ of kernel/internal/cellbuild, which runs a
// cell's `go get`, `go env -json …` and `go build -o BIN` (setup and run build it).
const cellBuildName = "attnbook-cellbuild"

// goShimName is the kernel spec's bin/go, first on the kernel's $PATH: a link to the cell
// builder (cellBuildName), which runs the go commands GoNB runs for every cell in its module
// itself — `go get`, goimports' `go env -json …` and `go build -o BIN` — skipping what the last
// run already did (kernel/internal/cellbuild says when), with $ATTNBOOK_GO as the go command, and
// hands every other go command to goWireName. Each process started costs 5–15 ms on the slow
// virtual machines docs/notebooks.md describes: a cell's go commands start no shell.
const goShimName = "go"

// goWireName is the script goShim is, beside the cell builder in the spec's bin/.
const goWireName = "go-wire"

// goShim is the script bin/go-wire: it wires GoNB's new module in and passes every other go
// command to the go command. See newKernelSpec and goShimName.
func goShim(goBinary string) string {
	return fmt.Sprintf(`#!/bin/sh
# Written by 'go run ./kernel setup' (attnbook); bin/go (the cell builder) runs it for every go
# command but those GoNB runs for each cell. GoNB runs 'go mod init gonb_<id>' once per kernel in
# its temporary module; right after it, wire the attnbook repository ($%[2]s) in, with its
# requirements and go.sum, so that no cell's 'go get' has a module to add. Every other go command
# goes straight to the real go.
GO=%[1]s
if [ "$#" -eq 3 ] && [ "$1" = mod ] && [ "$2" = init ] && [ -n "$GONB_TMP_DIR" ] && [ -n "$%[2]s" ]; then
	case "$3" in gonb_*)
		"$GO" "$@" || exit
		cp "$%[2]s/go.sum" go.sum 2>/dev/null
		sed -n '/^require[[:space:]]*(/,/^)/p; /^require[[:space:]]*[^([:space:]]/p' "$%[2]s/go.mod" >> go.mod
		exec "$GO" mod edit -require=%[3]s@%[4]s -replace=%[3]s="$%[2]s"
	esac
fi
exec "$GO" "$@"
`, shellQuote(goBinary), RootEnv, Module, pseudoVersion)
}

// launcherName is the folder launcher's file name in the spec's bin/.
const launcherName = "attnbook-kernel"

// folderLauncher is bin/attnbook-kernel in a ByFolder kernel spec; see newKernelSpec.
func folderLauncher(gonb string) string {
	return fmt.Sprintf(`#!/bin/sh
# Written by 'go run ./kernel setup' (attnbook). Jupyter starts a kernel in the notebook's folder:
# when that folder is inside an attnbook checkout (a go.mod declaring %[3]s), serve that
# checkout; elsewhere $%[2]s from kernel.json (the checkout that registered this spec).
d=$(pwd)
while :; do
	if [ -f "$d/go.mod" ] && [ "$(sed -n 's/^module[[:space:]]\{1,\}"\{0,1\}\([^"[:space:]]*\).*/\1/p' "$d/go.mod" | head -n 1)" = %[3]s ]; then
		if [ "$d" != "$%[2]s" ]; then
			echo "attnbook kernel: serving $d, the checkout this notebook is in (the default is $%[2]s)" >&2
		fi
		%[2]s=$d
		export %[2]s
		break
	fi
	[ "$d" = / ] || [ -z "$d" ] && break
	d=$(dirname "$d")
done
exec %[1]s "$@"
`, shellQuote(gonb), RootEnv, Module)
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// specFile is a file of a kernel spec directory: its content and mode, or, where link is set, a
// symbolic link to link.
type specFile struct {
	content []byte
	mode    os.FileMode
	link    string
}

func specFiles(o specOptions, goBinary string) (map[string]specFile, error) {
	js, err := json.MarshalIndent(newKernelSpec(o), "", "  ")
	if err != nil {
		return nil, err
	}
	files := map[string]specFile{
		"kernel.json":       {content: append(js, '\n'), mode: 0o644},
		"logo-svg.svg":      {content: []byte(logoSVG), mode: 0o644},
		"bin/" + goShimName: {link: cellBuildName},
		"bin/" + goWireName: {content: []byte(goShim(goBinary)), mode: 0o755},
	}
	if o.ByFolder {
		files["bin/"+launcherName] = specFile{content: []byte(folderLauncher(o.gonb())), mode: 0o755}
	}
	return files, nil
}

// writeSpecDir writes the kernel spec into dir (o.SpecDir). It reports whether anything changed:
// an identical spec is left alone.
func writeSpecDir(o specOptions, goBinary string) (changed bool, err error) {
	files, err := specFiles(o, goBinary)
	if err != nil {
		return false, err
	}
	for name, f := range files {
		path := filepath.Join(o.SpecDir, name)
		if f.current(path) {
			continue
		}
		changed = true
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return changed, err
		}
		tmp := path + ".tmp"
		os.Remove(tmp)
		if f.link != "" {
			err = os.Symlink(f.link, tmp)
		} else if err = os.WriteFile(tmp, f.content, f.mode); err == nil {
			err = os.Chmod(tmp, f.mode)
		}
		if err != nil {
			return changed, err
		}
		if err := os.Rename(tmp, path); err != nil {
			return changed, err
		}
	}
	return changed, nil
}

// current reports whether path is f already.
func (f specFile) current(path string) bool {
	if f.link != "" {
		target, err := os.Readlink(path)
		return err == nil && target == f.link
	}
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != f.mode {
		return false
	}
	old, err := os.ReadFile(path)
	return err == nil && bytes.Equal(old, f.content)
}

// buildCellBuild builds kernel/internal/cellbuild into specDir's bin/ (bin/go links to it).
func buildCellBuild(ctx context.Context, e *env, specDir string) error {
	cmd := exec.CommandContext(ctx, e.Go.GoBinary(), "build", "-o", filepath.Join(specDir, "bin", cellBuildName), "./kernel/internal/cellbuild")
	cmd.Dir = e.Root
	cmd.Env = append(e.Go.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %w\n%s", cellBuildName, err, out)
	}
	return nil
}

// jupyterDataDir is where the user's kernel specs live: what jupyter_core reports when Python
// told us, else jupyter_core's rule ($JUPYTER_DATA_DIR, ~/Library/Jupyter, $XDG_DATA_HOME/jupyter,
// ~/.local/share/jupyter).
func jupyterDataDir(py *python) (string, error) {
	if py != nil && py.DataDir != "" {
		return py.DataDir, nil
	}
	if d := os.Getenv("JUPYTER_DATA_DIR"); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Jupyter"), nil
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "jupyter"), nil
	}
	return filepath.Join(home, ".local", "share", "jupyter"), nil
}

// readSpec reads an installed kernel.json, or returns nil.
func readSpec(specDir string) *kernelSpec {
	data, err := os.ReadFile(filepath.Join(specDir, "kernel.json"))
	if err != nil {
		return nil
	}
	var s kernelSpec
	if json.Unmarshal(data, &s) != nil {
		return nil
	}
	return &s
}

// logoSVG is the kernel's launcher icon: an "A" for attention over Go's blue.
const logoSVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64">
<rect width="64" height="64" rx="12" fill="#00ADD8"/>
<text x="32" y="46" font-family="Helvetica, Arial, sans-serif" font-size="40" font-weight="bold" text-anchor="middle" fill="#fff">A</text>
</svg>
`
