package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

func cmdUp(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	port := fs.Int("port", 8888, "first port to try on 127.0.0.1 (the next free one is used)")
	browser := fs.Bool("browser", false, "also open a web browser")
	lab := fs.Bool("lab", false, "JupyterLab: the local one when installed, else from the classroom Docker image with this\ncheckout mounted (the image is built when missing: 10 to 40 minutes)")
	image := fs.String("image", defaultImage(), "the classroom image -lab runs when JupyterLab is not installed ($ATTNBOOK_IMAGE)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: go run ./kernel up [-port N] [-browser] [-lab [-image NAME]]\n\nRuns setup, brings your workspace work/ (copies of notebooks/) up to date, then starts JupyterLab (or the\nclassic Notebook) on it at 127.0.0.1 with a random token. Jupyter's log goes to out/jupyter.log.\nWith -lab and no local JupyterLab, runs JupyterLab from the classroom image (Docker) with this checkout\nmounted: edits under pkg/ and notebooks/ show there, and its kernel builds from this checkout. Ctrl-C stops it.")
		fs.PrintDefaults()
	}
	if code, done := parseFlags(fs, args, e.Stdout); done {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	if *lab && !probePython(ctx).Has("jupyterlab") {
		return upLab(ctx, e, *port, *image, *browser)
	}
	e.Quiet = true
	if _, err := setup(ctx, e); err != nil {
		fmt.Fprintf(e.Stderr, "up: %v\n", err)
		return exitMissing
	}
	py := probePython(ctx)
	if py == nil || !py.CanServe() {
		cmdline, _ := jupyterInstallCommand()
		fmt.Fprintf(e.Stderr, "up: no Jupyter server (JupyterLab or Notebook) found: %s\n", cmdline)
		return exitMissing
	}
	wo := e.workspaceOptions()
	if err := syncWorkspace(ctx, e, wo, true); err != nil {
		fmt.Fprintf(e.Stderr, "up: %v\n", err)
		return exitFail
	}
	p, err := freePort(*port)
	if err != nil {
		fmt.Fprintf(e.Stderr, "up: %v\n", err)
		return exitFail
	}
	token, err := randomToken()
	if err != nil {
		fmt.Fprintf(e.Stderr, "up: %v\n", err)
		return exitFail
	}
	logPath := jupyterLog(e.Root)
	logFile, err := openLog(logPath)
	if err != nil {
		fmt.Fprintf(e.Stderr, "up: the log file: %v\n", err)
		return exitFail
	}
	defer logFile.Close()
	args, urlPath := serverArgs(py.Has("jupyterlab"), wo.Work, p, *browser, os.Geteuid() == 0, classicCustom(e.Root, py))
	cmd := exec.Command(py.Path, args...)
	cmd.Dir = wo.Work
	// The token goes through the environment, not argv, so other users cannot read it in ps.
	cmd.Env = append(os.Environ(), "JUPYTER_TOKEN="+token)
	// Jupyter's log, and its kernels' (GoNB's start-up self-tests, gopls, a cell's failed build
	// and stack traces), go to the log file; the terminal gets what a student needs.
	out := &studentLines{log: logFile, terminal: e.Stderr, logName: e.rel(logPath)}
	cmd.Stdout, cmd.Stderr = out, out

	base := fmt.Sprintf("http://127.0.0.1:%d", p)
	type result struct {
		relayed bool
		err     error
	}
	done := make(chan result, 1)
	go func() {
		// Jupyter gets its own process group: Ctrl-C reaches only us, and we ask it to stop with
		// SIGTERM (it then shuts its kernels down); a second Ctrl-C, or 30s, kills it.
		relayed, err := runChild(cmd, relay{OwnGroup: true, First: syscall.SIGTERM, KillAfter: 30 * time.Second})
		done <- result{relayed, err}
	}()
	ready := make(chan bool, 1)
	go func() { ready <- waitReady(base, token, 90*time.Second) }()
	select {
	case r := <-done:
		fmt.Fprintf(e.Stderr, "up: Jupyter exited before it served: %v; the end of %s:\n%s\n", r.err, e.rel(logPath), indent(lastLines(logPath, 15), "    "))
		return exitFail
	case ok := <-ready:
		if !ok {
			fmt.Fprintf(e.Stderr, "up: Jupyter did not answer at %s within 90s (still starting: see %s)\n", base, e.rel(logPath))
		} else {
			fmt.Fprintf(e.Stdout, "\nup: open this in your browser (%s, your notebooks in %s/):\n\n    %s%s?token=%s\n\n"+
				"up: start with 00_start_here.ipynb. Ctrl-C here stops Jupyter. Log: %s\n\n",
				py.Server(), e.rel(wo.Work), base, urlPath, token, e.rel(logPath))
		}
	}
	r := <-done
	var exitErr *exec.ExitError
	switch {
	case r.err == nil:
		fmt.Fprintln(e.Stdout, "up: Jupyter stopped")
		return exitOK
	case r.relayed && errors.As(r.err, &exitErr):
		fmt.Fprintf(e.Stdout, "up: Jupyter stopped (%v)\n", r.err)
		return exitOK
	default:
		fmt.Fprintf(e.Stderr, "up: Jupyter failed: %v\n", r.err)
		return exitFail
	}
}

