package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCellBuild builds a GoNB-like module (gonb_test, requiring example.com/lib replaced by a
// directory beside it, as the kernel wires attnbook in) through the built command, cell after
// cell, and checks which path each build took ($ATTNBOOK_CELLBUILD_TRACE) and what the program
// prints: the recorded fast path for a changed cell, the go command whenever anything else
// changed, the go command's own message for a compile error.
func TestCellBuild(t *testing.T) {
	goBin, helper, tmp := buildCommand(t)
	lib, mod := filepath.Join(tmp, "lib"), filepath.Join(tmp, "gonb_test")
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(lib, "go.mod"), "module example.com/lib\n\ngo 1.22\n")
	write(filepath.Join(lib, "lib.go"), "package lib\n\nimport _ \"embed\"\n\n//go:embed data/word.txt\nvar Word string\n\nfunc V() string { return \"v1 \" + Word }\n")
	write(filepath.Join(lib, "data", "word.txt"), "apple")
	// Packages a later cell imports: sub, as old as a checkout's files are, and later/deep/ for one
	// written then (lib's stamp has its entries' times: later's stays).
	sub := filepath.Join(lib, "sub")
	write(filepath.Join(sub, "sub.go"), "package sub\n\nconst S = \"seven\"\n")
	if err := os.MkdirAll(filepath.Join(lib, "later", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-time.Hour)
	for _, p := range []string{filepath.Join(sub, "sub.go"), sub, filepath.Join(lib, "later", "deep"), filepath.Join(lib, "later")} {
		if err := os.Chtimes(p, long, long); err != nil {
			t.Fatal(err)
		}
	}
	gomod := "module gonb_test\n\ngo 1.22\n\nrequire (\n\texample.com/lib v0.0.0\n\tgithub.com/pkg/errors v0.9.1\n)\n\nreplace example.com/lib => ../lib\n"
	write(filepath.Join(mod, "go.mod"), gomod)
	write(filepath.Join(mod, "go.sum"), "github.com/pkg/errors v0.9.1 h1:FEBLx1zS214owpjy7qsBeixbURkuhQAwrK5UwLGTwt4=\ngithub.com/pkg/errors v0.9.1/go.mod h1:bwawxfHBFNV+L2hUp1rHADufV3IMtnDRdf1r5NINEl0=\n")
	env := append(os.Environ(), "ATTNBOOK_CELLBUILD_TRACE=1", "GOFLAGS=-mod=mod", "GOPROXY=off", "CGO_ENABLED=0")

	imports := "\"fmt\"\n\n\t\"example.com/lib\""
	cell := func(body string) {
		write(filepath.Join(mod, "main.go"), "package main\n\nimport (\n\t"+imports+"\n)\n\nfunc main() {\n"+body+"\n}\n")
	}
	bin := filepath.Join(mod, "gonb_test")
	build := func(env []string) (trace string, ok bool) {
		t.Helper()
		os.Remove(bin)
		cmd := exec.Command(helper, goBin, "build", "-o", bin)
		cmd.Dir, cmd.Env = mod, env
		out, err := cmd.CombinedOutput()
		return string(out), err == nil
	}
	// path is how the build must go: "fast", "recorded" (the go command, then recorded) or "go"
	// (the go command, not recorded: it also rebuilt a dependency, so -n showed more than the cell).
	step := func(what, body string, env []string, path, want string) (trace string) {
		t.Helper()
		if body != "" {
			cell(body)
		}
		trace, ok := build(env)
		if !ok {
			t.Fatalf("%s: the build failed:\n%s", what, trace)
		}
		got := "go"
		switch {
		case strings.Contains(trace, "fast build: ok"):
			got = "fast"
		case strings.Contains(trace, ": record: ok"):
			got = "recorded"
		}
		if got != path {
			t.Errorf("%s: build path %s, want %s:\n%s", what, got, path, trace)
		}
		for line := range strings.Lines(trace) {
			if strings.HasPrefix(line, "cellbuild: ") && !traceTime.MatchString(line) {
				t.Errorf("%s: trace line %q does not give the time since the builder started", what, line)
			}
		}
		out, err := exec.Command(bin).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("%s: the program printed %q (%v), want %q", what, out, err, want)
		}
		return trace
	}
	packages := func(cfg string) []string {
		t.Helper()
		data, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var pkgs []string
		for line := range strings.Lines(string(data)) {
			if p, file, ok := strings.Cut(strings.TrimPrefix(line, "packagefile "), "="); ok && strings.HasPrefix(line, "packagefile ") && !strings.HasPrefix(file, filepath.Join(mod, stateDir)) {
				pkgs = append(pkgs, p)
			}
		}
		return slices.Sorted(slices.Values(pkgs))
	}
	step("first cell", `fmt.Println(lib.V(), 1)`, env, "go", "v1 apple 1") // builds lib too
	step("second cell", `fmt.Println(lib.V(), 1.5)`, env, "recorded", "v1 apple 1.5")
	step("changed cell", `fmt.Println(lib.V(), 2)`, env, "fast", "v1 apple 2")
	step("same cell again", "", env, "fast", "v1 apple 2")
	write(filepath.Join(lib, "lib.go"), "package lib\n\nimport _ \"embed\"\n\n//go:embed data/word.txt\nvar Word string\n\nfunc V() string { return \"v2 \" + Word }\n")
	step("dependency edited", "", env, "go", "v2 apple 2")
	step("cell after it", `fmt.Println(lib.V(), 3)`, env, "recorded", "v2 apple 3")
	write(filepath.Join(lib, "data", "word.txt"), "pear!")
	step("embedded file edited", "", env, "go", "v2 pear! 3")
	write(filepath.Join(lib, "extra.go"), "package lib\n\nfunc init() { Word += \"+\" }\n")
	step("file added to a dependency", "", env, "go", "v2 pear!+ 3")
	step("cell after it", `fmt.Println(lib.V(), 2.5)`, env, "recorded", "v2 pear!+ 2.5")
	bases := func() (link, compile string) {
		t.Helper()
		var r record
		if data, err := os.ReadFile(filepath.Join(mod, stateDir, "record.json")); err != nil || json.Unmarshal(data, &r) != nil {
			t.Fatalf("reading the record: %v", err)
		}
		return r.LinkBase, r.CompileBase
	}
	linkBase := func() string { link, _ := bases(); return link }
	baseCfg, err := os.ReadFile(filepath.Join(mod, stateDir, "importcfg.link"))
	compileCfg, errCompile := os.ReadFile(filepath.Join(mod, stateDir, "importcfg"))
	if link, compile := bases(); err != nil || errCompile != nil || link != "" || compile != "" {
		t.Fatalf("before any new import: %v, %v, LinkBase %q and CompileBase %q, want none", err, errCompile, link, compile)
	}
	imports = "\"fmt\"\n\t\"strings\"\n\n\t\"example.com/lib\""
	step("new import", `fmt.Println(lib.V(), strings.ToUpper("three"))`, env, "fast", "v2 pear!+ THREE")
	// The link's configuration before it is the base whose resident linker may serve the links
	// after it (linkd.RunVia), through every later extension.
	if link, compile := bases(); link != string(baseCfg) || compile != string(compileCfg) {
		t.Errorf("new import: the record's LinkBase is %q and CompileBase %q, want the link's and the compile's configurations before it, %q and %q", link, compile, baseCfg, compileCfg)
	}
	if all := packages(filepath.Join(mod, stateDir, "importcfg.link")); !slices.Contains(all, "strings") || len(all) != len(slices.Compact(all)) {
		t.Errorf("new import: the recorded link's packages %q should have strings, once", all)
	}
	imports = "\"fmt\"\n\t\"unicode/utf8\"\n\n\t\"example.com/lib\""
	step("an import the program already links", `fmt.Println(lib.V(), utf8.RuneLen('x'))`, env, "fast", "v2 pear!+ 1")
	// The recorded link linked strings; this program does not. Its link's import configuration
	// names exactly the packages the go command would link (a resident linker refuses others;
	// unsafe has no archive).
	cfgs, _ := filepath.Glob(filepath.Join(mod, stateDir, "importcfg.link.*"))
	if len(cfgs) != 1 {
		t.Fatalf("fewer imports: %d import configurations for the link beside the record, want 1: %q", len(cfgs), cfgs)
	}
	lister := exec.Command(goBin, "list", "-deps", "-f", "{{if and (ne .Name \"main\") (ne .ImportPath \"unsafe\")}}{{.ImportPath}}{{end}}", ".")
	lister.Dir, lister.Env = mod, env
	list, err := lister.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	want := slices.Sorted(slices.Values(strings.Fields(string(list))))
	if got := packages(cfgs[0]); !slices.Equal(got, want) {
		t.Errorf("fewer imports: the link's import configuration has %q, want what go list -deps lists, %q", got, want)
	}
	if all := packages(filepath.Join(mod, stateDir, "importcfg.link")); !slices.Contains(all, "strings") || slices.Contains(want, "strings") {
		t.Errorf("the recorded link's packages %q should have strings, this program's %q not", all, want)
	}
	// A package of a module the program did not link: the link's build information gets the
	// module's line, as the go command writes it (github.com/pkg/errors is in the module cache:
	// attnbook's dependencies import it).
	imports = "\"fmt\"\n\n\t\"example.com/lib\"\n\t\"github.com/pkg/errors\""
	step("new import from another module", `fmt.Println(lib.V(), errors.New("five"))`, env, "fast", "v2 pear!+ five")
	if got := linkBase(); got != string(baseCfg) {
		t.Errorf("after a second new import: the record's LinkBase is %q, want the first one's, %q", got, baseCfg)
	}
	other := filepath.Join(mod, "other-build")
	goBuild := exec.Command(goBin, "build", "-o", other)
	goBuild.Dir, goBuild.Env = mod, env
	if out, err := goBuild.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	buildInfo := func(bin string) string {
		t.Helper()
		out, err := exec.Command(goBin, "version", "-m", bin).Output()
		if err != nil {
			t.Fatalf("go version -m %s: %v", bin, err)
		}
		_, info, _ := strings.Cut(string(out), "\n") // the first line names the file
		return info
	}
	if got, want := buildInfo(bin), buildInfo(other); got != want || !strings.Contains(got, "github.com/pkg/errors\tv0.9.1\th1:") {
		t.Errorf("new import from another module: build information\n%s\nwant the go command's\n%s", got, want)
	}
	os.Remove(other)
	// A module replaced by a directory: the go command writes its build information.
	write(filepath.Join(tmp, "lib2", "go.mod"), "module example.com/lib2\n\ngo 1.22\n")
	write(filepath.Join(tmp, "lib2", "lib2.go"), "package lib2\n\nconst W = \"six\"\n")
	write(filepath.Join(mod, "go.mod"), gomod+"\nrequire example.com/lib2 v0.0.0\n\nreplace example.com/lib2 => ../lib2\n")
	step("go.mod changed", `fmt.Println(lib.V(), errors.New("five!"))`, env, "recorded", "v2 pear!+ five!")
	imports = "\"fmt\"\n\n\t\"example.com/lib\"\n\t\"example.com/lib2\""
	trace := step("new import from a replaced module", `fmt.Println(lib.V(), lib2.W)`, env, "recorded", "v2 pear!+ six")
	if !strings.Contains(trace, "extend: no: example.com/lib2: module example.com/lib2 is replaced") {
		t.Errorf("new import from a replaced module: the record was not extended for the reason expected:\n%s", trace)
	}
	imports = "\"fmt\"\n\t\"unicode/utf8\"\n\n\t\"example.com/lib\""
	step("environment changed", `fmt.Println(lib.V(), utf8.RuneLen('x'))`, append(slices.Clone(env), "GOFLAGS=-mod=mod -ldflags=-s"), "recorded", "v2 pear!+ 1")
	imports = "\"fmt\"\n\n\t\"example.com/lib\""
	step("environment back, imports fewer", `fmt.Println(lib.V(), 4)`, env, "recorded", "v2 pear!+ 4")
	step("the next cell", `fmt.Println(lib.V(), 5)`, env, "fast", "v2 pear!+ 5")

	// A new package of a module the program links already (as an attnbook package a later cell
	// imports): the record is extended, its directory stamped, so an edit to it goes to the go
	// command.
	imports = "\"fmt\"\n\n\t\"example.com/lib\"\n\t\"example.com/lib/sub\""
	step("new import of a linked module's package", `fmt.Println(lib.V(), sub.S)`, env, "fast", "v2 pear!+ seven")
	write(filepath.Join(sub, "sub.go"), "package sub\n\nconst S = \"eight\"\n")
	step("that package edited", "", env, "go", "v2 pear!+ eight")
	step("cell after it", `fmt.Println(lib.V(), sub.S, 1)`, env, "recorded", "v2 pear!+ eight 1")
	// One written just now: go list may have read its files before or after a change, so the go
	// command builds the cell.
	write(filepath.Join(lib, "later", "deep", "sub2", "sub2.go"), "package sub2\n\nconst S = \"nine\"\n")
	imports = "\"fmt\"\n\n\t\"example.com/lib\"\n\t\"example.com/lib/later/deep/sub2\""
	trace = step("new import of a package written just now", `fmt.Println(lib.V(), sub2.S)`, env, "recorded", "v2 pear!+ nine")
	if !strings.Contains(trace, "extend: no: example.com/lib/later/deep/sub2: ") || !strings.Contains(trace, "changed less than") {
		t.Errorf("new import of a package written just now: the record was not extended for the reason expected:\n%s", trace)
	}
	imports = "\"fmt\"\n\n\t\"example.com/lib\""
	step("back to lib alone", `fmt.Println(lib.V(), 5.25)`, env, "fast", "v2 pear!+ 5.25")

	// With $ATTNBOOK_THP_TOOLS naming tools built from this toolchain's tool directory (here
	// scripts that log and run the stock ones), the fast path compiles and links with those.
	toolDir, err := exec.Command(goBin, "env", "GOTOOLDIR").Output()
	if err != nil {
		t.Fatal(err)
	}
	thp, log := filepath.Join(tmp, "thp"), filepath.Join(tmp, "thp.log")
	write(filepath.Join(thp, "from"), strings.TrimSpace(string(toolDir)))
	for _, tool := range []string{"compile", "link"} {
		write(filepath.Join(thp, tool), "#!/bin/sh\necho "+tool+" >> "+log+"\nexec "+filepath.Join(strings.TrimSpace(string(toolDir)), tool)+" \"$@\"\n")
		if err := os.Chmod(filepath.Join(thp, tool), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	step("huge-page tools", `fmt.Println(lib.V(), 5.5)`, append(slices.Clone(env), "ATTNBOOK_THP_TOOLS="+thp), "fast", "v2 pear!+ 5.5")
	if got, _ := os.ReadFile(log); string(got) != "compile\nlink\n" {
		t.Errorf("with ATTNBOOK_THP_TOOLS the fast build ran %q of its tools, want compile and link", got)
	}

	cell(`fmt.Println(lib.V(), undefinedName)`)
	trace, ok := build(env)
	if ok {
		t.Fatalf("a cell with an undefined name built:\n%s", trace)
	}
	for _, want := range []string{"# gonb_test\n./main.go:10:", ": undefined: undefinedName"} {
		if !strings.Contains(trace, want) {
			t.Errorf("compile error: output lacks the go command's %q:\n%s", want, trace)
		}
	}
	step("fixed cell", `fmt.Println(lib.V(), 6)`, env, "recorded", "v2 pear!+ 6")
	write(filepath.Join(mod, "other.go"), "package main\n\nvar _ = 1\n")
	step("second file in the main package", `fmt.Println(lib.V(), 7)`, env, "recorded", "v2 pear!+ 7")
	step("and a cell after it", `fmt.Println(lib.V(), 8)`, env, "fast", "v2 pear!+ 8")

	// Nothing changed and BIN is there: nothing to do, as for the go command.
	trace, ok = build(env) // build removes BIN first: a fast build
	before, err := os.Stat(bin)
	if !ok || err != nil || !strings.Contains(trace, "fast build: ok") {
		t.Fatalf("rebuilding BIN: %v %v\n%s", ok, err, trace)
	}
	cmd := exec.Command(helper, goBin, "build", "-o", bin)
	cmd.Dir, cmd.Env = mod, env
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "fast build: ok") {
		t.Fatalf("building again: %v\n%s", err, out)
	}
	if after, err := os.Stat(bin); err != nil || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("an up-to-date BIN was built again (modified %v, then %v)", before.ModTime(), after.ModTime())
	}
}

