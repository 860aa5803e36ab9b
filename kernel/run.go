package main

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/attnbook/attnbook/internal/nbrun/ipynb"
)

//go:embed run.py
var runScript string

type runOptions struct {
	OutDir         string
	Timeout        time.Duration // per cell
	StartupTimeout time.Duration
	Notebooks      []string
}

// parseRunArgs parses run's flags, which may come before or after the notebooks. With -h it prints
// run's help to stdout and returns flag.ErrHelp.
func parseRunArgs(root string, args []string, stdout, stderr io.Writer) (runOptions, error) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := runOptions{}
	fs.StringVar(&o.OutDir, "o", filepath.Join(root, "out", "executed"), "folder for the executed copies (never the notebook's own)")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "limit for one cell (the first cell may compile GoMLX)")
	fs.DurationVar(&o.StartupTimeout, "startup-timeout", 2*time.Minute, "limit for the kernel to start")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: go run ./kernel run [-o DIR] [-timeout D] [-startup-timeout D] NOTEBOOK...")
		fmt.Fprintln(w, "\nExecutes Go notebooks with the attnbook kernel through Jupyter's nbclient, prints each cell's")
		fmt.Fprintln(w, "wall time and exits 1 naming the notebook and the cell (numbered from 1, markdown cells counted,")
		fmt.Fprintln(w, "and its first meaningful line) on a cell error. A notebook that declares another kernel")
		fmt.Fprintln(w, "(e.g. python3) is refused. Ctrl-C or a cell timeout stops the run; the executed copy keeps")
		fmt.Fprintln(w, "what ran so far.")
		fs.PrintDefaults()
	}
	if wantsHelp(args) {
		parseFlags(fs, args, stdout) // prints the help to stdout
		return o, flag.ErrHelp
	}
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			return o, err
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		o.Notebooks = append(o.Notebooks, rest[0])
		rest = rest[1:]
	}
	if len(o.Notebooks) == 0 {
		fs.Usage()
		return o, errors.New("no notebook given")
	}
	if o.Timeout <= 0 || o.StartupTimeout <= 0 {
		return o, errors.New("timeouts must be positive")
	}
	return o, nil
}

// runJob is one notebook to execute: validated source, and where its executed copy goes.
type runJob struct {
	Source, Output string
	Notebook       *ipynb.Notebook
}

// planRun validates every notebook and output path before anything runs.
func planRun(o runOptions) ([]runJob, []error) {
	var jobs []runJob
	var errs []error
	outDir, err := filepath.Abs(o.OutDir)
	if err != nil {
		return nil, []error{err}
	}
	outputs := map[string]string{}
	for _, name := range o.Notebooks {
		src, err := filepath.Abs(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		st, err := os.Stat(src)
		switch {
		case errors.Is(err, os.ErrNotExist):
			errs = append(errs, fmt.Errorf("%s: no such file", name))
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		case st.IsDir():
			errs = append(errs, fmt.Errorf("%s: is a folder, not a notebook", name))
			continue
		}
		nb, err := ipynb.Load(src)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, errors.Unwrap(err)))
			continue
		}
		if err := checkKernel(nb); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		out := filepath.Join(outDir, filepath.Base(src))
		if samePath(out, src) {
			errs = append(errs, fmt.Errorf("%s: the output folder %s holds the notebook itself: refusing to write over the source; pick another -o", name, o.OutDir))
			continue
		}
		if prev, dup := outputs[out]; dup {
			errs = append(errs, fmt.Errorf("%s: same file name as %s: both would be written to %s", name, prev, out))
			continue
		}
		outputs[out] = name
		jobs = append(jobs, runJob{Source: src, Output: out, Notebook: nb})
	}
	return jobs, errs
}

