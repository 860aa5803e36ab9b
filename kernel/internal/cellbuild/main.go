// Command cellbuild runs the go commands GoNB runs for every cell in its temporary module,
// skipping the work the last run already did: `go build -o BIN` (the cell's program), `go get`
// (see goGet) and goimports' `go env -json NAME…` (see goEnv). On a 2-core machine a go command
// skipped saves 0.05 s (`go env`) to 0.3–0.8 s (`go get`) a cell.
//
// Usage, in the module's directory: cellbuild GO ARG…, where GO is the real go command and ARG…
// what GoNB passed to go; other arguments go to GO unchanged. The kernel spec's bin/go is a link to
// this command, which then takes GO from $ATTNBOOK_GO (see shim).
//
// A cell's build: the go command spends 0.1–0.25 s of every cell's build loading the ~200
// packages a notebook links and checking that none is stale, all of which were fresh a cell ago.
// When the go command builds a cell, cellbuild stamps every dependency that lives outside GOROOT
// and the module cache first (names, sizes and modification times of its directory's files and
// embedded files: the attnbook checkout a notebook edits), then records what the go command ran
// (`go build -x`: the main package's compile and link commands and their import configurations,
// which name the dependencies' archives in the build cache). The next build runs those two
// commands itself when nothing else could differ: the same environment (every GO* and CGO_*
// variable), the same go.mod, go.sum and go.work, the same main-package files with no build
// constraint, unchanged stamps, every archive still in the cache. A cell importing a package the
// last build did not link extends the record from `go list` (see extend) rather than going to
// `go build`. Anything else, and any failure (a compile error included, so the message is the go
// command's own), goes to `go build`; a build that also compiled a dependency is not recorded.
//
// Those two commands run the huge-page builds of the toolchain's compile and link that
// `kernel setup` made, when $ATTNBOOK_THP_TOOLS names them (kernel/internal/thptools): same output,
// fewer page faults (docs/notebooks.md has the figures). Each goes through its tool's resident
// server when that build has them (kernel/internal/linkd), and runs as a command when that fails.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/attnbook/attnbook/kernel/internal/goenvcache"
	"github.com/attnbook/attnbook/kernel/internal/linkd"
	"github.com/attnbook/attnbook/kernel/internal/thptools"
)

// stateDir, under the module's directory, holds the record and stands for the go command's
// $WORK/b001 in the recorded commands.
const stateDir = ".attnbook-build"

// record is what the last successful build leaves for the next one.
type record struct {
	Key      string   // hash of the environment and the module files (key)
	Files    []string // the main package's Go files, as compiled ("./main.go")
	Imports  []string // import paths the compile may use: every package the link links
	DepsOf   [][]int  // the dependencies of each of Imports (go list's Deps), as indices into it
	Main     []string // the main package's imports when recorded
	Compile  []string // compile command, run in the module's directory
	Link     []string // link command; outPlaceholder stands for BIN
	ToolEnv  []string // variables the go command gives its tools (GOROOT, GOEXPERIMENT, …)
	Archives []string // the build cache files the import configurations name
	Deps     []dep    // dependencies outside GOROOT and the module cache
	// Built is the main package's sources and BIN as the last build left them (in builtName).
	Built       string `json:"-"`
	LinkBase    string // the link's import configuration before extend first added to it
	CompileBase string // the compile's, the same (its resident compiler reads the file again)

	deps map[string][]string // go list's Deps of every package, while recording
}

// dep is a dependency's directory, its embedded files (relative to it) and their stamp.
type dep struct {
	Dir    string
	Embeds []string
	Stamp  string
}

const outPlaceholder = "\x00out"

// builtName is the file beside the record holding its Built, the one part every build changes:
// rewriting the whole record (~190 KB of JSON for a notebook's ~230 packages) took 8–10 ms a cell.
const builtName = "built"

