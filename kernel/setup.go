package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"go/version"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/attnbook/attnbook/kernel/internal/thptools"
)

// Pinned tools. GoNB is installed from go.mod's tool line (`go install` in the repository), and
// gonbVersion must match it (a test checks). gopls follows the toolchain: each gopls release
// needs a recent Go (v0.23.0 needs Go 1.26, which go.mod now requires too); an older toolchain
// gets the newest gopls it can build. goimports is built from the golang.org/x/tools that gopls
// requires, so one module download serves both.
const (
	gonbModule  = thptools.GoNBModule
	gonbVersion = "v0.11.5"
	toolsModule = thptools.GoimportsModule
	goplsModule = "golang.org/x/tools/gopls"
)

// toolPin is the gopls release and the x/tools version goimports is built from, for a toolchain.
type toolPin struct {
	MinGo     int // minor version of Go 1.x the pin needs
	Gopls     string
	Goimports string
}

// toolPins, newest first: the first whose MinGo the toolchain meets is used.
var toolPins = []toolPin{
	{26, "v0.23.0", "v0.47.1-0.20260707181000-a299dadba899"},
	{23, "v0.20.0", "v0.35.1-0.20250728180453-01a3475a31bc"},
}

// pinFor picks the tool pin for a `go env GOVERSION` like "go1.26.8" (the newest one when the
// version can't be read, e.g. a devel toolchain).
func pinFor(goVersion string) toolPin {
	var minor int
	if _, err := fmt.Sscanf(goVersion, "go1.%d", &minor); err != nil {
		return toolPins[0]
	}
	for _, p := range toolPins {
		if minor >= p.MinGo {
			return p
		}
	}
	return toolPins[len(toolPins)-1]
}

// cellCommands are the commands setup builds with changes for cells beside the huge-page compile
// and link (kernel/internal/thptools): goimports and GoNB, at the versions pinned here, GoNB with
// the dependencies the checkout's go.mod requires (as its tool line installs it).
func (e *env) cellCommands() thptools.Commands {
	return thptools.Commands{Goimports: pinFor(e.Go.GOVERSION).Goimports, GoNB: gonbVersion,
		GoNBModFile: filepath.Join(e.Root, "go.mod")}
}

// aptPackages is what `setup` installs on Debian/Ubuntu when Jupyter is missing.
var aptPackages = []string{"jupyter-notebook", "jupyter-client", "python3-nbclient", "jupyter-nbconvert", "python3-ipykernel"}

// goTool is a Go binary the kernel needs in the tool directory.
type goTool struct {
	Name     string   // binary name
	Module   string   // module whose version the binary's build info must show
	Version  string   // pinned version
	Install  []string // arguments to `go`
	Required bool     // GoNB runs without gopls (no completion), not without goimports
	Why      string
}

func (t goTool) Path(e *env) string { return filepath.Join(e.Go.ToolDir(), t.Name) }

// Installed is the version of the installed binary, or "".
func (t goTool) Installed(e *env) string { return toolVersion(t.Path(e), t.Module) }

func goTools(goVersion string) []goTool {
	pin := pinFor(goVersion)
	goimportsVersion, goplsVersion := pin.Goimports, pin.Gopls
	return []goTool{
		{Name: "gonb", Module: gonbModule, Version: gonbVersion, Install: []string{"install", gonbModule}, Required: true,
			Why: "the Go kernel (version from go.mod's tool line)"},
		{Name: "goimports", Module: toolsModule, Version: goimportsVersion, Required: true,
			Install: []string{"install", toolsModule + "/cmd/goimports@" + goimportsVersion}, Why: "GoNB adds imports with it"},
		{Name: "gopls", Module: goplsModule, Version: goplsVersion, Required: false,
			Install: []string{"install", goplsModule + "@" + goplsVersion}, Why: "completion and docs in the notebook"},
	}
}

// step is one setup step; run returns what it did ("ok" when nothing was needed) and a detail.
type step struct {
	Name string
	Run  func(ctx context.Context) (did, detail string, err error)
}

type stepResult struct {
	Name, Did, Detail string
	Took              time.Duration
	Err               error
}

