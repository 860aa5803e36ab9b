package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/kernel/internal/thptools"
)

func TestLabRunArgs(t *testing.T) {
	name := labContainer("/src/attnbook", 8890)
	if !strings.HasPrefix(name, "attnbook-lab-") || !strings.HasSuffix(name, "-8890") || name == labContainer("/src/other", 8890) {
		t.Errorf("labContainer = %q: want one name per checkout and port", name)
	}
	for _, tc := range []struct {
		asRoot bool
		want   string
	}{
		{false, "run --rm --name NAME -p 127.0.0.1:8890:8888 -e JUPYTER_TOKEN -e ATTNBOOK_SHORT -v /src/attnbook:/home/jovyan/attnbook attnbook:dev start-notebook.sh"},
		{true, "run --rm --name NAME -p 127.0.0.1:8890:8888 -e JUPYTER_TOKEN -e ATTNBOOK_SHORT -v /src/attnbook:/home/jovyan/attnbook --user 0:0 attnbook:dev start-notebook.sh --allow-root"},
	} {
		// The token never appears in argv (other users can read it in ps): only its name.
		if got := strings.Join(labRunArgs("/src/attnbook", "attnbook:dev", "NAME", 8890, tc.asRoot), " "); got != tc.want {
			t.Errorf("labRunArgs(asRoot=%v):\n  %s\nwant\n  %s", tc.asRoot, got, tc.want)
		}
	}
	t.Setenv(imageEnv, "")
	if got := defaultImage(); got != "attnbook:dev" {
		t.Errorf("defaultImage() = %q", got)
	}
	t.Setenv(imageEnv, "attnbook:class")
	if got := defaultImage(); got != "attnbook:class" {
		t.Errorf("defaultImage() with $%s = %q", imageEnv, got)
	}
}

// TestImageGoNBVersion: the image's language_info names the GoNB its kernel spec starts — the one
// built beside the huge-page tools when the spec has them, else the installed one — as JupyterLab
// marks a notebook changed when the kernel reports another version. Fake jupyter and go commands
// stand in for the image's.
func TestImageGoNBVersion(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 (which the image has) is not installed here")
	}
	dir := t.TempDir()
	bin, tools := filepath.Join(dir, "bin"), filepath.Join(dir, "thp-tools")
	script := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script("jupyter", `echo '{"kernelspecs": {"attnbook": {"spec": {"env": {"ATTNBOOK_THP_TOOLS": "`+tools+`"}}}}}'`+"\n")
	script("go", `case "$1" in env) echo "`+filepath.Join(dir, "gopath")+`";; version) echo "$2: go1.27.3";; esac`+"\n")
	run := func() string {
		t.Helper()
		cmd := exec.Command("sh", "-c", imageGoNBVersion)
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got, want := run(), filepath.Join(dir, "gopath", "bin", "gonb")+": go1.27.3"; got != want {
		t.Errorf("without the huge-page tools' GoNB: %q, want %q", got, want)
	}
	built := thptools.GoNBPath(tools)
	if err := os.MkdirAll(filepath.Dir(built), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(built, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want := run(), built+": go1.27.3"; got != want {
		t.Errorf("with the huge-page tools' GoNB: %q, want %q", got, want)
	}
}