func main() {
	if filepath.Base(os.Args[0]) == "go" {
		shim(os.Args[1:])
	}
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: cellbuild GO ARG... (run in a GoNB module by the kernel spec's go shim)")
		os.Exit(2)
	}
	goBin, args := os.Args[1], os.Args[2:]
	switch {
	case cellCommand(args) && args[0] == "build":
		build(goBin, args[2])
	case cellCommand(args) && args[0] == "get":
		os.Exit(goGet(goBin))
	case cellCommand(args) && args[0] == "env":
		os.Exit(goEnv(goBin, args))
	default:
		os.Exit(passThrough(goBin, args...))
	}
}

// cellCommand reports whether args are one of the go commands GoNB runs for every cell:
// `build -o BIN`, `get`, goimports' `env -json NAME…`.
func cellCommand(args []string) bool {
	switch {
	case len(args) == 3 && args[0] == "build" && args[1] == "-o",
		len(args) == 1 && args[0] == "get",
		len(args) >= 2 && args[0] == "env" && args[1] == "-json":
		return true
	}
	return false
}

// shimScript is the kernel spec's shell script beside this command, which wires a new GoNB module
// to the attnbook checkout and passes every other go command to the go command.
const shimScript = "go-wire"

// shim is this command run as the kernel spec's bin/go, first on the kernel's $PATH (a link to
// it named go): a cell command (cellCommand) in GoNB's module (a go.mod whose first line is
// `module gonb_…`, $GONB_TMP_DIR set) it runs itself, with $ATTNBOOK_GO as the go command; every
// other go command goes to shimScript. Doing the first without a shell saves a process start per
// go command, two or three every cell.
func shim(args []string) {
	if goBin := os.Getenv("ATTNBOOK_GO"); goBin != "" && os.Getenv("GONB_TMP_DIR") != "" && cellCommand(args) && gonbModule() {
		os.Args = append([]string{os.Args[0], goBin}, args...)
		return // main goes on as `cellbuild GO ARG…`
	}
	self, err := os.Executable()
	if err == nil {
		script := filepath.Join(filepath.Dir(self), shimScript)
		err = syscall.Exec(script, append([]string{"go"}, args...), os.Environ())
	}
	fmt.Fprintln(os.Stderr, "attnbook go shim:", err)
	os.Exit(2)
}

// gonbModule reports whether the directory's go.mod starts with GoNB's `module gonb_` line.
func gonbModule() bool {
	f, err := os.Open("go.mod")
	if err != nil {
		return false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	return strings.HasPrefix(line, "module gonb_")
}

// build is `go build -o out`, after `go get`'s check (goGet): the GoNB setup builds leaves its
// own `go get` to the build (kernel/internal/thptools); after the stock GoNB's the check finds
// nothing to do.
func build(goBin, out string) {
	if code := goGet(goBin); code != 0 {
		os.Exit(code)
	}
	err := fastBuild(goBin, out)
	trace("fast build", err)
	if err == nil {
		return
	}
	os.RemoveAll(stateDir)
	// Stamp the dependencies before the go command reads them: one edited after that either makes
	// the build compile it (nothing recorded) or differs from its stamp at the next build.
	r, err := prepare(goBin)
	if err != nil {
		trace("record", err)
		os.Exit(passThrough(goBin, "build", "-o", out))
	}
	// -x: the commands it runs, to record; a failed build is run again without -x, so that its
	// message is the go command's own.
	cmd := exec.Command(goBin, "build", "-x", "-o", out)
	var script bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, &script
	if err := cmd.Run(); err != nil {
		os.Exit(passThrough(goBin, "build", "-o", out))
	}
	var cfgs map[string]string
	if cfgs, err = r.commands(script.String(), out); err == nil {
		if r.Built, err = built(r.Files, out); err == nil {
			err = save(r, cfgs)
		}
	}
	trace("record", err)
	if err == nil {
		startServers(r)
	}
}

// startServers starts the resident compiler and linker for r's commands where the tools have
// them (linkd.Start), while the cell's program runs: else they start at the next cell's build,
// which compiles and links the ordinary way meanwhile, and so does a notebook's second cell.
func startServers(r record) {
	env := append(os.Environ(), r.ToolEnv...)
	for _, argv := range [][]string{r.Compile, r.Link} {
		argv = slices.Clone(argv)
		if !residentTool(argv) {
			continue
		}
		for i, a := range argv {
			argv[i] = strings.ReplaceAll(a, outPlaceholder, os.DevNull)
		}
		trace("start resident "+filepath.Base(argv[0]), linkd.Start(argv, env))
	}
}

// trace reports a step's outcome on stderr when $ATTNBOOK_CELLBUILD_TRACE is set (tests, and
// anyone asking why a cell took the go command's path or where its time went), after the time
// since this command started: "cellbuild: 0.181 s: resident link: ok".
func trace(step string, err error) {
	if os.Getenv("ATTNBOOK_CELLBUILD_TRACE") == "" {
		return
	}
	at := time.Since(started).Seconds()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cellbuild: %.3f s: %s: no: %v\n", at, step, err)
	} else {
		fmt.Fprintf(os.Stderr, "cellbuild: %.3f s: %s: ok\n", at, step)
	}
}