func cmdSetup(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("setup", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: go run ./kernel setup\n\nInstalls GoNB, goimports and gopls (pinned), Jupyter when missing, and the attnbook kernel spec;\nsigns the notebooks (jupyter trust) and warms the Go build cache. Takes no flags.")
	}
	if code, done := parseFlags(fs, args, e.Stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	if _, err := setup(ctx, e); err != nil {
		fmt.Fprintf(e.Stderr, "setup: %v\n", err)
		return exitMissing
	}
	return exitOK
}

// setup runs the steps, printing each with its time and a summary. It returns the names of the
// steps that warned (setup went on without what they do) and the first failure.
func setup(ctx context.Context, e *env) (warned []string, err error) {
	start := time.Now()
	if !e.Quiet {
		fmt.Fprintf(e.Stdout, "setup: attnbook at %s\n", e.Root)
	}
	var spec string
	steps := []step{{"Go toolchain", func(context.Context) (string, string, error) { return checkGo(e) }}}
	for _, t := range goTools(e.Go.GOVERSION) {
		steps = append(steps, step{t.Name, func(ctx context.Context) (string, string, error) {
			return installTool(ctx, e, t)
		}})
	}
	steps = append(steps,
		step{"Jupyter", func(ctx context.Context) (string, string, error) { return ensureJupyter(ctx, e) }},
		// modules before thp tools: they build GoNB offline from the module cache, with the
		// versions go.mod requires (on a fresh machine, before: GoNB's build missed x/sys v0.6.0).
		step{"modules", func(ctx context.Context) (string, string, error) { return downloadModules(ctx, e) }},
		step{"thp tools", func(ctx context.Context) (string, string, error) { return buildTHPTools(ctx, e) }},
		step{"kernel spec", func(ctx context.Context) (string, string, error) {
			did, detail, err := registerKernel(ctx, e)
			spec, _, _ = strings.Cut(detail, "\n")
			return did, detail, err
		}},
		step{"trust", func(ctx context.Context) (string, string, error) { return trustNotebooks(ctx, e) }},
		step{"corpus", func(ctx context.Context) (string, string, error) { return ensureCorpus(ctx, e) }},
		step{"build cache", func(ctx context.Context) (string, string, error) { return warmBuildCache(ctx, e) }},
	)
	var results []stepResult
	for i, s := range steps {
		t0 := time.Now()
		did, detail, err := s.Run(ctx)
		r := stepResult{Name: s.Name, Did: did, Detail: detail, Took: time.Since(t0), Err: err}
		switch {
		case errors.Is(err, errWarning):
			r.Did = "warning"
		case err != nil:
			r.Did = "FAILED"
		}
		results = append(results, r)
		if e.Quiet && err == nil && r.Did == "ok" {
			continue // up: only the steps that did something
		}
		fmt.Fprintf(e.Stdout, "  %d/%d %-12s %-9s %6.2fs  %s\n", i+1, len(steps), s.Name, r.Did, r.Took.Seconds(), detail)
		if err != nil {
			fmt.Fprintf(e.Stdout, "      %v\n", err)
			if !errors.Is(err, errWarning) {
				return summarize(e, results, start, spec)
			}
		}
	}
	return summarize(e, results, start, spec)
}

// errWarning marks a step failure that does not stop setup.
var errWarning = errors.New("warning")

func summarize(e *env, results []stepResult, start time.Time, spec string) ([]string, error) {
	var did, failed, warned []string
	ok := 0
	for _, r := range results {
		switch {
		case errors.Is(r.Err, errWarning):
			warned = append(warned, r.Name)
		case r.Err != nil:
			failed = append(failed, r.Name)
		case r.Did == "ok":
			ok++
		default:
			did = append(did, r.Name+" ("+r.Did+")")
		}
	}
	line := fmt.Sprintf("setup: %d steps in %.1fs: %d already done", len(results), time.Since(start).Seconds(), ok)
	if len(did) > 0 {
		line += "; " + strings.Join(did, ", ")
	}
	if len(warned) > 0 {
		line += "; warning: " + strings.Join(warned, ", ")
	}
	if len(failed) > 0 {
		line += "; FAILED: " + strings.Join(failed, ", ")
	}
	fmt.Fprintln(e.Stdout, line)
	for _, r := range results {
		if r.Err != nil && !errors.Is(r.Err, errWarning) {
			return warned, fmt.Errorf("%s: %w", r.Name, r.Err)
		}
	}
	if spec != "" && !e.Quiet {
		fmt.Fprintf(e.Stdout, "setup: kernel %q (%s) in %s; notebooks in %s\n", KernelName, KernelDisplayName, spec, e.rel(filepath.Join(e.Root, "notebooks")))
		if e.Go.SIMD() {
			fmt.Fprintf(e.Stdout, "setup: cells, tests and builds use GOEXPERIMENT=%s (GoMLX's SIMD kernels)", e.Go.Experiment())
			if d := e.Go.GODEBUG(); d != "" {
				fmt.Fprintf(e.Stdout, " and run with GODEBUG=%s", d)
			}
			fmt.Fprintln(e.Stdout)
		}
	}
	return warned, nil
}

// buildTHPTools builds the toolchain's compile and link with their heap on huge pages, for warm
// cells (kernel/internal/thptools). Where that cannot be done cells use the stock tools.
func buildTHPTools(ctx context.Context, e *env) (string, string, error) {
	dir, err := e.thpToolsDir()
	if err != nil {
		return "skipped", "", fmt.Errorf("%w: %v: cells compile and link with the stock tools", errWarning, err)
	}
	built, err := thptools.Build(ctx, dir, e.Go.GoBinary(), e.cellCommands())
	switch {
	case errors.Is(err, thptools.ErrUnsupported):
		return "skipped", fmt.Sprintf("%v: cells compile and link with the stock tools", err), nil
	case err != nil:
		return "warning", "", fmt.Errorf("%w: %v\ncells compile and link with the stock tools", errWarning, err)
	case built:
		return "built", e.rel(dir), nil
	}
	return "ok", e.rel(dir), nil
}

func checkGo(e *env) (string, string, error) {
	gomod := filepath.Join(e.Root, "go.mod")
	want := "go" + goDirective(gomod)
	if want != "go" && version.Compare(e.Go.GOVERSION, want) < 0 {
		return "", "", fmt.Errorf("%s is older than go.mod's %s: %s", e.Go.GOVERSION, want, newerGoHint(e.Go.GOTOOLCHAIN, goModLine(gomod, "toolchain")))
	}
	return "ok", fmt.Sprintf("%s in %s; tools in %s", e.Go.GOVERSION, e.Go.GOROOT, e.Go.ToolDir()), nil
}

// newerGoHint says how to get a Go as new as go.mod asks, given the go command's GOTOOLCHAIN and
// go.mod's toolchain line ("go1.27.3", or ""): where GOTOOLCHAIN=local keeps the go command from
// fetching that toolchain, the export that lets it.
func newerGoHint(goToolchain, toolchain string) string {
	const install = "install a newer Go from https://go.dev/dl"
	if goToolchain != "local" || toolchain == "" {
		return install
	}
	return fmt.Sprintf("GOTOOLCHAIN=local keeps the go command from fetching go.mod's toolchain: "+
		"export GOTOOLCHAIN=%s (the go command downloads it from the module proxy) and run this again, or %s", toolchain, install)
}

// goDirective is go.mod's go version ("1.24.3"), or "".
func goDirective(gomod string) string { return goModLine(gomod, "go") }

// goModLine is the value of go.mod's first line starting with the directive (go "1.27",
// toolchain "go1.27.3"), or "".
func goModLine(gomod, directive string) string {
	data, _ := os.ReadFile(gomod)
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), directive+" "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func installTool(ctx context.Context, e *env, t goTool) (string, string, error) {
	have := t.Installed(e)
	if have == t.Version {
		return "ok", t.Version + " at " + t.Path(e), nil
	}
	did := "installed"
	if have != "" {
		did = "updated"
	}
	if err := runGo(ctx, e, e.Stdout, t.Install...); err != nil {
		return "", "", err
	}
	if got := t.Installed(e); got != t.Version {
		return "", "", fmt.Errorf("after go %s, %s reports version %q, want %s", strings.Join(t.Install, " "), t.Path(e), got, t.Version)
	}
	if have != "" {
		return did, fmt.Sprintf("%s at %s (was %s)", t.Version, t.Path(e), have), nil
	}
	return did, t.Version + " at " + t.Path(e), nil
}

// runGo runs the go command in the repository root, streaming its output to w.
func runGo(ctx context.Context, e *env, w io.Writer, args ...string) error {
	fmt.Fprintf(w, "      $ go %s\n", strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, e.Go.GoBinary(), args...)
	cmd.Dir = e.Root
	cmd.Env = e.Go.Environ()
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w", strings.Join(args, " "), err)
	}
	return nil
}