func TestSplitShell(t *testing.T) {
	for line, want := range map[string][]string{
		`compile -o $WORK/b001/_pkg_.a -trimpath "$WORK/b001=>" -p main`: {"compile", "-o", "$WORK/b001/_pkg_.a", "-trimpath", "$WORK/b001=>", "-p", "main"},
		`GOROOT='/go root' /x/link -o a\ b "q\"uote"`:                    {"GOROOT=/go root", "/x/link", "-o", "a b", `q"uote`},
	} {
		got, err := splitShell(line)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("splitShell(%q) = %q, %v; want %q", line, got, err, want)
		}
	}
	if _, err := splitShell(`a "b`); err == nil {
		t.Error(`splitShell("a \"b") gave no error`)
	}
}

// TestGoEnvCache runs goimports' `go env -json …` through the built command in a GoNB-like
// module, with a stand-in go that logs each call it gets and runs the real one: the answer is
// always the real go's, and the go command runs again only when something `go env` reads changed
// (the names asked, a variable, a go.work appearing above the module).
func TestGoEnvCache(t *testing.T) {
	goBin, helper, tmp := buildCommand(t)
	calls := filepath.Join(tmp, "calls")
	logging := filepath.Join(tmp, "logging-go")
	script := "#!/bin/sh\necho \"$*\" >> '" + calls + "'\nexec '" + goBin + "' \"$@\"\n"
	if err := os.WriteFile(logging, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(tmp, "work", "gonb_test")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module gonb_test\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	names := []string{"GOMOD", "GOFLAGS", "GOWORK", "GOROOT"}
	step := func(what string, env []string, wantCalls int, names ...string) {
		t.Helper()
		args := append([]string{"env", "-json"}, names...)
		cmd := exec.Command(helper, append([]string{logging}, args...)...)
		cmd.Dir, cmd.Env = mod, append(os.Environ(), env...)
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		direct := exec.Command(goBin, args...)
		direct.Dir, direct.Env = mod, cmd.Env
		want, err := direct.Output()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: got %s, want the go command's %s", what, got, want)
		}
		data, _ := os.ReadFile(calls)
		if n := strings.Count(string(data), "\n"); n != wantCalls {
			t.Errorf("%s: the go command ran %d times in all, want %d", what, n, wantCalls)
		}
	}
	step("first", nil, 1, names...)
	step("same question", nil, 1, names...)
	step("other names", nil, 2, "GOMOD")
	step("the first names again", nil, 3, names...)
	step("again", nil, 3, names...)
	step("GOFLAGS set", []string{"GOFLAGS=-mod=mod"}, 4, names...)
	step("GOFLAGS set, again", []string{"GOFLAGS=-mod=mod"}, 4, names...)
	if err := os.WriteFile(filepath.Join(tmp, "work", "go.work"), []byte("go 1.22\n\nuse ./gonb_test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	step("a go.work above", []string{"GOFLAGS=-mod=mod"}, 5, names...)
	step("a go.work above, again", []string{"GOFLAGS=-mod=mod"}, 5, names...)
	// -w writes the go env file: never answered from the cache.
	cmd := exec.Command(helper, logging, "env", "-json", "-w", "GOFLAGS=-mod=mod")
	cmd.Dir, cmd.Env = mod, append(os.Environ(), "GOENV="+filepath.Join(tmp, "goenv"))
	cmd.Run()
	if data, _ := os.ReadFile(calls); !strings.Contains(string(data), "env -json -w") {
		t.Errorf("go env -json -w did not reach the go command: %s", data)
	}
}

// TestGetOffline: a `go get` that fails for want of a module offline says what to do; other
// failures are the go command's alone.
func TestGetOffline(t *testing.T) {
	goBin, helper, tmp := buildCommand(t)
	mod := writeGoNBModule(t, tmp, "require example.com/absent v1.0.0\n", "package main\n\nimport _ \"example.com/absent\"\n\nfunc main() {}\n")
	for _, c := range []struct {
		proxy    string
		wantHint bool
	}{{"off", true}, {"file://" + filepath.Join(tmp, "empty"), false}} {
		cmd := exec.Command(helper, goBin, "get")
		cmd.Dir, cmd.Env = mod, append(os.Environ(), "GOPROXY="+c.proxy, "GOMODCACHE="+filepath.Join(tmp, "modcache"), "GOFLAGS=-modcacherw")
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("GOPROXY=%s: go get of an absent module succeeded:\n%s", c.proxy, out)
		}
		if got := strings.Contains(string(out), "go run ./kernel setup"); got != c.wantHint {
			t.Errorf("GOPROXY=%s: hint shown %v, want %v:\n%s", c.proxy, got, c.wantHint, out)
		}
	}
}

// TestBuildGets: a cell's build does what GoNB's `go get` would have first (the GoNB setup builds
// runs none): a package of a module go.mod does not require yet is added, then built.
func TestBuildGets(t *testing.T) {
	goBin, helper, tmp := buildCommand(t)
	mod := writeGoNBModule(t, tmp, "", "package main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/pkg/errors\"\n)\n\nfunc main() { fmt.Println(errors.New(\"wrapped\")) }\n")
	modcache, err := exec.Command(goBin, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	// The module cache's downloads as the proxy: offline, as cells run, but able to add a module.
	proxy := "GOPROXY=file://" + filepath.Join(strings.TrimSpace(string(modcache)), "cache", "download")
	bin := filepath.Join(mod, "gonb_test")
	cmd := exec.Command(helper, goBin, "build", "-o", bin)
	cmd.Dir, cmd.Env = mod, append(os.Environ(), proxy, "GOSUMDB=off", "GOFLAGS=", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build of a cell importing a module go.mod lacks (github.com/pkg/errors, in the module cache): %v\n%s", err, out)
	}
	if gomod, _ := os.ReadFile(filepath.Join(mod, "go.mod")); !strings.Contains(string(gomod), "github.com/pkg/errors v0.9.1") {
		t.Errorf("go.mod after the build:\n%s\nwant github.com/pkg/errors v0.9.1 required", gomod)
	}
	if out, err := exec.Command(bin).Output(); err != nil || string(out) != "wrapped\n" {
		t.Errorf("the program printed %q (%v), want \"wrapped\"", out, err)
	}
}

// writeGoNBModule writes a GoNB-like module into tmp/gonb_test: go.mod (module, go line, then
// requires) and main.go.
func writeGoNBModule(t *testing.T, tmp, requires, mainGo string) string {
	t.Helper()
	mod := filepath.Join(tmp, "gonb_test")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"go.mod": "module gonb_test\n\ngo 1.22\n\n" + requires, "main.go": mainGo} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return mod
}

// buildCommand builds this command for a test, into the temporary directory tmp, with goBin, the
// go command of the toolchain running the test.
func buildCommand(t *testing.T) (goBin, helper, tmp string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("GoNB's kernel runs on POSIX systems")
	}
	goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goBin, "env", "GOROOT").Output(); err == nil {
		goBin = filepath.Join(strings.TrimSpace(string(out)), "bin", "go")
	}
	tmp = t.TempDir()
	helper = filepath.Join(tmp, "cellbuild")
	if out, err := exec.Command(goBin, "build", "-o", helper, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return goBin, helper, tmp
}

// traceTime is how a trace line starts: the time since the cell builder started.
var traceTime = regexp.MustCompile(`^cellbuild: [0-9]+\.[0-9]{3} s: `)