// started is when this command started, near enough: trace's origin.
var started = time.Now()

// fastBuild builds BIN from the record without the go command, or says why it can't.
func fastBuild(goBin, out string) error {
	data, err := os.ReadFile(filepath.Join(stateDir, "record.json"))
	if err != nil {
		return err
	}
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	if data, err := os.ReadFile(filepath.Join(stateDir, builtName)); err == nil {
		r.Built = string(data)
	}
	if key, err := key(goBin); err != nil || key != r.Key {
		return errors.New("environment or module files changed")
	}
	files, imports, err := mainPackage()
	if err != nil {
		return err
	}
	if !slices.Equal(files, r.Files) {
		return errors.New("main package files changed")
	}
	for _, d := range r.Deps {
		if got, err := stamp(d.Dir, d.Embeds); err != nil || got != d.Stamp {
			return fmt.Errorf("dependency %s changed", d.Dir)
		}
	}
	for _, a := range r.Archives {
		if _, err := os.Stat(a); err != nil {
			return err
		}
	}
	var added []string
	for _, p := range imports {
		if _, ok := slices.BinarySearch(r.Imports, p); !ok {
			added = append(added, p)
		}
	}
	if len(added) > 0 {
		if r.LinkBase == "" {
			r.LinkBase, r.CompileBase = importcfg(r.Link), importcfg(r.Compile)
		}
		err := extend(goBin, &r, added)
		trace("extend", err)
		if err != nil {
			return fmt.Errorf("new imports %q: %w", added, err)
		}
	}
	if built, err := built(r.Files, out); err == nil && built == r.Built {
		return nil // the go command too would find nothing to do
	}
	defer removeAside(out)()
	env := append(os.Environ(), r.ToolEnv...)
	base := r.CompileBase // the notebook's first compile configuration, or the record's
	if base == "" {
		base = importcfg(r.Compile)
	}
	if err := runTool(slices.Clone(r.Compile), env, importcfgPath(r.Compile), base); err != nil {
		return err
	}
	tmp := out + ".cellbuild"
	link := slices.Clone(r.Link)
	for i, a := range link {
		link[i] = strings.ReplaceAll(a, outPlaceholder, tmp)
	}
	if !slices.Equal(imports, r.Main) {
		if err := linkOnly(r, imports, link); err != nil {
			return err
		}
	}
	base = r.LinkBase // the notebook's first link configuration, or the record's
	if base == "" {
		base = importcfg(r.Link)
	}
	if err := runTool(link, env, importcfgPath(r.Link), base); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	if r.Built, err = built(r.Files, out); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(stateDir, builtName), r.Built)
}

// removeAside moves the last program out of the way and removes it while the cell compiles and
// links, and returns a function that waits until it is gone. Renaming the new program over it
// freed its ~14 MB of cached pages on the way out: 5 ms a cell on a 2-core Zen 5 guest.
func removeAside(out string) (wait func()) {
	aside := out + ".old"
	if err := os.Rename(out, aside); err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		os.Remove(aside)
		close(done)
	}()
	return func() { <-done }
}