func ensureJupyter(ctx context.Context, e *env) (string, string, error) {
	py := probePython(ctx)
	if py != nil && py.CanRun() && py.CanServe() {
		return "ok", jupyterSummary(py), nil
	}
	cmdline, canRun := jupyterInstallCommand()
	if !canRun {
		return "", "", fmt.Errorf("Jupyter (a server and nbclient) is missing; install it with:\n        %s\n      then run go run ./kernel setup again", cmdline)
	}
	for _, args := range [][]string{{"update"}, append([]string{"install", "-y", "--no-install-recommends"}, aptPackages...)} {
		fmt.Fprintf(e.Stdout, "      $ apt-get %s\n", strings.Join(args, " "))
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = e.Stdout, e.Stdout
		if err := cmd.Run(); err != nil {
			return "", "", fmt.Errorf("apt-get %s: %w", args[0], err)
		}
	}
	py = probePython(ctx)
	if py == nil || !py.CanRun() || !py.CanServe() {
		return "", "", fmt.Errorf("Jupyter still not found after apt-get install %s", strings.Join(aptPackages, " "))
	}
	return "installed", jupyterSummary(py), nil
}

func jupyterSummary(py *python) string {
	return fmt.Sprintf("%s, nbclient %s (%s)", py.Server(), py.Packages["nbclient"], py.Path)
}

