package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/attnbook/attnbook/kernel/internal/thptools"
)

// The classroom image `up -lab` runs where JupyterLab is not installed (docker/Dockerfile).
const (
	imageEnv     = "ATTNBOOK_IMAGE"
	imageDefault = "attnbook:dev"
	// imageRoot is where the image keeps the repository ($ATTNBOOK_ROOT there); -lab mounts the
	// checkout over it.
	imageRoot = "/home/jovyan/attnbook"
)

func defaultImage() string {
	if v := os.Getenv(imageEnv); v != "" {
		return v
	}
	return imageDefault
}

// labContainer names the container of `up -lab` for a checkout and port: one per checkout and
// port, so two checkouts can each have theirs.
func labContainer(root string, port int) string {
	h := sha256.Sum256([]byte(root))
	return fmt.Sprintf("attnbook-lab-%s-%d", hex.EncodeToString(h[:4]), port)
}

// labRunArgs are the `docker run` arguments of `up -lab`: JupyterLab on 127.0.0.1:port, the token
// from the environment (not argv, where other users could read it) and ATTNBOOK_SHORT when set, the checkout mounted over the
// image's copy. As root (uid 0) the container runs as root too, so Lab can save into the
// checkout; otherwise as the image's user, jovyan (UID 1000).
func labRunArgs(root, image, name string, port int, asRoot bool) []string {
	args := []string{"run", "--rm", "--name", name,
		"-p", fmt.Sprintf("127.0.0.1:%d:8888", port),
		"-e", "JUPYTER_TOKEN",
		// Notebook 10's short setting, as without -lab ("set ATTNBOOK_SHORT=1 before starting
		// Jupyter"); docker passes it only when it is set here.
		"-e", "ATTNBOOK_SHORT",
		"-v", root + ":" + imageRoot,
	}
	if asRoot {
		args = append(args, "--user", "0:0")
	}
	args = append(args, image, "start-notebook.sh")
	if asRoot {
		args = append(args, "--allow-root")
	}
	return args
}