// linkOnly points link's -importcfg at a configuration with only the packages a main package
// importing imports links (those, their dependencies and the runtime's), written beside the
// record once for each such set. An ordinary link would not mind the recorded configuration's
// extra packages, but a resident linker floods dead code ahead from every package of its
// configuration (their init tasks), which holds only for a program that links them all: a
// program linking fewer gets a configuration, and so a server, of its own (the recorded
// configuration's server links it meanwhile, flooding from the program's roots: linkd.RunVia).
func linkOnly(r record, imports, link []string) error {
	i := slices.Index(link, "-importcfg")
	if i < 0 || i+1 >= len(link) || len(r.DepsOf) != len(r.Imports) {
		return errors.New("no import configuration or dependency graph recorded")
	}
	keep := make([]bool, len(r.Imports))
	for _, p := range append([]string{"runtime"}, imports...) {
		j, ok := slices.BinarySearch(r.Imports, p)
		if !ok {
			return fmt.Errorf("%q is not linked", p)
		}
		keep[j] = true
		for _, d := range r.DepsOf[j] {
			keep[d] = true
		}
	}
	if !slices.Contains(keep, false) {
		return nil // the recorded configuration, and its server
	}
	cfg, err := os.ReadFile(link[i+1])
	if err != nil {
		return err
	}
	var b strings.Builder
	for line := range strings.Lines(string(cfg)) {
		p, _, ok := strings.Cut(strings.TrimPrefix(line, "packagefile "), "=")
		if j, linked := slices.BinarySearch(r.Imports, p); !ok || !strings.HasPrefix(line, "packagefile ") || !linked || keep[j] {
			b.WriteString(line) // comments, modinfo, the main package, and the packages kept
		}
	}
	sum := sha256.Sum256([]byte(b.String()))
	link[i+1] = link[i+1] + "." + hex.EncodeToString(sum[:6])
	if _, err := os.Stat(link[i+1]); err == nil {
		return nil
	}
	return os.WriteFile(link[i+1], []byte(b.String()), 0o644)
}

// runTool runs a cell's compile or link with the huge-page build of its tool when there is one:
// through that tool's resident server when the tools have one (kernel/internal/linkd), else, or
// when the server could not run it, as a command. It may go to the server of the import
// configuration file baseCfg with the content base ("" for none) where its own has none
// (linkd.RunVia).
func runTool(argv, env []string, baseCfg, base string) error {
	if residentTool(argv) {
		err := linkd.RunVia(argv, env, baseCfg, base)
		trace("resident "+filepath.Base(argv[0]), err)
		if err == nil || errors.Is(err, linkd.ErrFailed) {
			return err
		}
	}
	return run(argv, env)
}

// residentTool puts in argv[0] the huge-page build of its tool when $ATTNBOOK_THP_TOOLS has one,
// and reports whether that build has a resident server (kernel/internal/linkd).
func residentTool(argv []string) bool {
	tools := os.Getenv(thptools.EnvVar)
	stock := argv[0]
	argv[0] = thptools.Lookup(tools, stock)
	return argv[0] != stock && thptools.Resident(tools, argv[0])
}

// importcfgPath is a compile or link command's -importcfg file, "" if it has none.
func importcfgPath(argv []string) string {
	if i := slices.Index(argv, "-importcfg"); i >= 0 && i+1 < len(argv) {
		return argv[i+1]
	}
	return ""
}

// importcfg is the content of a compile or link command's -importcfg file, "" if it cannot be
// read.
func importcfg(argv []string) string {
	data, err := os.ReadFile(importcfgPath(argv))
	if err != nil {
		return ""
	}
	return string(data)
}

// built hashes the main package's files and BIN's size and modification time.
func built(files []string, out string) (string, error) {
	h := sha256.New()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(data))
		h.Write(data)
	}
	info, err := os.Stat(out)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%v %d %d\n", info.Mode(), info.Size(), info.ModTime().UnixNano())
	return hex.EncodeToString(h.Sum(nil)), nil
}

func run(argv, env []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", filepath.Base(argv[0]), err, out)
	}
	return nil
}