// checkKernel refuses a notebook that declares a kernel other than a Go one: run executes
// notebooks with the attnbook kernel (GoNB), which would only report Python's code as Go syntax
// errors. Go notebooks are those naming attnbook (attnbook-* too), gonb, or the language go; a
// notebook without kernel metadata is run as Go.
func checkKernel(nb *ipynb.Notebook) error {
	name := nb.KernelName()
	ks, _ := nb.Metadata["kernelspec"].(map[string]any)
	lang, _ := ks["language"].(string)
	if li, ok := nb.Metadata["language_info"].(map[string]any); ok && lang == "" {
		lang, _ = li["name"].(string)
	}
	switch {
	case name == "" && lang == "",
		name == KernelName, strings.HasPrefix(name, KernelName+"-"), name == "gonb",
		strings.EqualFold(lang, "go"):
		return nil
	}
	display, _ := ks["display_name"].(string)
	what := fmt.Sprintf("kernel %q", name)
	if display != "" {
		what += " (" + display + ")"
	}
	if lang != "" {
		what += ", language " + lang
	}
	return fmt.Errorf("declares %s: kernel run executes Go notebooks with the %s kernel only; run it with its own kernel, e.g. jupyter nbconvert --to notebook --execute --output-dir out/executed FILE", what, KernelName)
}