// upLab runs JupyterLab from the classroom image with the checkout mounted, building the image
// when it is missing, until Ctrl-C.
func upLab(ctx context.Context, e *env, port int, image string, browser bool) int {
	docker, err := exec.LookPath("docker")
	if err != nil {
		fmt.Fprintln(e.Stderr, "up: -lab: JupyterLab is not installed here and neither is Docker: install JupyterLab (python3 -m pip install --user jupyterlab) or Docker (https://docs.docker.com/engine/install/)")
		return exitMissing
	}
	if out, err := exec.CommandContext(ctx, docker, "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		fmt.Fprintf(e.Stderr, "up: -lab: no Docker daemon answers (docker info: %v): %s\n", err, oneLine(string(out)))
		return exitMissing
	}
	if err := exec.CommandContext(ctx, docker, "image", "inspect", image).Run(); err != nil {
		if image != imageDefault && os.Getenv(imageEnv) == "" {
			fmt.Fprintf(e.Stderr, "up: -lab: image %s not found\n", image)
			return exitMissing
		}
		fmt.Fprintf(e.Stdout, "up: building the classroom image %s (docker/build-base.sh, docker/build.sh): 10 to 40 minutes on a cold machine (38 on 2 cores)\n", image)
		for _, script := range [][]string{{"docker/build-base.sh"}, {"docker/build.sh", "-t", image}} {
			cmd := exec.CommandContext(ctx, "bash", script...)
			cmd.Dir = e.Root
			cmd.Stdout, cmd.Stderr = e.Stdout, e.Stderr
			if _, err := runChild(cmd, relay{}); err != nil {
				fmt.Fprintf(e.Stderr, "up: -lab: %s failed: %v\n", strings.Join(script, " "), err)
				return exitFail
			}
		}
	}
	// The workspace, work/ in the checkout, as without -lab; JupyterLab opens it. The copies carry
	// the language_info of the image's GoNB (JupyterLab, too, marks a notebook changed when the
	// kernel reports another).
	wo := e.workspaceOptions()
	wo.LanguageInfo = imageLanguageInfo(ctx, docker, image)
	if err := syncWorkspace(ctx, e, wo, false); err != nil {
		fmt.Fprintf(e.Stderr, "up: %v\n", err)
		return exitFail
	}
	p, err := freePort(port)
	if err != nil {
		fmt.Fprintf(e.Stderr, "up: %v\n", err)
		return exitFail
	}
	token, err := randomToken()
	if err != nil {
		fmt.Fprintf(e.Stderr, "up: %v\n", err)
		return exitFail
	}
	name := labContainer(e.Root, p)
	_ = exec.Command(docker, "rm", "-f", name).Run() // a container left by a killed run
	asRoot := os.Geteuid() == 0
	// $ATTNBOOK_LAB_ARGS: more JupyterLab flags (the browser test exposes the app object with
	// --LabApp.expose_app_in_browser=True).
	cmd := exec.Command(docker, append(labRunArgs(e.Root, image, name, p, asRoot), strings.Fields(os.Getenv("ATTNBOOK_LAB_ARGS"))...)...)
	cmd.Env = append(os.Environ(), "JUPYTER_TOKEN="+token)
	// JupyterLab's log and its kernels' go to the log file, as without -lab.
	logPath := jupyterLog(e.Root)
	logFile, err := openLog(logPath)
	if err != nil {
		fmt.Fprintf(e.Stderr, "up: the log file: %v\n", err)
		return exitFail
	}
	defer logFile.Close()
	out := &studentLines{log: logFile, terminal: e.Stderr, logName: e.rel(logPath)}
	cmd.Stdout, cmd.Stderr = out, out
	defer exec.Command(docker, "rm", "-f", name).Run()

	base := fmt.Sprintf("http://127.0.0.1:%d", p)
	type result struct {
		relayed bool
		err     error
	}
	done := make(chan result, 1)
	go func() {
		// docker run relays SIGTERM to the container (tini, then JupyterLab, which stops its kernels).
		relayed, err := runChild(cmd, relay{OwnGroup: true, First: syscall.SIGTERM, KillAfter: 30 * time.Second})
		done <- result{relayed, err}
	}()
	ready := make(chan bool, 1)
	go func() { ready <- waitReady(base, token, 3*time.Minute) }()
	select {
	case r := <-done:
		fmt.Fprintf(e.Stderr, "up: the %s container exited before JupyterLab served: %v; the end of %s:\n%s\n", image, r.err, e.rel(logPath), indent(lastLines(logPath, 15), "    "))
		return exitFail
	case ok := <-ready:
		if !ok {
			fmt.Fprintf(e.Stderr, "up: JupyterLab did not answer at %s within 3 minutes (see %s)\n", base, e.rel(logPath))
		} else {
			url := fmt.Sprintf("%s/lab/tree/%s/%s?token=%s", base, filepath.Base(imageRoot), workDir, token)
			fmt.Fprintf(e.Stdout, "\nup: JupyterLab from %s (container %s) serves %s, mounted at %s, with the %q kernel at\n\n    %s\n\nup: Ctrl-C stops it.\n\n",
				image, name, e.Root, imageRoot, KernelDisplayName, url)
			if os.Geteuid() != 0 && os.Geteuid() != 1000 {
				fmt.Fprintf(e.Stdout, "up: the container runs as UID 1000: JupyterLab can save into %s only where UID 1000 may write\n", e.Root)
			}
			if browser {
				openBrowser(url)
			}
		}
	}
	r := <-done
	var exitErr *exec.ExitError
	switch {
	case r.err == nil, r.relayed && errors.As(r.err, &exitErr):
		fmt.Fprintln(e.Stdout, "up: JupyterLab stopped")
		return exitOK
	default:
		fmt.Fprintf(e.Stderr, "up: JupyterLab failed: %v\n", r.err)
		return exitFail
	}
}

// openBrowser opens url with the desktop's opener, when there is one.
func openBrowser(url string) {
	for _, opener := range []string{"xdg-open", "open"} {
		if p, err := exec.LookPath(opener); err == nil {
			_ = exec.Command(p, url).Start()
			return
		}
	}
}

// imageLanguageInfo is the language_info the image's GoNB reports (see kernelLanguageInfo): the Go
// version of the GoNB its kernel spec starts — the one setup built beside the huge-page tools
// ($ATTNBOOK_THP_TOOLS in the spec; built without GOEXPERIMENT, "go1.27.3"), else the installed
// one ("go1.27.3-X:simd") — read with `go version` inside the image; nil when that fails.
func imageLanguageInfo(ctx context.Context, docker, image string) map[string]any {
	out, err := exec.CommandContext(ctx, docker, "run", "--rm", "--entrypoint", "sh", image, "-c", imageGoNBVersion).Output()
	if err != nil {
		return nil
	}
	_, v, ok := strings.Cut(strings.TrimSpace(string(out)), ": ")
	if !ok || !strings.HasPrefix(v, "go") {
		return nil
	}
	return map[string]any{"name": "go", "version": v, "mimetype": "text/x-go", "file_extension": ".go",
		"pygments_lexer": "", "codemirror_mode": "", "nbconvert_exporter": ""}
}

// imageGoNBVersion prints `go version` of the GoNB the image's attnbook kernel spec starts.
var imageGoNBVersion = `t=$(jupyter kernelspec list --json | python3 -c 'import json, sys; ` +
	`print(json.load(sys.stdin)["kernelspecs"]["attnbook"]["spec"]["env"].get("ATTNBOOK_THP_TOOLS", ""))'); ` +
	`g="$(go env GOPATH)/bin/gonb"; ` +
	`if [ -n "$t" ] && [ -x "` + thptools.GoNBPath("$t") + `" ]; then g="` + thptools.GoNBPath("$t") + `"; fi; ` +
	`go version "$g"`