// key hashes what decides the build besides the sources: the go command, every GO* and CGO_*
// variable but GoNB's own and the ones read only when a program runs, and the module files.
func key(goBin string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", goBin)
	env := os.Environ()
	slices.Sort(env)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if (strings.HasPrefix(name, "GO") || strings.HasPrefix(name, "CGO_")) && !runtimeOnly(name) {
			fmt.Fprintf(h, "%q\n", kv)
		}
	}
	files, err := goenvcache.HashFiles("go.mod", "go.sum", "go.work", "go.work.sum")
	if err != nil {
		return "", err
	}
	h.Write([]byte(files))
	return hex.EncodeToString(h.Sum(nil)), nil
}

func runtimeOnly(name string) bool {
	switch name {
	case "GODEBUG", "GOTRACEBACK", "GOMAXPROCS", "GOGC", "GOMEMLIMIT":
		return true
	}
	return strings.HasPrefix(name, "GONB_") || strings.HasPrefix(name, "GOMLX_")
}

// mainPackage lists the module directory's non-test Go files ("./main.go", sorted) and their
// import paths (sorted, unique). A build constraint or cgo makes it an error: the go command
// decides those.
func mainPackage() (files, imports []string, err error) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		return nil, nil, err
	}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return nil, nil, err
		}
		for _, g := range f.Comments {
			for _, c := range g.List {
				if constraint.IsGoBuild(c.Text) || constraint.IsPlusBuild(c.Text) || strings.HasPrefix(c.Text, "//go:embed") {
					return nil, nil, fmt.Errorf("%s: build constraint or embed", name)
				}
			}
		}
		for _, s := range f.Imports {
			p, err := strconv.Unquote(s.Path.Value)
			if err != nil || p == "C" {
				return nil, nil, fmt.Errorf("%s: import %s", name, s.Path.Value)
			}
			imports = append(imports, p)
		}
		files = append(files, "./"+name)
	}
	slices.Sort(imports)
	return files, slices.Compact(imports), nil
}

