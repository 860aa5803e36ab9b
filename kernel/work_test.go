package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestStudentLines: everything reaches the log; the terminal gets a kernel restart and Jupyter's
// critical errors only — not GoNB's start-up self-tests (E… lines), gopls or a failed cell's build.
func TestStudentLines(t *testing.T) {
	var log, term bytes.Buffer
	s := &studentLines{log: &log, terminal: &term, logName: "out/jupyter.log"}
	in := []string{
		"[I 13:01:02.345 NotebookApp] Serving notebooks from local directory: /x/work",
		"E1125 13:01:03.000000   123 kernel.go:99] failed self-test: no such pipe",
		"I1125 13:01:03.100000   123 gopls.go:10] gopls started",
		`E1125 13:01:09.000000   123 exec.go:77] failed to run "/usr/local/go/bin/go build -o /tmp/gonb_1/gonb_1": exit status 1`,
		"goroutine 1 [running]:",
		"[I 13:02:00.000 NotebookApp] KernelRestarter: restarting kernel (1/5), new random ports",
		"[C 13:03:00.000 NotebookApp] Running as root is not recommended.",
		"[C 13:04:00.000 NotebookApp] received signal 15, stopping",
	}
	for _, l := range in {
		// Lines may arrive in pieces.
		s.Write([]byte(l[:len(l)/2]))
		s.Write([]byte(l[len(l)/2:] + "\n"))
	}
	if log.String() != strings.Join(in, "\n")+"\n" {
		t.Errorf("log got %q", log.String())
	}
	want := "up: a notebook's kernel died and was restarted: run its cells again from the top (details: out/jupyter.log)\n" +
		"up: Jupyter: Running as root is not recommended. (details: out/jupyter.log)\n"
	if term.String() != want {
		t.Errorf("terminal got\n%s\nwant\n%s", term.String(), want)
	}
}

func TestKernelLanguageInfo(t *testing.T) {
	if kernelLanguageInfo("/no/such/gonb") != nil {
		t.Error("language_info for a missing gonb")
	}
	self, err := os.Executable() // a Go binary, like gonb
	if err != nil {
		t.Fatal(err)
	}
	info := kernelLanguageInfo(self)
	if info == nil || !strings.HasPrefix(info["version"].(string), "go1.") || info["name"] != "go" || len(info) != 7 {
		t.Errorf("got %v: want GoNB's seven fields with this binary's Go version", info)
	}
}