// serverArgs are the Python arguments that start JupyterLab (lab) or the classic Notebook on
// 127.0.0.1:port rooted at dir, and the URL path of its file browser. Jupyter refuses to run as
// root (as in a container) without --allow-root. custom, for the classic Notebook, lists the
// folders its custom/custom.css and custom.js are looked up in, first match winning (see
// classicCustom); JupyterLab has no such file.
func serverArgs(lab bool, dir string, port int, browser, asRoot bool, custom []string) (args []string, urlPath string) {
	app, module, urlPath := "NotebookApp", "notebook", "/tree"
	rootFlag := "notebook_dir"
	if lab {
		app, module, urlPath, rootFlag = "ServerApp", "jupyterlab", "/lab", "root_dir"
	}
	args = []string{"-m", module,
		"--" + app + ".ip=127.0.0.1",
		"--" + app + ".port=" + strconv.Itoa(port),
		"--" + app + ".port_retries=0",
		"--" + app + "." + rootFlag + "=" + dir,
	}
	if !browser {
		args = append(args, "--no-browser")
	}
	if asRoot {
		args = append(args, "--allow-root")
	}
	if !lab && len(custom) > 0 {
		// The Notebook (v6) copies tornado_settings over its web settings, static_custom_path
		// among them; the JSON form of a dict on the command line is the one that takes a list.
		settings, _ := json.Marshal(map[string][]string{"static_custom_path": custom})
		args = append(args, "--NotebookApp.tornado_settings="+string(settings))
	}
	return args, urlPath
}

// classicCustom is where the classic Notebook looks for custom/custom.css and custom.js: the
// user's own Jupyter config first, then kernel/classic (no arrow drawn on each tab of Go code),
// then the Notebook's defaults.
func classicCustom(root string, py *python) []string {
	var dirs []string
	if py.ConfigDir != "" {
		dirs = append(dirs, filepath.Join(py.ConfigDir, "custom"))
	}
	dirs = append(dirs, filepath.Join(root, "kernel", "classic"))
	if py.NotebookStatic != "" {
		dirs = append(dirs, filepath.Join(py.NotebookStatic, "custom"))
	}
	return dirs
}

// freePort returns the first port from start on that 127.0.0.1 can listen on.
func freePort(start int) (int, error) {
	for p := start; p < start+100 && p < 65536; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err == nil {
			l.Close()
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free port in %d..%d on 127.0.0.1", start, start+99)
}

// randomToken is 24 random bytes in hex (crypto/rand).
func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// waitReady polls the server's status API with the token until it answers 200.
func waitReady(base, token string, limit time.Duration) bool {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest("GET", base+"/api/status", nil)
		req.Header.Set("Authorization", "token "+token)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}