// stamp hashes the names, sizes and modification times of dir's files and of its embedded
// files (paths relative to dir).
func stamp(dir string, embeds []string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%q %v %d %d\n", e.Name(), info.Mode(), info.Size(), info.ModTime().UnixNano())
	}
	for _, f := range embeds {
		info, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "embed %q %d %d\n", f, info.Size(), info.ModTime().UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// toolEnv names the go command's settings its tools read from the environment: set from `go env`,
// so that a setting made with `go env -w` reaches the compile and the link too.
var toolEnv = []string{"GOROOT", "GOOS", "GOARCH", "GOAMD64", "GOEXPERIMENT", "GOFIPS140", "CGO_ENABLED"}

// prepare starts a record before a build: its key, the main package's files and imports, the
// tools' environment and the stamps of the dependencies outside GOROOT and the module cache.
func prepare(goBin string) (r record, err error) {
	if r.Key, err = key(goBin); err != nil {
		return r, err
	}
	var imports []string
	if r.Files, imports, err = mainPackage(); err != nil {
		return r, err
	}
	env, err := goOutput(goBin, append([]string{"env", "-json", "GOMODCACHE"}, toolEnv...)...)
	if err != nil {
		return r, err
	}
	var goEnv map[string]string
	if err := json.Unmarshal(env, &goEnv); err != nil {
		return r, err
	}
	for _, name := range toolEnv {
		r.ToolEnv = append(r.ToolEnv, name+"="+goEnv[name])
	}
	list, err := goOutput(goBin, "list", "-deps", "-f", "{{.ImportPath}}\t{{join .Deps \" \"}}\t{{if not .Standard}}{{.Dir}}{{range .EmbedFiles}}\t{{.}}{{end}}{{end}}", ".")
	if err != nil {
		return r, err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return r, err
	}
	r.deps = map[string][]string{}
	for line := range strings.Lines(string(list)) {
		fields := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(fields) < 3 {
			return r, fmt.Errorf("go list: %q", line)
		}
		r.deps[fields[0]] = strings.Fields(fields[1])
		fields = fields[2:]
		dir := fields[0]
		if dir == "" || dir == cwd || within(dir, goEnv["GOROOT"]) || within(dir, goEnv["GOMODCACHE"]) {
			continue
		}
		st, err := stamp(dir, fields[1:])
		if err != nil {
			return r, err
		}
		r.Deps = append(r.Deps, dep{dir, fields[1:], st})
	}
	r.Imports, r.Main = imports, imports // Imports checked against the link's packages in commands
	return r, nil
}

// commands completes the record from `go build -x -o out`'s script (run in the module's
// directory), and returns the import configurations by file name.
func (r *record) commands(script, out string) (map[string]string, error) {
	work, rest, ok := strings.Cut(script, "\n")
	if !strings.HasPrefix(work, "WORK=") || !ok {
		return nil, errors.New("go build -x: no WORK= line")
	}
	script = strings.ReplaceAll(rest, strings.TrimPrefix(work, "WORK="), "$WORK")
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	p, cfgs, err := parseScript(script, cwd, out)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(p.Files, r.Files) {
		return nil, fmt.Errorf("go build compiled %q, the directory has %q", p.Files, r.Files)
	}
	for _, imp := range r.Imports {
		if _, ok := slices.BinarySearch(p.Imports, imp); !ok {
			return nil, fmt.Errorf("go build did not link %q", imp)
		}
	}
	r.Compile, r.Link, r.Imports, r.Archives = p.Compile, p.Link, p.Imports, p.Archives
	r.DepsOf = depsOf(r.Imports, r.deps)
	return cfgs, nil
}

// depsOf is each of sorted imports' dependencies (deps, by import path) as indices into imports.
func depsOf(imports []string, deps map[string][]string) [][]int {
	of := make([][]int, len(imports))
	for i, imp := range imports {
		for _, d := range deps[imp] {
			if j, ok := slices.BinarySearch(imports, d); ok {
				of[i] = append(of[i], j)
			}
		}
	}
	return of
}

// save writes the record, its Built (builtName) and its import configurations under stateDir.
func save(r record, cfgs map[string]string) error {
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return err
	}
	for name, content := range cfgs {
		if err := os.WriteFile(filepath.Join(stateDir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp := filepath.Join(stateDir, "record.json.tmp")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(stateDir, "record.json")); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(stateDir, builtName), r.Built)
}

func within(dir, root string) bool {
	return root != "" && (dir == root || strings.HasPrefix(dir, root+string(filepath.Separator)))
}

func goOutput(goBin string, args ...string) ([]byte, error) {
	cmd := exec.Command(goBin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

// parseScript reads `go build -x -o BIN`'s script (run in dir, $WORK for its work directory) for
// a main package whose dependencies were all built already: it must compile only $WORK/b001 (in
// dir) and link it, nothing else. It returns the record's commands, files, imports and archives,
// and the import configurations by file name.
func parseScript(script, dir, out string) (r record, cfgs map[string]string, err error) {
	cfgs = map[string]string{}
	work := "$WORK/b001"
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		return r, nil, err
	}
	sub := func(words []string) []string {
		for i, w := range words {
			w = strings.ReplaceAll(w, work+"/exe/a.out", outPlaceholder)
			words[i] = strings.ReplaceAll(w, work, abs)
		}
		return words
	}
	cd := ""
	sc := bufio.NewScanner(strings.NewReader(script))
	sc.Buffer(nil, 1<<24) // importcfg.link's modinfo line is long
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "mkdir -p "+work) ||
			strings.HasPrefix(line, "go tool buildid -w "+work) || strings.HasPrefix(line, "mv "+work+"/exe/a.out ") ||
			strings.HasPrefix(line, "cp "+work+"/_pkg_.a ") ||
			line == "rm -rf "+work+"/" || line == "mkdir -p "+filepath.Dir(out)+"/":
		case strings.HasPrefix(line, "cd "):
			cd = strings.TrimPrefix(line, "cd ")
		case strings.HasPrefix(line, "cat >"+work+"/"):
			name, _, _ := strings.Cut(strings.TrimPrefix(line, "cat >"+work+"/"), " ")
			if name != "importcfg" && name != "importcfg.link" {
				return r, nil, fmt.Errorf("unexpected file %s", name)
			}
			var b strings.Builder
			for sc.Scan() && sc.Text() != "EOF" {
				b.WriteString(sc.Text() + "\n")
			}
			cfgs[name] = strings.ReplaceAll(b.String(), work, abs)
		default:
			words, err := splitShell(line)
			if err != nil {
				return r, nil, err
			}
			var env []string
			for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "/") {
				env, words = append(env, words[0]), words[1:]
			}
			switch tool := filepath.Base(words[0]); {
			case tool == "compile" && r.Compile == nil && cd == dir && len(env) == 0:
				r.Compile, r.Files, err = compileCommand(sub(words))
			case tool == "link" && r.Link == nil && r.Compile != nil && len(env) == 1 && strings.HasPrefix(env[0], "GOROOT="):
				r.Link = dropBuildID(sub(words))
			default:
				return r, nil, fmt.Errorf("unexpected step: %.80s", line)
			}
			if err != nil {
				return r, nil, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return r, nil, err
	}
	if r.Compile == nil || r.Link == nil || cfgs["importcfg"] == "" || cfgs["importcfg.link"] == "" {
		return r, nil, errors.New("no compile and link of the main package alone")
	}
	// The compile may import any package the link already links, not only the cell's imports of
	// the moment: cells import different subsets of the same packages (goimports keeps what a
	// cell uses). So the compile's import configuration is the link's, less the main package.
	link := "# import config\n"
	for line := range strings.Lines(cfgs["importcfg.link"]) {
		p, file, ok := strings.Cut(strings.TrimPrefix(strings.TrimSuffix(line, "\n"), "packagefile "), "=")
		if !ok || !strings.HasPrefix(line, "packagefile ") || within(file, abs) {
			continue
		}
		link += line
		r.Imports = append(r.Imports, p)
		r.Archives = append(r.Archives, file)
	}
	for line := range strings.Lines(cfgs["importcfg"]) {
		if !strings.HasPrefix(line, "#") && !strings.Contains(link, "\n"+line) {
			return r, nil, fmt.Errorf("the compile's import configuration has %q, the link's not", strings.TrimSpace(line))
		}
	}
	cfgs["importcfg"] = link
	slices.Sort(r.Imports)
	slices.Sort(r.Archives)
	r.Archives = slices.Compact(r.Archives)
	return r, cfgs, nil
}

