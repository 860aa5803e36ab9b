package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseRunArgs(t *testing.T) {
	o, err := parseRunArgs("/repo", []string{"a.ipynb", "-o", "/tmp/x", "b.ipynb", "-timeout", "30s"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Notebooks, ",") != "a.ipynb,b.ipynb" || o.OutDir != "/tmp/x" || o.Timeout != 30*time.Second {
		t.Errorf("parseRunArgs = %+v", o)
	}
	o, err = parseRunArgs("/repo", []string{"a.ipynb"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil || o.OutDir != "/repo/out/executed" || o.Timeout != 10*time.Minute || o.StartupTimeout != 2*time.Minute {
		t.Errorf("defaults: %+v, %v", o, err)
	}
	for _, args := range [][]string{nil, {"-o", "x"}, {"a.ipynb", "-timeout", "0s"}, {"a.ipynb", "-timeout", "soon"}} {
		if _, err := parseRunArgs("/repo", args, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
			t.Errorf("parseRunArgs(%q): want an error", args)
		}
	}
}

const goodNotebook = `{"cells": [{"cell_type": "code", "metadata": {}, "source": ["%%\n", "fmt.Println(1)"], "outputs": [], "execution_count": null}],
 "metadata": {"kernelspec": {"name": "attnbook"}}, "nbformat": 4, "nbformat_minor": 5}`

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestPlanRunRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, filepath.Join(dir, "nb", "good.ipynb"), goodNotebook)
	for _, tc := range []struct {
		name, content, want string
	}{
		{"missing.ipynb", "", "no such file"},
		{"text.ipynb", "this is not JSON", "not a notebook: invalid JSON"},
		{"array.ipynb", "[1, 2]", "not a notebook"},
		{"nocells.ipynb", `{"metadata": {}, "nbformat": 4}`, `not a notebook: no "cells" list`},
		{"cellsnull.ipynb", `{"cells": null}`, `"cells" is not a list`},
		{"badcell.ipynb", `{"cells": [{"cell_type": "python", "source": ""}], "nbformat": 4}`, `cell 0 has cell_type "python"`},
		{"v3.ipynb", `{"cells": [], "nbformat": 3}`, "nbformat 4"},
	} {
		path := filepath.Join(dir, tc.name)
		if tc.content != "" {
			writeFile(t, path, tc.content)
		}
		jobs, errs := planRun(runOptions{OutDir: filepath.Join(dir, "out"), Notebooks: []string{path}})
		if len(jobs) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want) || !strings.Contains(errs[0].Error(), tc.name) {
			t.Errorf("%s: jobs %v errs %v, want one error naming the file and containing %q", tc.name, jobs, errs, tc.want)
		}
	}

	// Never over the source: -o pointing at the notebook's own folder (also through a symlink).
	link := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "nb"), link); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{filepath.Join(dir, "nb"), link, filepath.Join(dir, "nb", ".")} {
		_, errs := planRun(runOptions{OutDir: out, Notebooks: []string{good}})
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "refusing to write over the source") {
			t.Errorf("-o %s: errs %v, want a refusal", out, errs)
		}
	}
	// Two notebooks with one name would overwrite each other's copy.
	other := writeFile(t, filepath.Join(dir, "other", "good.ipynb"), goodNotebook)
	if _, errs := planRun(runOptions{OutDir: filepath.Join(dir, "out"), Notebooks: []string{good, other}}); len(errs) != 1 || !strings.Contains(errs[0].Error(), "same file name") {
		t.Errorf("duplicate names: errs %v", errs)
	}
	jobs, errs := planRun(runOptions{OutDir: filepath.Join(dir, "out"), Notebooks: []string{good}})
	if len(errs) != 0 || len(jobs) != 1 || jobs[0].Output != filepath.Join(dir, "out", "good.ipynb") {
		t.Errorf("good notebook: jobs %+v errs %v", jobs, errs)
	}
}

// Bad input fails before anything needs Jupyter: one line per problem on stderr, exit 1, and the
// files are left as they were.
func TestRunBadInputExitCode(t *testing.T) {
	dir := t.TempDir()
	notJSON := writeFile(t, filepath.Join(dir, "notjson.ipynb"), "{{{")
	var stdout, stderr bytes.Buffer
	code := Main(context.Background(), []string{"run", "-o", filepath.Join(dir, "out"), filepath.Join(dir, "missing.ipynb"), notJSON}, &stdout, &stderr)
	if code != exitFail {
		t.Errorf("exit %d, want %d", code, exitFail)
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "missing.ipynb: no such file") || !strings.Contains(lines[1], "notjson.ipynb: not a notebook") {
		t.Errorf("stderr:\n%s\nwant one line per bad notebook", stderr.String())
	}
	if data, _ := os.ReadFile(notJSON); string(data) != "{{{" {
		t.Errorf("the bad notebook changed: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Errorf("an output folder was made for bad input")
	}
}

func TestErrorSummary(t *testing.T) {
	for _, tc := range []struct{ ename, evalue, want string }{
		{"ERROR", "# gonb_39c20928\n./main.go:11:13: undefined: undefinedThing\n", "undefined: undefinedThing"},
		{"ERROR", "/tmp/gonb_39c20928/main.go:3:1: expected declaration, found x", "expected declaration, found x"},
		{"ERROR", "failed to run \"/x/bin/go get\": exit status 1\n\ngo: module github.com/attnbook/attnbook/pkg/nosuch: reading https://proxy.golang.org/...: 403 Forbidden\n\tserver response: gone\n",
			`failed to run "/x/bin/go get": exit status 1; go: module github.com/attnbook/attnbook/pkg/nosuch: reading https://proxy.golang.org/...: 403 Forbidden`},
		{"exit status 2", "panic: boom", "panic: boom (exit status 2)"},
		{"Timeout", "no result after 5s (raise it with -timeout)", "no result after 5s (raise it with -timeout)"},
		{"ERROR", "", "ERROR"},
		{"exit status 3", "exit status 3", "exit status 3"},
	} {
		if got := errorSummary(tc.ename, tc.evalue); got != tc.want {
			t.Errorf("errorSummary(%q, %q) = %q, want %q", tc.ename, tc.evalue, got, tc.want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.xs); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}
