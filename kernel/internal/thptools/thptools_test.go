package thptools

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// goBinary is the go command of the toolchain running the test.
func goBinary(t *testing.T) string {
	t.Helper()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goBin, "env", "GOROOT").Output(); err == nil {
		goBin = filepath.Join(strings.TrimSpace(string(out)), "bin", "go")
	}
	return goBin
}

func TestPatch(t *testing.T) {
	g, err := readGoEnv(context.Background(), goBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	files, err := Patch(g.GOROOT)
	if err != nil {
		t.Fatalf("this toolchain's source: %v", err)
	}
	for _, p := range patches {
		src, err := os.ReadFile(filepath.Join(g.GOROOT, "src", p.File))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(files[p.File], []byte(p.With)) || bytes.Contains(src, []byte(p.With)) {
			t.Errorf("%s: the patched file lacks %.40q, or the original has it", p.File, p.With)
		}
		if got, want := len(files[p.File])-len(src), len(p.With)-len(p.Anchor); got != want {
			t.Errorf("%s: patch changed %d bytes, want %d (only the anchor replaced)", p.File, got, want)
		}
	}
	dir := t.TempDir()
	for file, data := range files {
		if err := os.MkdirAll(filepath.Join(dir, "src", filepath.Dir(file)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "src", file), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Patch(dir); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Patch of a patched source: %v, want ErrUnsupported", err)
	}
}

func TestLookup(t *testing.T) {
	dir, toolDir := t.TempDir(), t.TempDir()
	stock := filepath.Join(toolDir, "link")
	if got := Lookup(dir, stock); got != stock {
		t.Errorf("Lookup in an empty dir = %s, want the stock tool", got)
	}
	for _, name := range []string{"link", stampName} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(toolDir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got := Lookup(dir, stock); got != filepath.Join(dir, "link") {
		t.Errorf("Lookup = %s, want the built link", got)
	}
	if other := filepath.Join(t.TempDir(), "link"); Lookup(dir, other) != other {
		t.Errorf("Lookup of another toolchain's link did not return it")
	}
	if Lookup("", stock) != stock {
		t.Errorf("Lookup with no dir did not return the stock tool")
	}
}

// TestBuild builds the tools (from the build cache after `kernel setup`) and checks that they
// compile and link a program to the very bytes the toolchain's own tools do.
func TestBuild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("transparent huge pages are Linux's")
	}
	ctx := context.Background()
	goBin := goBinary(t)
	dir := filepath.Join(t.TempDir(), "tools")
	built, err := Build(ctx, dir, goBin)
	if err != nil {
		t.Fatal(err)
	}
	if !built || !Ready(dir) {
		t.Fatalf("Build: built %v, Ready %v", built, Ready(dir))
	}
	g, err := readGoEnv(ctx, goBin)
	if err != nil {
		t.Fatal(err)
	}
	prog := t.TempDir()
	src := "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"
	if err := os.WriteFile(filepath.Join(prog, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := exec.Command(goBin, "list", "-export", "-deps", "-f", "{{if .Export}}packagefile {{.ImportPath}}={{.Export}}{{end}}", "fmt").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	importcfg := filepath.Join(prog, "importcfg")
	if err := os.WriteFile(importcfg, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	outputs := map[string][]byte{}
	for _, toolDir := range []string{g.GOTOOLDIR, dir} {
		compile, link := filepath.Join(toolDir, "compile"), filepath.Join(toolDir, "link")
		obj, exe := filepath.Join(prog, "main.a"), filepath.Join(prog, "main")
		run := func(argv ...string) {
			t.Helper()
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir, cmd.Env = prog, append(os.Environ(), "GOROOT="+g.GOROOT)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", argv[0], err, out)
			}
		}
		run(compile, "-o", obj, "-p", "main", "-complete", "-importcfg", importcfg, "-pack", "main.go")
		run(link, "-o", exe, "-importcfg", importcfg, "-buildmode=exe", obj)
		for _, f := range []string{obj, exe} {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if prev, ok := outputs[f]; ok && !bytes.Equal(prev, data) {
				t.Errorf("%s differs between the toolchain's tools and the huge-page ones", filepath.Base(f))
			}
			outputs[f] = data
		}
	}
	if got, err := exec.Command(filepath.Join(prog, "main")).Output(); err != nil || string(got) != "hello\n" {
		t.Errorf("program built by the huge-page tools printed %q (%v)", got, err)
	}
}