// compileCommand checks the main package's compile command (only an import configuration, no
// assembly, cgo or embedded files) and returns it without its build ID, and its Go files.
func compileCommand(words []string) (argv, files []string, err error) {
	argv = dropBuildID(words)
	for _, w := range argv {
		if w == "-embedcfg" || w == "-asmhdr" || w == "-symabis" {
			return nil, nil, fmt.Errorf("compile %s", w)
		}
	}
	i := slices.Index(argv, "-pack")
	if i < 0 {
		return nil, nil, errors.New("compile without -pack")
	}
	files = argv[i+1:]
	if len(files) == 0 {
		return nil, nil, errors.New("compile without files")
	}
	return argv, slices.Sorted(slices.Values(files)), nil
}

// dropBuildID removes `-buildid ID` and `-buildid=ID`: the go command's cache keys, not needed to
// run the program.
func dropBuildID(words []string) []string {
	var out []string
	for i := 0; i < len(words); i++ {
		switch {
		case words[i] == "-buildid" && i+1 < len(words):
			i++
		case strings.HasPrefix(words[i], "-buildid="):
		default:
			out = append(out, words[i])
		}
	}
	return out
}

// splitShell splits a command line the way the go command quotes it in -x output: words
// separated by spaces, 'single' and "double" quotes (backslash escapes inside double quotes).
func splitShell(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case ' ', '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		case '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated quote")
			}
			w.WriteString(line[i+1 : i+1+j])
			i, inWord = i+1+j, true
		case '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				w.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, errors.New("unterminated quote")
			}
			inWord = true
		case '\\':
			if i+1 < len(line) {
				i++
				w.WriteByte(line[i])
			}
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