// jupyterInstallCommand is the command that installs Jupyter here, and whether setup may run it
// itself (as root on Debian/Ubuntu).
func jupyterInstallCommand() (string, bool) {
	_, errApt := exec.LookPath("apt-get")
	_, errDeb := os.Stat("/etc/debian_version")
	if errApt == nil && errDeb == nil {
		cmd := "apt-get update && apt-get install -y " + strings.Join(aptPackages, " ")
		if os.Geteuid() == 0 {
			return cmd, true
		}
		return "sudo apt-get update && sudo apt-get install -y " + strings.Join(aptPackages, " "), false
	}
	return "python3 -m pip install --user jupyterlab nbclient nbconvert", false
}

// userSpecDir is the kernel spec directory in the user's Jupyter data dir.
func userSpecDir(py *python) (string, error) {
	data, err := jupyterDataDir(py)
	if err != nil {
		return "", err
	}
	return filepath.Join(data, "kernels", KernelName), nil
}

// registerKernel writes the user's "attnbook" kernel spec. It serves the checkout each notebook is
// in (see newKernelSpec), so checkouts share it; its default checkout, for notebooks outside any,
// stays the one that registered it while that one exists (defaultRoot).
func registerKernel(ctx context.Context, e *env) (string, string, error) {
	dir, err := userSpecDir(probePython(ctx))
	if err != nil {
		return "", "", err
	}
	root, note := defaultRoot(readSpec(dir), e.Root)
	o := e.specOptions(dir, root)
	o.ByFolder = true
	changed, err := writeSpecDir(o, e.Go.GoBinary())
	if err != nil {
		return "", "", err
	}
	if err := buildCellBuild(ctx, e, dir); err != nil {
		return "", "", err
	}
	detail := dir
	if note != "" {
		detail += "\n      " + note
	}
	if changed {
		return "written", detail, nil
	}
	return "ok", detail, nil
}