// samePath reports whether a (which may not exist yet) and b name the same file.
func samePath(a, b string) bool {
	ad, err1 := filepath.EvalSymlinks(filepath.Dir(a))
	bd, err2 := filepath.EvalSymlinks(filepath.Dir(b))
	if err1 != nil || err2 != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	if filepath.Join(ad, filepath.Base(a)) == filepath.Join(bd, filepath.Base(b)) {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

func cmdRun(ctx context.Context, e *env, args []string) int {
	o, err := parseRunArgs(e.Root, args, e.Stdout, e.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case err != nil:
		fmt.Fprintf(e.Stderr, "run: %v\n", err)
		return exitUsage
	}
	jobs, errs := planRun(o)
	for _, err := range errs {
		fmt.Fprintf(e.Stderr, "run: %v\n", err)
	}
	if len(errs) > 0 {
		return exitFail
	}
	py, err := runPrerequisites(ctx, e)
	if err != nil {
		fmt.Fprintf(e.Stderr, "run: %v\n", err)
		return exitMissing
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		fmt.Fprintf(e.Stderr, "run: %v\n", err)
		return exitFail
	}
	jupyterPath, tmpDir, cleanup, err := privateKernel(ctx, e)
	if err != nil {
		fmt.Fprintf(e.Stderr, "run: kernel spec: %v\n", err)
		return exitFail
	}
	defer cleanup()

	failed := 0
	var all []float64
	for _, j := range jobs {
		res := executeNotebook(ctx, e, py, kernelEnv{jupyterPath, tmpDir}, j, o)
		all = append(all, res.cellSeconds...)
		if res.err != nil {
			failed++
			fmt.Fprintf(e.Stderr, "run: FAIL %s\n", res.err)
		}
		if res.interrupted {
			return exitFail
		}
	}
	if len(jobs) > 1 {
		fmt.Fprintf(e.Stdout, "run: %d of %d notebooks ok; %d code cells, median %.2fs per cell\n", len(jobs)-failed, len(jobs), len(all), median(all))
	}
	if failed > 0 {
		return exitFail
	}
	return exitOK
}

// runPrerequisites checks what executing a notebook needs: a Go as new as go.mod's, nbclient,
// GoNB, goimports and the modules go.mod requires.
func runPrerequisites(ctx context.Context, e *env) (*python, error) {
	if _, _, err := checkGo(e); err != nil {
		return nil, err
	}
	py := probePython(ctx)
	if py == nil || !py.CanRun() {
		return nil, fmt.Errorf("Jupyter's nbclient is not installed (looked in %s): run go run ./kernel setup", strings.Join(pythonCandidates(), ", "))
	}
	for _, t := range goTools(e.Go.GOVERSION) {
		if !t.Required {
			continue
		}
		switch have := t.Installed(e); {
		case have == "":
			return nil, fmt.Errorf("%s is not installed in %s: run go run ./kernel setup", t.Name, e.Go.ToolDir())
		case have != t.Version:
			return nil, fmt.Errorf("%s is %s, want %s: run go run ./kernel setup", t.Path(e), have, t.Version)
		}
	}
	if err := modulesOffline(ctx, e); err != nil {
		return nil, fmt.Errorf("%v: run go run ./kernel setup", err)
	}
	return py, nil
}

// privateKernel writes the attnbook kernel spec (with plain-text errors) into a temporary Jupyter
// data dir, so run always uses this repository whatever kernel setup registered, and returns
// the $JUPYTER_PATH that puts it first, and a private $TMPDIR for the kernel: GoNB makes its module
// (gonb_<id>/) and each cell's named pipes (gonb_pipe_*) there, and a kernel stopped by a timeout
// or Ctrl-C leaves them behind; cleanup removes the lot.
func privateKernel(ctx context.Context, e *env) (jupyterPath, tmpDir string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "attnbook-run-")
	if err != nil {
		return "", "", nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	tmpDir = filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmpDir, 0o700); err != nil {
		cleanup()
		return "", "", nil, err
	}
	o := e.specOptions(filepath.Join(dir, "kernels", KernelName), e.Root)
	o.RawError = true
	if _, err := writeSpecDir(o, e.Go.GoBinary()); err != nil {
		cleanup()
		return "", "", nil, err
	}
	if err := buildCellBuild(ctx, e, o.SpecDir); err != nil {
		cleanup()
		return "", "", nil, err
	}
	jupyterPath = dir
	if old := os.Getenv("JUPYTER_PATH"); old != "" {
		jupyterPath += string(os.PathListSeparator) + old
	}
	return jupyterPath, tmpDir, cleanup, nil
}

// runEvent is one JSON line from run.py.
type runEvent struct {
	Event     string   `json:"event"`
	Index     int      `json:"index"`
	Seconds   float64  `json:"seconds"`
	OK        bool     `json:"ok"`
	EName     string   `json:"ename"`
	EValue    string   `json:"evalue"`
	Traceback []string `json:"traceback"`
	Message   string   `json:"message"`
}

type runResult struct {
	cellSeconds []float64
	err         error
	interrupted bool // Ctrl-C: run stops after this notebook
}

// kernelEnv is where run's kernel comes from (JUPYTER_PATH) and where it keeps temporary files.
type kernelEnv struct{ JupyterPath, TmpDir string }

func executeNotebook(ctx context.Context, e *env, py *python, k kernelEnv, j runJob, o runOptions) runResult {
	name := e.rel(j.Source)
	fmt.Fprintf(e.Stdout, "run: %s\n", name)
	cfg, _ := json.Marshal(map[string]any{
		"notebook": j.Source, "output": j.Output, "kernel": KernelName, "cwd": filepath.Dir(j.Source),
		"timeout": o.Timeout.Seconds(), "startup_timeout": o.StartupTimeout.Seconds(),
	})
	cmd := exec.CommandContext(ctx, py.Path, "-c", runScript, string(cfg))
	cmd.Dir = filepath.Dir(j.Source)
	// ATTNBOOK_HEADLESS: no browser answers widgets here, so display.ExploreHeads draws its
	// static grid at once instead of waiting for a front end.
	cmd.Env = append(os.Environ(), "JUPYTER_PATH="+k.JupyterPath, "TMPDIR="+k.TmpDir, "PYTHONUNBUFFERED=1",
		"ATTNBOOK_HEADLESS=1")
	stdout, pw := io.Pipe()
	cmd.Stdout = pw
	var logs tailBuffer // the kernel's own log lines (GoNB logs to stderr): shown only on failure
	cmd.Stderr = &logs

	start := time.Now()
	var res runResult
	var failure, fatal string
	waitErr := make(chan error, 1)
	go func() {
		_, err := runChild(cmd, relay{OwnGroup: true, First: os.Interrupt, KillAfter: 20 * time.Second})
		pw.Close()
		waitErr <- err
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev runEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Event {
		case "kernel":
			fmt.Fprintf(e.Stdout, "  kernel %s started in %.2fs\n", KernelName, ev.Seconds)
		case "cell":
			res.cellSeconds = append(res.cellSeconds, ev.Seconds)
			first := cellFirstLine(j.Notebook, ev.Index)
			status := ""
			if !ev.OK {
				status = "FAILED "
			}
			fmt.Fprintf(e.Stdout, "  cell %2d %7.2fs  %s%s\n", ev.Index+1, ev.Seconds, status, first)
			if !ev.OK {
				for _, line := range tracebackLines(ev.Traceback, 20) {
					fmt.Fprintf(e.Stdout, "      | %s\n", line)
				}
				failure = fmt.Sprintf("%s cell %d (%q): %s", name, ev.Index+1, first, errorSummary(ev.EName, ev.EValue))
			}
		case "fatal":
			fatal = ev.Message
		}
	}
	err := <-waitErr
	res.interrupted = fatal == "interrupted"
	var exitErr *exec.ExitError
	switch {
	case res.interrupted && failure != "":
		res.err = fmt.Errorf("%s — executed copy of what ran: %s", failure, e.rel(j.Output))
	case res.interrupted:
		res.err = fmt.Errorf("%s: interrupted — executed copy of what ran: %s", name, e.rel(j.Output))
	case failure != "":
		res.err = fmt.Errorf("%s — executed copy: %s", failure, e.rel(j.Output))
	case fatal != "" || (err != nil && !errors.As(err, &exitErr)) || (err != nil && exitErr.ExitCode() != 0):
		if fatal == "" {
			fatal = fmt.Sprint(err)
		}
		for _, line := range logs.Lines(25) {
			fmt.Fprintf(e.Stdout, "      | %s\n", line)
		}
		res.err = fmt.Errorf("%s: %s", name, oneLine(fatal))
	default:
		fmt.Fprintf(e.Stdout, "run: ok %s: %d code cells in %.1fs (median %.2fs per cell) → %s\n",
			name, len(res.cellSeconds), time.Since(start).Seconds(), median(res.cellSeconds), e.rel(j.Output))
	}
	return res
}

// cellFirstLine names cell i by its first meaningful line: not blank, and not a GoNB line that
// says nothing about the cell (`%%`, `%main`, `%test`), at most 60 bytes.
func cellFirstLine(nb *ipynb.Notebook, i int) string {
	if i < 0 || i >= len(nb.Cells) {
		return ""
	}
	line := ""
	for _, l := range strings.Split(string(nb.Cells[i].Source), "\n") {
		l = strings.TrimSpace(l)
		switch l {
		case "", "%%", "%main", "%test":
			continue
		}
		line = l
		break
	}
	if line == "" {
		line = nb.Cells[i].FirstLine()
	}
	if len(line) > 60 {
		line = strings.ToValidUTF8(line[:57], "") + "..."
	}
	return line
}

var (
	gonbModuleLine = regexp.MustCompile(`^# gonb_[0-9a-f]+$`)
	mainGoPosition = regexp.MustCompile(`^(?:\S*/)?main(?:_test)?\.go:\d+:\d+:\s*`)
	ansiEscape     = regexp.MustCompile("\x1b\\[[0-9;]*m")
)

// errorSummary makes one line of a GoNB error: compiler output without the temporary module's
// name and main.go positions (meaningless in a notebook), at most two lines joined.
func errorSummary(ename, evalue string) string {
	var parts []string
	for _, line := range strings.Split(ansiEscape.ReplaceAllString(evalue, ""), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || gonbModuleLine.MatchString(line) {
			continue
		}
		parts = append(parts, mainGoPosition.ReplaceAllString(line, ""))
		if len(parts) == 2 {
			break
		}
	}
	msg := strings.Join(parts, "; ")
	switch {
	case msg == "":
		msg = ename
	case msg != ename && (strings.HasPrefix(ename, "exit status") || strings.HasPrefix(ename, "signal:")):
		msg += " (" + ename + ")"
	}
	return oneLine(msg)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:297] + "..."
	}
	return s
}

func tracebackLines(tb []string, max int) []string {
	var lines []string
	for _, t := range tb {
		for _, l := range strings.Split(ansiEscape.ReplaceAllString(t, ""), "\n") {
			if strings.TrimSpace(l) != "" {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) > max {
		lines = append(lines[:max], "…")
	}
	return lines
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// tailBuffer keeps the last 64 KiB written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - 64<<10; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

// Lines returns the last n lines.
func (t *tailBuffer) Lines(n int) []string {
	lines := strings.Split(strings.TrimRight(string(bytes.ToValidUTF8(t.b, nil)), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return nil
	}
	return lines
}
