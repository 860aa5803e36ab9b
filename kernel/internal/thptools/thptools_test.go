package thptools

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/kernel/internal/goenvcache"
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
	grown := map[string]int{} // by file: what its edits add, each replacing its anchor only
	for _, p := range patches {
		src, err := os.ReadFile(filepath.Join(g.GOROOT, "src", p.File))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(files[p.File], []byte(p.With)) || bytes.Contains(src, []byte(p.With)) {
			t.Errorf("%s: the patched file lacks %.40q, or the original has it", p.File, p.With)
		}
		grown[p.File] += len(p.With) - len(p.Anchor)
	}
	for file, want := range grown {
		src, err := os.ReadFile(filepath.Join(g.GOROOT, "src", file))
		if err != nil {
			t.Fatal(err)
		}
		if got := len(files[file]) - len(src); got != want {
			t.Errorf("%s: patch changed %d bytes, want %d (only the anchors replaced)", file, got, want)
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
	stockGoimports, goimportsVersion := installed(t, "goimports", GoimportsModule)
	stockGoNB, gonbVersion := installed(t, "gonb", GoNBModule)
	built, err := Build(ctx, dir, goBin, Commands{Goimports: goimportsVersion, GoNB: gonbVersion, GoNBModFile: repoModFile(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !built || !Ready(dir) || (goimportsVersion != "") != (Goimports(dir) != "") || (gonbVersion != "") != (GoNB(dir) != "") {
		t.Fatalf("Build: built %v, Ready %v, goimports %q, gonb %q", built, Ready(dir), Goimports(dir), GoNB(dir))
	}
	if goimportsVersion != "" {
		t.Run("goimports", func(t *testing.T) { testGoimports(t, goBin, stockGoimports, Goimports(dir)) })
	}
	if gonbVersion != "" {
		t.Run("gonb", func(t *testing.T) { testGoNB(t, stockGoNB, GoNB(dir), gonbVersion) })
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

// installed is the command name `kernel setup` installs (in $GOBIN, else $GOPATH/bin) and the
// version of module it was built from (its main module, or a dependency: GoNB is installed from
// the repository's tool line); none (a skip, a failure with CI=true) outside setup.
func installed(t *testing.T, name, module string) (path, version string) {
	t.Helper()
	out, err := exec.Command(goBinary(t), "env", "GOBIN", "GOPATH").Output()
	if err == nil {
		gobin, gopath, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		if gobin == "" {
			gobin = filepath.Join(strings.Split(gopath, string(os.PathListSeparator))[0], "bin")
		}
		path = filepath.Join(gobin, name)
		if info, err := buildinfo.ReadFile(path); err == nil {
			for _, m := range append([]*debug.Module{&info.Main}, info.Deps...) {
				if m.Path == module && m.Replace == nil {
					return path, m.Version
				}
			}
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no %s built from %s at %s (go run ./kernel setup installs it)", name, module, path)
	}
	t.Logf("SKIPPING the %s build: none installed by `go run ./kernel setup`", name)
	return "", ""
}

// testGoNB: the built GoNB reports the stock one's version and is GoNB's command (gonbPatch's
// effect, no `go get` process a cell, is seen in the notebooks' runs: docs/benchmarks.md).
func testGoNB(t *testing.T, stock, built, version string) {
	v := func(gonb string) string {
		out, err := exec.Command(gonb, "-V").CombinedOutput()
		if err != nil {
			t.Fatalf("%s -V: %v\n%s", gonb, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got, want := v(built), v(stock); got != want || !strings.Contains(got, version) {
		t.Errorf("the built GoNB says %q, the stock one %q (want %s)", got, want, version)
	}
	data, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := buildinfo.Read(bytes.NewReader(data)); err != nil || info.Path != GoNBModule {
		t.Errorf("the built GoNB's build info: %v (%v), want the command %s", info, err, GoNBModule)
	}
}

// testGoimports: the built goimports writes what the stock one writes, and asks the go command
// for its variables only when the cell builder's answer (goenvcache) is missing or not current.
func testGoimports(t *testing.T, goBin, stock, built string) {
	tmp := t.TempDir()
	mod, bin := filepath.Join(tmp, "gonb_test"), filepath.Join(tmp, "bin")
	for _, d := range []string{mod, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	calls := filepath.Join(tmp, "calls")
	files := map[string]string{
		filepath.Join(mod, "go.mod"): "module gonb_test\n\ngo 1.22\n",
		filepath.Join(bin, "go"):     "#!/bin/sh\necho \"$*\" >> '" + calls + "'\nexec '" + goBin + "' \"$@\"\n",
	}
	for name, data := range files {
		if err := os.WriteFile(name, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(mod)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	const src = "package main\n\nimport \"os\"\n\nfunc main() { fmt.Println(strings.ToUpper(\"x\")) }\n"
	run := func(goimports string) string {
		t.Helper()
		if err := os.WriteFile("main.go", []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(goimports, "-w", "main.go").CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", goimports, err, out)
		}
		out, err := os.ReadFile("main.go")
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	goCalls := func() []string {
		data, _ := os.ReadFile(calls)
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	want := run(stock)
	if !strings.Contains(want, `"strings"`) || strings.Contains(want, `"os"`) {
		t.Fatalf("the stock goimports wrote:\n%s", want)
	}
	if got := run(built); got != want {
		t.Errorf("the built goimports wrote:\n%s\nthe stock one:\n%s", got, want)
	}
	asked := goCalls()
	if len(asked) != 2 || asked[1] != asked[0] || !strings.HasPrefix(asked[0], "env -json ") {
		t.Fatalf("with no answer stored, the go command ran: %q; want the stock goimports' go env twice", asked)
	}
	// What the cell builder stores when it answers that go env.
	args := strings.Fields(asked[0])
	key, err := goenvcache.CacheKey(args)
	if err != nil {
		t.Fatal(err)
	}
	answer, err := exec.Command(goBin, args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goenvcache.CacheFile, []byte(key+"\n"+string(answer)), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := run(built); got != want || len(goCalls()) != 2 {
		t.Errorf("with the answer stored, the built goimports wrote:\n%s\nand the go command ran %d times, want 2", got, len(goCalls()))
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	if got := run(built); got != want || len(goCalls()) != 3 {
		t.Errorf("with GOFLAGS changed, the built goimports wrote:\n%s\nand the go command ran %d times, want 3", got, len(goCalls()))
	}
}

// TestResident: the marker names the tools with a resident mode; an empty one, from before the
// compiler had one, stands for the linker alone (a compile started as a server there would just
// compile).
func TestResident(t *testing.T) {
	dir := t.TempDir()
	if Resident(dir, "link") || Resident("", "link") {
		t.Error("Resident without a marker")
	}
	marker := filepath.Join(dir, residentName)
	os.WriteFile(marker, nil, 0o644)
	if !Resident(dir, "/x/link") || Resident(dir, "/x/compile") {
		t.Error("an empty marker: want the linker alone")
	}
	os.WriteFile(marker, []byte("compile\nlink\n"), 0o644)
	if !Resident(dir, "/x/link") || !Resident(dir, "compile") || Resident(dir, "asm") {
		t.Error("marker compile, link: want both, and only them")
	}
}

// repoModFile is the repository's go.mod, whose tool line installs GoNB.
func repoModFile(t *testing.T) string {
	path, err := filepath.Abs("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBuildCommandWithoutZips: a command builds from a module cache whose zips were dropped (as the
// classroom image drops them) even when it requires a module published without a go.mod file
// (GoNB's github.com/pkg/errors v0.9.1): the go command reads no zip. A fake module cache holds
// example.com/cmd v1.0.0, which requires example.com/old v1.0.0, which has no go.mod.
func TestBuildCommandWithoutZips(t *testing.T) {
	ctx := context.Background()
	g, err := readGoEnv(ctx, goBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		path = filepath.Join(cache, path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmdMod := "module example.com/cmd\n\ngo 1.21\n\nrequire example.com/old v1.0.0\n"
	write("example.com/cmd@v1.0.0/go.mod", cmdMod)
	write("example.com/cmd@v1.0.0/main.go", "package main\n\nimport \"example.com/old\"\n\nfunc main() { println(old.Word) }\n")
	write("example.com/old@v1.0.0/old.go", "package old\n\nconst Word = \"old\"\n")
	for path, content := range map[string]string{ // what `go mod download` leaves, less the zips
		"cache/download/example.com/cmd/@v/v1.0.0.mod":  cmdMod,
		"cache/download/example.com/cmd/@v/v1.0.0.info": `{"Version":"v1.0.0"}`,
		"cache/download/example.com/old/@v/v1.0.0.mod":  "module example.com/old\n",
		"cache/download/example.com/old/@v/v1.0.0.info": `{"Version":"v1.0.0"}`,
	} {
		write(path, content)
	}
	g.GOMODCACHE = cache
	c := command{Module: "example.com/cmd", Version: "v1.0.0", Package: "example.com/cmd", Name: "cmd",
		source: func(string) (map[string][]byte, error) { return nil, nil }}
	tmp, bin := t.TempDir(), t.TempDir()
	if err := buildCommand(ctx, g, c, tmp, bin, nil); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(commandPath(bin, "cmd")).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "old" {
		t.Fatalf("the built command printed %q (%v), want old", out, err)
	}
}
