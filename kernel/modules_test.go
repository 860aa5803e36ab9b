package main

import (
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestModulesForOfflineCells: on a module cache that builds alone filled, a notebook module's
// `go get` fails offline (the kernel spec's GOPROXY=off); setup's modules step downloads what it
// needs. Here with an empty module cache, filled by the step from this machine's module cache as
// a file proxy (no network): before it, the offline check names the missing module; after it (and
// with the zips removed, as the image does), the check passes and GoNB's module (made by the go
// shim) runs `go get` offline.
func TestModulesForOfflineCells(t *testing.T) {
	goBin, root := shimPrereqs(t)
	ctx := context.Background()
	e, err := newEnv(ctx, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// The source: this machine's module cache, with the zips of every module `go mod download`
	// fetches. A cache that builds filled can pass modulesOffline (every go.mod is there) and
	// still lack the zips of modules no build needed (imported under other build tags only), so
	// the source is completed first, from $GOPROXY when zips are missing (quick when none is).
	var dl strings.Builder
	if err := runGo(ctx, e, &dl, "mod", "download"); err != nil {
		t.Fatalf("go mod download in this machine's module cache (the test's source): %v\n%s", err, dl.String())
	}
	out, err := exec.Command(e.Go.GoBinary(), "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	source := "file://" + filepath.Join(strings.TrimSpace(string(out)), "cache", "download")

	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOFLAGS", "-modcacherw") // so that the test can remove it
	t.Setenv("GOPROXY", "off")
	err = modulesOffline(ctx, e)
	if err == nil || !strings.Contains(err.Error(), "the module cache lacks") || !strings.Contains(err.Error(), "github.com/") {
		t.Fatalf("empty module cache: modulesOffline = %v, want the missing module named", err)
	}

	t.Setenv("GOPROXY", source)
	if did, _, err := downloadModules(ctx, e); err != nil || did != "downloaded" {
		t.Fatalf("modules step on an empty cache: %q, %v; want downloaded", did, err)
	}
	t.Setenv("GOPROXY", "off")
	// As in the image, which keeps the modules' files but not their zips.
	filepath.WalkDir(os.Getenv("GOMODCACHE"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".zip") {
			os.Remove(path)
		}
		return nil
	})
	if did, _, err := downloadModules(ctx, e); err != nil || did != "ok" {
		t.Fatalf("modules step again, without the zips: %q, %v; want ok", did, err)
	}

	shim := filepath.Join(t.TempDir(), "go")
	writeFile(t, shim, goShim(goBin))
	if err := os.Chmod(shim, 0o755); err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(t.TempDir(), "gonb_5678abcd")
	if err := os.Mkdir(mod, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(mod, "main.go"), "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/attnbook/attnbook/pkg/display\"\n)\n\nfunc main() { fmt.Println(display.Compare()) }\n")
	for _, args := range [][]string{{"mod", "init", "gonb_5678abcd"}, {"get"}} {
		cmd := exec.Command(shim, args...)
		cmd.Dir = mod
		cmd.Env = append(e.Go.Environ(), "GONB_TMP_DIR="+mod, RootEnv+"="+root)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s in a notebook's module, offline: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