// defaultRoot picks the default checkout of the user's kernel spec (have, nil when none) when
// setup runs in checkout root: another checkout that still exists keeps it (a running Jupyter
// does not change under anyone's feet); a missing one is replaced. note says what happened when
// the default is not simply root.
func defaultRoot(have *kernelSpec, root string) (def, note string) {
	if have == nil {
		return root, ""
	}
	old := have.Env[RootEnv]
	switch {
	case old == "" || old == root:
		return root, ""
	case isCheckout(old):
		return old, fmt.Sprintf("notebooks in this checkout get this checkout; notebooks outside any checkout keep the default %s (registered there first)", old)
	default:
		return root, fmt.Sprintf("default checkout was %s, which is gone: now %s", old, root)
	}
}

// isCheckout reports whether dir is an attnbook repository root.
func isCheckout(dir string) bool { return modulePath(filepath.Join(dir, "go.mod")) == Module }

// trustNotebooks signs the repository's notebooks in Jupyter's notebook signature database
// (nbformat's `jupyter trust`), so the classic Notebook opens them trusted and shows the HTML and
// SVG they produce. A signature covers the file's content: setup signs again after a change.
func trustNotebooks(ctx context.Context, e *env) (string, string, error) {
	return trustFolder(ctx, filepath.Join(e.Root, "notebooks"))
}

// trustFolder signs the notebooks of dir that Jupyter's notary does not know (see trustNotebooks).
func trustFolder(ctx context.Context, dir string) (string, string, error) {
	nbs, _ := filepath.Glob(filepath.Join(dir, "*.ipynb"))
	if len(nbs) == 0 {
		return "ok", "no notebooks", nil
	}
	py := probePython(ctx)
	if py == nil || !py.Has("nbformat") {
		return "warning", "", fmt.Errorf("%w: nbformat is missing: the classic Notebook will say \"Not Trusted\" until you run a notebook's cells", errWarning)
	}
	untrusted, err := untrustedNotebooks(ctx, py, nbs)
	if err != nil {
		return "warning", "", fmt.Errorf("%w: checking notebook signatures: %v", errWarning, err)
	}
	if len(untrusted) == 0 {
		return "ok", fmt.Sprintf("%d notebooks trusted", len(nbs)), nil
	}
	out, err := exec.CommandContext(ctx, py.Path, append([]string{"-m", "nbformat.sign"}, untrusted...)...).CombinedOutput()
	if err != nil {
		return "warning", "", fmt.Errorf("%w: jupyter trust: %v\n%s", errWarning, err, indent(string(out), "        "))
	}
	return "signed", fmt.Sprintf("%d of %d notebooks signed (jupyter trust)", len(untrusted), len(nbs)), nil
}

// untrustedNotebooks returns the notebooks whose signature Jupyter's notary does not know.
func untrustedNotebooks(ctx context.Context, py *python, nbs []string) ([]string, error) {
	const script = `import sys, nbformat
from nbformat.sign import NotebookNotary
n = NotebookNotary()
for p in sys.argv[1:]:
    if not n.check_signature(nbformat.read(p, as_version=4)):
        print(p)
`
	out, err := exec.CommandContext(ctx, py.Path, append([]string{"-c", script}, nbs...)...).Output()
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, line := range strings.Split(string(out), "\n") {
		if line != "" {
			paths = append(paths, line)
		}
	}
	return paths, nil
}

// warmPackages are compiled by setup so the first notebook cell links instead of compiling GoMLX.
var warmPackages = []string{"./pkg/...", "github.com/gomlx/gomlx/core/graph", "github.com/gomlx/gomlx/core/tensors", "github.com/janpfeifer/gonb/gonbui"}

func warmBuildCache(ctx context.Context, e *env) (string, string, error) {
	cmd := exec.CommandContext(ctx, e.Go.GoBinary(), append([]string{"build"}, warmPackages...)...)
	cmd.Dir = e.Root
	cmd.Env = withCellBuildEnv(e.Go.Environ(), wantNoXLA()) // as the kernel's cells build, or the cache misses
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "warning", "", fmt.Errorf("%w: go build %s failed; notebooks importing a broken package will fail:\n%s", errWarning, strings.Join(warmPackages, " "), indent(string(out), "        "))
	}
	return "ok", "compiled pkg/..., GoMLX graph and tensors, gonbui", nil
}

func indent(s, prefix string) string {
	s = strings.TrimRight(s, "\n")
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
