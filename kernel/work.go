package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/attnbook/attnbook/internal/workspace"
	"github.com/attnbook/attnbook/pkg/gpt"
)

// The student's workspace: `up` opens Jupyter on <checkout>/work, copies of notebooks/ kept up to
// date by internal/workspace. It lives in the checkout (git-ignored), not in a user data folder:
// it sits at the same depth as notebooks/, so a notebook's relative paths (../data) and the
// kernel's search for the checkout it serves work unchanged; each checkout has its own; and a
// student finds and backs it up next to the course. (`git clean -x` would delete it: the README
// says so.)
const workDir = "work"

// takeCommand is the command that takes the course's version of a notebook (%s: its name).
const takeCommand = "go run ./kernel work -take %s"

func cmdWork(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("work", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	take := fs.String("take", "", "replace your copy of this notebook (e.g. 08_exercises) by the course's version; yours moves to work/kept/")
	course := fs.String("course", "", "the course's notebooks (default notebooks/ in this checkout)")
	work := fs.String("work", "", "the workspace (default work/ in this checkout; the classroom image: each student's folder)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: go run ./kernel work [-take NOTEBOOK] [-course DIR] [-work DIR]\n\nBrings your workspace, work/ (your copies of notebooks/; git ignores it), up to date with the course:\nadds new notebooks, updates the ones you have not edited, and lists those the course changed since\nyour copy. `up` does this every time it starts.")
		fs.PrintDefaults()
	}
	if code, done := parseFlags(fs, args, e.Stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	o := e.workspaceOptions()
	if *course != "" {
		o.Course = *course
	}
	if *work != "" {
		o.Work = *work
	}
	if *take != "" {
		kept, err := workspace.Take(o, *take, time.Now())
		if err != nil {
			fmt.Fprintf(e.Stderr, "work: %v\n", err)
			return exitFail
		}
		name := strings.TrimSuffix(filepath.Base(*take), ".ipynb") + ".ipynb"
		if kept != "" {
			fmt.Fprintf(e.Stdout, "work: your version of %s is kept as %s\n", name, e.rel(kept))
		}
		fmt.Fprintf(e.Stdout, "work: %s is the course's version now (reload it in the browser)\n", e.rel(filepath.Join(o.Work, name)))
		trustFolder(ctx, o.Work)
		return exitOK
	}
	if err := syncWorkspace(ctx, e, o, true); err != nil {
		fmt.Fprintf(e.Stderr, "work: %v\n", err)
		return exitFail
	}
	return exitOK
}

// workspaceOptions: notebooks/ into work/, with the language_info the GoNB the kernel spec starts
// reports (setup's build beside the cell tools, built without the user's GOEXPERIMENT, or the
// installed one).
func (e *env) workspaceOptions() workspace.Options {
	return workspace.Options{Course: filepath.Join(e.Root, "notebooks"), Work: filepath.Join(e.Root, workDir),
		LanguageInfo: kernelLanguageInfo(e.specOptions("", e.Root).gonb())}
}

// syncWorkspace brings the workspace up to date, prints what changed, and with sign signs the
// copies in this machine's Jupyter (jupyter trust: the classic Notebook then opens them Trusted; a
// copy's language_info makes it a file of its own).
func syncWorkspace(ctx context.Context, e *env, o workspace.Options, sign bool) error {
	r, err := workspace.Sync(o)
	if err != nil {
		return err
	}
	r.Work = e.rel(r.Work) + "/"
	r.Write(e.Stdout, takeCommand)
	if !sign {
		return nil
	}
	if _, _, err := trustFolder(ctx, o.Work); err != nil {
		fmt.Fprintf(e.Stderr, "work: signing the copies: %v\n", err)
	}
	return nil
}

// kernelLanguageInfo is the language_info GoNB v0.11.5 sends in its kernel_info_reply (its
// messages.go): runtime.Version() of the gonb binary, read from its build info. Copies carry it so
// the front end finds nothing to change when the kernel starts. nil when gonb is not installed.
func kernelLanguageInfo(gonb string) map[string]any {
	info, err := readBuildInfo(gonb)
	if err != nil {
		return nil
	}
	return map[string]any{"name": "go", "version": info.GoVersion, "mimetype": "text/x-go", "file_extension": ".go",
		"pygments_lexer": "", "codemirror_mode": "", "nbconvert_exporter": ""}
}

// jupyterLog is where `up` writes the Jupyter server's and its kernels' output (GoNB's start-up
// self-tests, gopls, a failed cell's build command and stack traces): doctor names it.
func jupyterLog(root string) string { return filepath.Join(root, "out", "jupyter.log") }

// studentLines copies a Jupyter server's output to log and passes to terminal only what a student
// needs: that a kernel died and was restarted, and the server's own critical errors.
type studentLines struct {
	mu       sync.Mutex
	log      io.Writer
	terminal io.Writer
	logName  string
	buf      []byte
}

func (s *studentLines) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log.Write(p)
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			break
		}
		if msg := forStudent(string(s.buf[:i])); msg != "" {
			fmt.Fprintf(s.terminal, "up: %s (details: %s)\n", msg, s.logName)
		}
		s.buf = s.buf[i+1:]
	}
	return len(p), nil
}

// forStudent is what a line of Jupyter's log means to a student, or "" for nothing.
func forStudent(line string) string {
	switch {
	case strings.Contains(line, "KernelRestarter: restarting kernel"):
		return "a notebook's kernel died and was restarted: run its cells again from the top"
	case strings.HasPrefix(line, "[C ") && !strings.Contains(line, "received signal"): // not our own Ctrl-C
		return "Jupyter: " + strings.TrimSpace(line[strings.IndexByte(line, ']')+1:])
	}
	return ""
}

// openLog creates the log file (its folder too), replacing the last run's.
func openLog(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return os.Create(path)
}

// lastLines is the last n lines of a file, for when Jupyter fails to start.
func lastLines(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// firstHourChecks are doctor's lines about the student's side: the corpus, the workspace and the
// log of the last `up`.
func firstHourChecks(e *env) []check {
	corpus := check{Name: "corpus", Optional: true}
	for _, p := range gpt.CorpusPlaces(e.Root) {
		if err := checkCorpusFile(p); err == nil {
			corpus.Value = "Tiny Shakespeare at " + e.rel(p)
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			corpus.Value = fmt.Sprintf("%s is not the pinned file (%v)", e.rel(p), err)
			break
		}
	}
	if corpus.Value == "" || !strings.HasPrefix(corpus.Value, "Tiny") {
		if corpus.Value == "" {
			corpus.Value = "Tiny Shakespeare not found (notebooks 07 and 10 need it)"
		}
		corpus.Problem = "optional: go run ./kernel setup downloads it, or put it at " + corpusDest(e.Root)
	}
	work := check{Name: "work", Value: e.rel(filepath.Join(e.Root, workDir)) + "/: your copies of notebooks/ (up opens Jupyter there; go run ./kernel work updates it)"}
	if _, err := os.Stat(filepath.Join(e.Root, workDir)); err != nil {
		work.Value = e.rel(filepath.Join(e.Root, workDir)) + "/ not made yet: go run ./kernel up makes it"
	}
	log := check{Name: "log", Value: e.rel(jupyterLog(e.Root)) + ": Jupyter's and the kernels' output from the last up (kernel start-up, gopls, build errors)"}
	if _, err := os.Stat(jupyterLog(e.Root)); err != nil {
		log.Value = e.rel(jupyterLog(e.Root)) + " (none yet: up writes Jupyter's and the kernels' output there)"
	}
	return []check{corpus, work, log}
}
