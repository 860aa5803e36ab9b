// Package thptools builds the Go toolchain's own compiler and linker, from the toolchain's own
// source, with changes that spare them page faults (patches), and that can also run as resident
// servers (kernel/internal/linkd). Warm cells compile and link with them
// (kernel/internal/cellbuild). Beside them it builds the goimports GoNB runs on every cell, from
// golang.org/x/tools with its heap on huge pages too and its `go env` answered from the cell
// builder's cache (importsPatch), and GoNB itself, which leaves its `go get` before every cell's
// build to the cell builder's build (gonbPatch).
//
// Why: a warm cell is one compile and one link, and the link alone touches ~70 MB of fresh heap,
// maps ~140 MB of package archives and writes a ~14 MB program. With 4 KiB pages that was ~20,000
// page faults a link, ~4,600 more in the compile; in a virtual machine a fault costs 1–19 µs
// (`kernel doctor` measures it), up to 0.4 s a cell. Linux backs memory with 2 MiB pages only where
// a program asks (THP "madvise", most distributions' default), and Go's runtime does not ask since
// Go 1.21.1 (GODEBUG=disablethp only turns them off). These builds advise MADV_HUGEPAGE on every
// heap mapping, as Go 1.21.0's runtime did; the linker builds its output in that heap and maps the
// archives with their pages at once, and walks the program's functions for three of its tables on
// two goroutines at once (the largest phase a resident linker's child runs). Nothing else
// differs: they report the same `-V=full` version (checked at build) and write byte-identical
// output (tested). Where THP is "never", the advice does nothing. Where the resident servers'
// patch does not apply to the toolchain's source, the tools are built without it (Resident
// reports false).
package thptools

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/attnbook/attnbook/kernel/internal/goenvcache"
	"github.com/attnbook/attnbook/kernel/internal/linkd"
	"github.com/attnbook/attnbook/kernel/internal/srcedit"
)

// EnvVar names the directory of the built tools in a kernel's environment (the kernel spec sets it).
const EnvVar = "ATTNBOOK_THP_TOOLS"

// Tools are the tools built, by file name.
var Tools = []string{"compile", "link"}

// stampName is the file in a tools directory naming the stock tool directory they stand in for;
// Build writes it last.
const stampName = "from"

// residentName is the file in a tools directory naming the tools that have the resident mode,
// one a line (an empty file, from before the compiler had one, stands for the linker alone).
const residentName = "linkd"

// patches are the changes, each one less kind of page fault. The tools still report the same
// version and write the same bytes (TestBuild).
var patches = []srcedit.Edit{
	// The heap: every heap mapping passes sysMapOS's handling of GODEBUG=disablethp; the default
	// setting gets the advice Go 1.21.0 gave.
	{File: "runtime/mem_linux.go",
		Anchor: "\tif debug.disablethp != 0 {\n\t\tsysNoHugePageOS(v, n)\n\t}\n",
		With:   "\tif debug.disablethp != 0 {\n\t\tsysNoHugePageOS(v, n)\n\t} else {\n\t\tsysHugePageOS(v, n) // attnbook: heap on huge pages\n\t}\n"},
	// The linker's output: built in the heap and written with one write at the end, as the linker
	// does on systems without mmap, not in a shared mapping of the file (a fault per 4 KiB page:
	// ~3,500 for a notebook cell's 14 MB program). Room for what the linker writes past filesize
	// (ELF section headers and names, the symbol table) comes with it: growing the slice for
	// them copied the whole program (~24 ms a cell's link).
	{File: "cmd/link/internal/ld/outbuf_mmap.go",
		Anchor: "func (out *OutBuf) Mmap(filesize uint64) (err error) {\n",
		With: "func (out *OutBuf) Mmap(filesize uint64) (err error) {\n" +
			"\tif oldheap := out.heap; len(out.buf) == 0 && filesize >= uint64(len(oldheap)) { // attnbook: the output in the heap (outbuf_nommap.go)\n" +
			"\t\tout.heap = make([]byte, filesize, filesize+filesize/8+1<<16)\n\t\tcopy(out.heap, oldheap)\n\t\treturn nil\n\t}\n"},
	// The package archives' objects the linker maps: mapped with their pages at once, one system
	// call where reading them took a fault per 16 pages.
	{File: "cmd/internal/bio/buf_mmap.go",
		Anchor: "syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_FILE)",
		With:   "syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_FILE|syscall.MAP_POPULATE) // attnbook: mapped at once"},
	// The function tables' names, files and pc-value data: their walks over the program's
	// functions at once, on two goroutines (pcln.go.txt). Not a page fault: the largest phase a
	// notebook cell's link has left once a resident linker has loaded its packages.
	{File: "cmd/link/internal/ld/pcln.go",
		Anchor: "\tnameOffsets := state.generateFuncnametab(ctxt, funcs)\n\tcuOffsets := state.generateFilenameTabs(ctxt, compUnits, funcs)\n\tstate.generatePctab(ctxt, funcs)\n",
		With:   "\tnameOffsets, cuOffsets := state.attnbookTabs(ctxt, compUnits, funcs) // attnbook: the three tables' walks at once\n"},
	{File: "cmd/link/internal/ld/pcln.go", Anchor: "func expandGoroot(s string) string {\n", With: pclnTabs + "func expandGoroot(s string) string {\n"},
}

// pclnTabs is the linker's attnbookTabs, added to cmd/link/internal/ld/pcln.go.
//
//go:embed pcln.go.txt
var pclnTabs string

// ErrUnsupported says the tools cannot be built here: not Linux, or a toolchain source without the
// places patched. Cells then compile and link with the stock tools.
var ErrUnsupported = errors.New("thptools: unsupported")

// Patch returns the files patches change in the toolchain at goroot, by path under goroot/src.
func Patch(goroot string) (map[string][]byte, error) {
	files, err := srcedit.Apply(goroot, patches)
	if errors.Is(err, srcedit.ErrMismatch) {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	return files, err
}

// goEnv is what Build needs to know of the go command.
type goEnv struct{ GOROOT, GOVERSION, GOTOOLDIR, GOHOSTOS, GOMODCACHE string }

func readGoEnv(ctx context.Context, goBinary string) (g goEnv, err error) {
	out, err := exec.CommandContext(ctx, goBinary, "env", "-json", "GOROOT", "GOVERSION", "GOTOOLDIR", "GOHOSTOS", "GOMODCACHE").Output()
	if err != nil {
		return g, fmt.Errorf("thptools: %s env: %w", goBinary, err)
	}
	err = json.Unmarshal(out, &g)
	return g, err
}

// Dir is where Build puts the tools for the toolchain at goroot (of version goVersion, "go1.27.3")
// and the commands c under cacheDir: one directory per toolchain, commands' versions and patch.
func Dir(cacheDir, goroot, goVersion string, c Commands) string {
	h := sha256.New()
	h.Write([]byte(goroot + "\n"))
	for _, p := range slices.Concat(patches, []srcedit.Edit{importsPatch, gonbPatch}) {
		fmt.Fprintf(h, "%s %q\n", p.File, p.With)
	}
	for _, cmd := range c.list() {
		fmt.Fprintf(h, "%s %s\n", cmd.Name, cmd.Version)
		if data, err := os.ReadFile(cmd.modFile); err == nil {
			h.Write(data)
		}
	}
	if c.Goimports != "" {
		h.Write(goenvcache.Source)
	}
	if files, err := linkd.Overlay(goroot); err == nil {
		names := slices.Sorted(maps.Keys(files))
		for _, name := range names {
			fmt.Fprintf(h, "%s %d\n", name, len(files[name]))
			h.Write(files[name])
		}
	}
	v, _, _ := strings.Cut(goVersion, " ")
	return filepath.Join(cacheDir, "attnbook", "thp-tools", v+"-"+hex.EncodeToString(h.Sum(nil)[:6]))
}

// Ready reports whether dir holds tools built by Build.
func Ready(dir string) bool {
	from, err := os.ReadFile(filepath.Join(dir, stampName))
	if err != nil || len(from) == 0 {
		return false
	}
	for _, t := range Tools {
		if _, err := os.Stat(filepath.Join(dir, t)); err != nil {
			return false
		}
	}
	return true
}

// Resident reports whether the tool in dir (Ready) named like tool ("compile", "link", or a path
// to one) has the resident mode of kernel/internal/linkd.
func Resident(dir, tool string) bool {
	if dir == "" {
		return false
	}
	names, err := os.ReadFile(filepath.Join(dir, residentName))
	if err != nil {
		return false
	}
	if len(names) == 0 {
		names = []byte("link")
	}
	return slices.Contains(strings.Fields(string(names)), filepath.Base(tool))
}

// Lookup returns the huge-page build of the stock tool at path (GOROOT/pkg/tool/GOOS_GOARCH/NAME)
// when dir ("" for none) holds one built from that tool directory, else path.
func Lookup(dir, path string) string {
	if dir == "" {
		return path
	}
	from, err := os.ReadFile(filepath.Join(dir, stampName))
	if err != nil || string(from) != filepath.Dir(path) {
		return path
	}
	built := filepath.Join(dir, filepath.Base(path))
	if _, err := os.Stat(built); err != nil {
		return path
	}
	return built
}

// Build builds Tools for goBinary's toolchain into dir (Dir of the cache, that toolchain's GOROOT and
// version, and c), and the commands c names, unless they are there already, and reports whether it
// built them. It needs no network: cmd/compile and cmd/link are in GOROOT with their dependencies
// (~2 min on 2 cores the first time, seconds from the build cache after that), and the commands'
// modules must be in the module cache.
func Build(ctx context.Context, dir, goBinary string, c Commands) (bool, error) {
	g, err := readGoEnv(ctx, goBinary)
	if err != nil {
		return false, err
	}
	if g.GOHOSTOS != "linux" || runtime.GOOS != "linux" {
		return false, fmt.Errorf("%w: transparent huge pages are Linux's", ErrUnsupported)
	}
	if Ready(dir) && (c.Goimports == "" || Goimports(dir) != "") && (c.GoNB == "" || GoNB(dir) != "") {
		return false, nil
	}
	files, err := Patch(g.GOROOT)
	if err != nil {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return false, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".build-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	resident, err := linkd.Overlay(g.GOROOT)
	if err != nil && !errors.Is(err, linkd.ErrUnsupported) {
		return false, err
	}
	for name, data := range resident {
		files[name] = data
	}
	overlay := filepath.Join(tmp, "overlay.json")
	replace := map[string]string{}
	for name, data := range files {
		file := filepath.Join(tmp, "src", name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return false, err
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return false, err
		}
		replace[filepath.Join(g.GOROOT, "src", name)] = file
	}
	ov, err := overlayJSON(replace)
	if err != nil {
		return false, err
	}
	if err := os.WriteFile(overlay, ov, 0o644); err != nil {
		return false, err
	}
	bin := filepath.Join(tmp, "bin")
	args := []string{"build", "-trimpath", "-overlay", overlay, "-o", bin + string(filepath.Separator)}
	for _, t := range Tools {
		args = append(args, "cmd/"+t)
	}
	cmd := exec.CommandContext(ctx, goBinary, args...)
	cmd.Dir = tmp
	// Building cmd/ needs no module: an empty module cache of its own does.
	cmd.Env = append(toolBuildEnv(g, filepath.Join(tmp, "modcache")), "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return false, fmt.Errorf("thptools: go %s: %w\n%s", strings.Join(args, " "), err, msg)
	}
	for _, cmd := range c.list() {
		if err := buildCommand(ctx, g, cmd, tmp, bin, replace); err != nil {
			return false, err
		}
	}
	for _, t := range Tools {
		want, err := version(ctx, filepath.Join(g.GOTOOLDIR, t))
		if err != nil {
			return false, err
		}
		if got, err := version(ctx, filepath.Join(bin, t)); err != nil || got != want {
			return false, fmt.Errorf("thptools: the built %s reports %q, the toolchain's %q (%v)", t, got, want, err)
		}
	}
	if resident != nil {
		if err := os.WriteFile(filepath.Join(bin, residentName), []byte(strings.Join(Tools, "\n")+"\n"), 0o644); err != nil {
			return false, err
		}
	}
	if err := os.WriteFile(filepath.Join(bin, stampName), []byte(g.GOTOOLDIR), 0o644); err != nil {
		return false, err
	}
	os.RemoveAll(dir)
	if err := os.Rename(bin, dir); err != nil {
		return false, err
	}
	return true, nil
}

// version is a tool's `-V=full` line: what the go command keys its build cache on.
func version(ctx context.Context, tool string) (string, error) {
	out, err := exec.CommandContext(ctx, tool, "-V=full").Output()
	return strings.TrimSpace(string(out)), err
}

// toolBuildEnv is the environment tools are built in, as the release's are: this toolchain, no
// experiment (a tool checks its own version against the go command's), no cgo, no user GOFLAGS
// (the caller sets it), and modcache as the module cache: the go command refuses an overlay of
// files inside GOMODCACHE, where a downloaded toolchain lives.
func toolBuildEnv(g goEnv, modcache string) []string {
	env := append(withoutGoVars(os.Environ()), "GOTOOLCHAIN=local", "GOROOT="+g.GOROOT,
		"GOEXPERIMENT=", "CGO_ENABLED=0", "GOMODCACHE="+modcache, "GOWORK=off", "GO111MODULE=")
	if goCache := os.Getenv("GOCACHE"); goCache != "" {
		env = append(env, "GOCACHE="+goCache)
	}
	return env
}

// overlayJSON is the go command's -overlay file replacing each file (by absolute path) with another.
func overlayJSON(replace map[string]string) ([]byte, error) {
	return json.Marshal(map[string]map[string]string{"Replace": replace})
}

// withoutGoVars drops the GO* and CGO_* variables (GOCACHE is put back by the caller).
func withoutGoVars(environ []string) []string {
	var out []string
	for _, kv := range environ {
		if !strings.HasPrefix(kv, "GO") && !strings.HasPrefix(kv, "CGO_") {
			out = append(out, kv)
		}
	}
	return out
}
