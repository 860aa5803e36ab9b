package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func testSpecOptions(t *testing.T) specOptions {
	return specOptions{Root: "/src/attnbook", SpecDir: "/home/u/.local/share/jupyter/kernels/attnbook", GoRoot: "/usr/local/go", ToolDir: "/home/u/go/bin"}
}

func TestKernelSpecJSON(t *testing.T) {
	o := testSpecOptions(t)
	files, err := specFiles(o, "/usr/local/go/bin/go")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(files["kernel.json"].content, &got); err != nil {
		t.Fatalf("kernel.json is not JSON: %v", err)
	}
	want := map[string]any{
		"argv":           []any{"/home/u/go/bin/gonb", "--kernel", "{connection_file}"},
		"display_name":   "Go (attnbook)",
		"language":       "go",
		"interrupt_mode": "message",
		"env": map[string]any{
			"PATH":                  "/home/u/.local/share/jupyter/kernels/attnbook/bin:/usr/local/go/bin:/home/u/go/bin:${PATH}",
			"ATTNBOOK_ROOT":         "/src/attnbook",
			"ATTNBOOK_GO":           "/usr/local/go/bin/go",
			"GOMLX_NO_AUTO_INSTALL": "1",
			"GOPROXY":               "off",
			"GOTRACEBACK":           "none",
			"GOFLAGS":               "-gcflags=all=-dwarf=false -ldflags=-s",
		},
	}
	gotJS, _ := json.MarshalIndent(got, "", " ")
	wantJS, _ := json.MarshalIndent(want, "", " ")
	if string(gotJS) != string(wantJS) {
		t.Errorf("kernel.json:\n%s\nwant:\n%s", gotJS, wantJS)
	}
	if files["bin/go"].link != cellBuildName || files["bin/go-wire"].mode != 0o755 {
		t.Errorf("bin/go links to %q, bin/go-wire has mode %v; want the cell builder and executable", files["bin/go"].link, files["bin/go-wire"].mode)
	}

	o.NoXLA = true
	if env := newKernelSpec(o).Env; env["GOFLAGS"] != "-tags=noxla -gcflags=all=-dwarf=false -ldflags=-s" || env["CGO_ENABLED"] != "0" {
		t.Errorf("NoXLA spec env GOFLAGS = %q, CGO_ENABLED = %q; want -tags=noxla -gcflags=all=-dwarf=false -ldflags=-s and 0", env["GOFLAGS"], env["CGO_ENABLED"])
	}
	environ := withCellBuildEnv([]string{"HOME=/h", "CGO_ENABLED=1", "GOFLAGS=-mod=mod"}, true)
	if want := []string{"HOME=/h", "CGO_ENABLED=0", "GOFLAGS=-tags=noxla -gcflags=all=-dwarf=false -ldflags=-s"}; !slices.Equal(slices.Sorted(slices.Values(environ)), slices.Sorted(slices.Values(want))) {
		t.Errorf("withCellBuildEnv = %q, want %q (in any order)", environ, want)
	}
	o.THPTools = "/home/u/.cache/attnbook/thp-tools/go1.27.3-0123456789ab"
	if env := newKernelSpec(o).Env; env["ATTNBOOK_THP_TOOLS"] != o.THPTools {
		t.Errorf("spec env ATTNBOOK_THP_TOOLS = %q, want the huge-page tools' directory %s", env["ATTNBOOK_THP_TOOLS"], o.THPTools)
	}
	o.RawError = true
	if argv := newKernelSpec(o).Argv; argv[len(argv)-1] != "--raw_error" {
		t.Errorf("headless spec argv %q: want --raw_error last", argv)
	}
}

func TestWriteSpecDirIsIdempotent(t *testing.T) {
	o := testSpecOptions(t)
	o.SpecDir = filepath.Join(t.TempDir(), "kernels", "attnbook")
	for i, want := range []bool{true, false} {
		changed, err := writeSpecDir(o, "/usr/local/go/bin/go")
		if err != nil || changed != want {
			t.Fatalf("write %d: changed=%v err=%v, want changed=%v", i, changed, err, want)
		}
	}
	if err := os.WriteFile(filepath.Join(o.SpecDir, "bin", "go-wire"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if changed, err := writeSpecDir(o, "/usr/local/go/bin/go"); err != nil || !changed {
		t.Errorf("after editing bin/go-wire: changed=%v err=%v, want a rewrite", changed, err)
	}
	if err := os.Remove(filepath.Join(o.SpecDir, "bin", "go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("elsewhere", filepath.Join(o.SpecDir, "bin", "go")); err != nil {
		t.Fatal(err)
	}
	if changed, err := writeSpecDir(o, "/usr/local/go/bin/go"); err != nil || !changed {
		t.Errorf("after pointing bin/go elsewhere: changed=%v err=%v, want a rewrite", changed, err)
	}
	if target, err := os.Readlink(filepath.Join(o.SpecDir, "bin", "go")); err != nil || target != cellBuildName {
		t.Errorf("bin/go -> %q (%v), want %s", target, err, cellBuildName)
	}
	o.Root = "/elsewhere"
	if changed, _ := writeSpecDir(o, "/usr/local/go/bin/go"); !changed {
		t.Errorf("another root: want kernel.json rewritten")
	}
	if s := readSpec(o.SpecDir); s == nil || s.Env[RootEnv] != "/elsewhere" {
		t.Errorf("readSpec = %+v, want root /elsewhere", s)
	}
}

// shimPrereqs skips unless the shim can run here (a POSIX shell, go on PATH) and returns the
// real go and the repository root.
func shimPrereqs(t *testing.T) (goBin, root string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the shim is a POSIX shell script")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	if root, err = findRoot("."); err != nil {
		t.Fatal(err)
	}
	return goBin, root
}

// TestGoShim runs the shim with the real go: `go mod init gonb_<id>` in GoNB's temporary module
// must leave a module that requires and replaces attnbook by the repository root, with the
// repository's requirements and go.sum; any other go command passes through untouched.
func TestGoShim(t *testing.T) {
	goBin, root := shimPrereqs(t)
	shim := filepath.Join(t.TempDir(), "go")
	if err := os.WriteFile(shim, []byte(goShim(goBin)), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(dir string, env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(shim, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("shim %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	gonbEnv := []string{"GONB_TMP_DIR=x", RootEnv + "=" + root}

	tmp := filepath.Join(t.TempDir(), "gonb_1234abcd")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	run(tmp, gonbEnv, "mod", "init", "gonb_1234abcd")
	gomod, _ := os.ReadFile(filepath.Join(tmp, "go.mod"))
	for _, want := range []string{
		"module gonb_1234abcd",
		"github.com/attnbook/attnbook v0.0.0-00010101000000-000000000000",
		"replace github.com/attnbook/attnbook => " + root,
	} {
		if !strings.Contains(string(gomod), want) {
			t.Errorf("go.mod after the shim lacks %q:\n%s", want, gomod)
		}
	}
	if sum, _ := os.ReadFile(filepath.Join(tmp, "go.sum")); len(sum) == 0 {
		t.Errorf("go.sum was not copied from the repository")
	}
	// The repository's requirements too: a cell importing GoMLX and gonbui directly, as notebooks
	// do, leaves go.mod and go.sum as they are after `go get` (a change would send the cell's build
	// and the next one through the go command).
	repoMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(repoMod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(f[0], "github.com/gomlx/gomlx") {
			if want := f[0] + " " + f[1]; !strings.Contains(string(gomod), want) {
				t.Errorf("go.mod after the shim lacks the repository's requirement %q:\n%s", want, gomod)
			}
		}
	}
	writeFile(t, filepath.Join(tmp, "main.go"), `package main

import (
	"github.com/attnbook/attnbook/pkg/eager"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/janpfeifer/gonb/gonbui"
)

var _ *tensors.Tensor = eager.Tensor([]float64{1})

func main() { gonbui.DisplayHTML(dtypes.Float32.String()) }
`)
	sum, _ := os.ReadFile(filepath.Join(tmp, "go.sum"))
	get := exec.Command(goBin, "get")
	get.Dir, get.Env = tmp, append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod")
	if out, err := get.CombinedOutput(); err != nil {
		t.Fatalf("go get in the wired module: %v\n%s", err, out)
	}
	gomod2, _ := os.ReadFile(filepath.Join(tmp, "go.mod"))
	sum2, _ := os.ReadFile(filepath.Join(tmp, "go.sum"))
	if string(gomod2) != string(gomod) || string(sum2) != string(sum) {
		t.Errorf("go get changed the wired module (go.sum changed: %v); go.mod before:\n%s\nafter:\n%s", string(sum2) != string(sum), gomod, gomod2)
	}
	os.Remove(filepath.Join(tmp, "main.go"))
	if got := run(tmp, gonbEnv, "list", "-m", "-f", "{{.Path}} => {{.Replace.Dir}}", Module); strings.TrimSpace(got) != Module+" => "+root {
		t.Errorf("go list -m %s = %q, want it replaced by %s", Module, got, root)
	}

	// Not GoNB's init (other module name, or no GONB_TMP_DIR): plain go mod init.
	for _, tc := range []struct {
		name string
		env  []string
	}{{"other", gonbEnv}, {"gonb_5678", []string{RootEnv + "=" + root}}} {
		dir := t.TempDir()
		run(dir, tc.env, "mod", "init", tc.name)
		if gomod, _ := os.ReadFile(filepath.Join(dir, "go.mod")); strings.Contains(string(gomod), "attnbook") {
			t.Errorf("go mod init %s (env %q) was wired:\n%s", tc.name, tc.env, gomod)
		}
	}
	direct, err := exec.Command(goBin, "env", "GOVERSION", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := run(tmp, gonbEnv, "env", "GOVERSION", "GOROOT"); got != string(direct) {
		t.Errorf("go env through the shim = %q, want %q as from go itself", got, direct)
	}
}

// TestGoShimSkipsRepeatedGoGet: GoNB runs `go get` before every cell's build; through the shim
// and the cell builder it reaches go only when go.mod or go.sum changed since the last one that
// succeeded, or a cell imports a path outside the standard library that no cell imported at a
// `go get` since. A stand-in go logs each call that reaches it.
func TestGoShimSkipsRepeatedGoGet(t *testing.T) {
	goBin, root := shimPrereqs(t)
	bin := t.TempDir()
	log := filepath.Join(bin, "calls")
	logging := filepath.Join(bin, "logging-go")
	writeFile(t, logging, "#!/bin/sh\necho \"$*\" >> "+shellQuote(log)+"\nexec "+shellQuote(goBin)+" \"$@\"\n")
	if err := os.Chmod(logging, 0o755); err != nil {
		t.Fatal(err)
	}
	shim := specBin(t, bin, goShim(logging))
	tmp := filepath.Join(t.TempDir(), "gonb_5678abcd")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GONB_TMP_DIR="+tmp, RootEnv+"="+root, goEnvVar+"="+logging, "GOFLAGS=-mod=mod", "GOPROXY=off")
	goGet := func() error {
		cmd := exec.Command(shim, "get")
		cmd.Dir, cmd.Env = tmp, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
	gets := func() int {
		data, _ := os.ReadFile(log)
		return strings.Count(string(data), "get\n")
	}
	cmd := exec.Command(shim, "mod", "init", "gonb_5678abcd")
	cmd.Dir, cmd.Env = tmp, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go mod init: %v\n%s", err, out)
	}
	cell := func(imports string) {
		writeFile(t, filepath.Join(tmp, "main.go"), "package main\n\nimport (\n"+imports+")\n\nfunc main() { display.Println(math.Pi) }\n")
	}
	cell("\t\"math\"\n\n\t\"github.com/attnbook/attnbook/pkg/display\"\n")
	for i, want := range []int{1, 1, 1} {
		if err := goGet(); err != nil {
			t.Fatalf("go get %d: %v", i+1, err)
		}
		if got := gets(); got != want {
			t.Errorf("after go get %d through the shim, go ran get %d times, want %d", i+1, got, want)
		}
	}
	step := func(what string, wantErr bool, want int) {
		t.Helper()
		if err := goGet(); (err != nil) != wantErr || gets() != want {
			t.Errorf("%s: go get err %v (want one: %v), go ran get %d times, want %d", what, err, wantErr, gets(), want)
		}
	}
	cell("\t\"math\"\n\t\"fmt\"\n\n\t\"github.com/attnbook/attnbook/pkg/display\"\n")
	step("a new standard-library import", false, 1)
	cell("\t\"math\"\n\n\t\"github.com/attnbook/attnbook/pkg/eager\"\n")
	step("a new package of the repository", false, 2)
	cell("\t\"math\"\n\n\tshow \"github.com/attnbook/attnbook/pkg/display\"\n")
	step("an earlier cell's import again, renamed", false, 2)
	cell("\t\"github.com/attnbook/attnbook/pkg/display\"\n\t\"github.com/attnbook/attnbook/pkg/eager\"\n")
	step("both imports seen before", false, 2)
	cell("\t\"math\"\n\n\t\"example.com/nosuch/pkg\"\n\t\"github.com/attnbook/attnbook/pkg/display\"\n")
	step("an import nobody provides", true, 3)
	step("an import nobody provides, again", true, 4)
	cell("\t\"github.com/attnbook/attnbook/pkg/display\"\n")
	step("back to a known import after the failures", false, 4)
	mod, err := os.ReadFile(filepath.Join(tmp, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(tmp, "go.mod"), string(mod)+"\n// edited by hand\n")
	step("go.mod edited by hand", false, 5)
}

func TestKernelSpecEnvAndLauncher(t *testing.T) {
	o := testSpecOptions(t)
	o.Experiment = "simd"
	if env := newKernelSpec(o).Env; env["GOEXPERIMENT"] != "simd" {
		t.Errorf("spec env GOEXPERIMENT = %q, want simd", env["GOEXPERIMENT"])
	}
	o.GODEBUG = "cpu.fma=off"
	if env := newKernelSpec(o).Env; env["GODEBUG"] != "cpu.fma=off" {
		t.Errorf("spec env GODEBUG = %q, want cpu.fma=off", env["GODEBUG"])
	}
	o.Experiment, o.GODEBUG = "", ""
	if env := newKernelSpec(o).Env; env["GOEXPERIMENT"] != "" || env["GODEBUG"] != "" {
		t.Errorf("no experiment: the spec must leave GOEXPERIMENT and GODEBUG unset, has %q and %q", env["GOEXPERIMENT"], env["GODEBUG"])
	}
	o.ByFolder = true
	if argv := newKernelSpec(o).Argv; argv[0] != o.SpecDir+"/bin/attnbook-kernel" {
		t.Errorf("by-folder spec argv %q: want the launcher first", argv)
	}
	files, _ := specFiles(o, "/usr/local/go/bin/go")
	if f, ok := files["bin/attnbook-kernel"]; !ok || f.mode != 0o755 {
		t.Errorf("by-folder spec lacks an executable bin/attnbook-kernel: %v", ok)
	}
}

// TestFolderLauncher runs bin/attnbook-kernel with a stand-in gonb that prints $ATTNBOOK_ROOT:
// Jupyter starts kernels in the notebook's folder, and a notebook inside a checkout gets that
// checkout; outside any, the spec's default.
func TestFolderLauncher(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the launcher is a POSIX shell script")
	}
	tools := t.TempDir()
	writeFile(t, filepath.Join(tools, "gonb"), "#!/bin/sh\necho \"root=$ATTNBOOK_ROOT args=$*\"\n")
	if err := os.Chmod(filepath.Join(tools, "gonb"), 0o755); err != nil {
		t.Fatal(err)
	}
	launcher := filepath.Join(t.TempDir(), "attnbook-kernel")
	if err := os.WriteFile(launcher, []byte(folderLauncher(filepath.Join(tools, "gonb"))), 0o755); err != nil {
		t.Fatal(err)
	}
	checkout := t.TempDir()
	writeFile(t, filepath.Join(checkout, "go.mod"), "module "+Module+" // a comment\n\ngo 1.26\n")
	writeFile(t, filepath.Join(checkout, "notebooks", "deep", "x.ipynb"), "{}")
	quoted := t.TempDir()
	writeFile(t, filepath.Join(quoted, "go.mod"), "module \""+Module+"\"\n")
	other := t.TempDir()
	writeFile(t, filepath.Join(other, "go.mod"), "module example.com/other\n")
	writeFile(t, filepath.Join(other, "sub", "keep"), "")
	for _, tc := range []struct{ name, cwd, want string }{
		{"notebooks folder", filepath.Join(checkout, "notebooks"), checkout},
		{"deeper", filepath.Join(checkout, "notebooks", "deep"), checkout},
		{"the root itself", checkout, checkout},
		{"quoted module path", quoted, quoted},
		{"another module", filepath.Join(other, "sub"), "/default/checkout"},
		{"outside any module", t.TempDir(), "/default/checkout"},
	} {
		cmd := exec.Command(launcher, "--kernel", "conn.json")
		cmd.Dir = tc.cwd
		cmd.Env = append(os.Environ(), RootEnv+"=/default/checkout", "PWD="+tc.cwd)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if want := "root=" + tc.want + " args=--kernel conn.json\n"; string(out) != want {
			t.Errorf("%s: the launcher started %q, want %q", tc.name, out, want)
		}
	}
}

// TestAttnbookSpecs: doctor finds every attnbook kernel spec in Jupyter's kernel folders and says
// which checkout each serves, flagging one whose checkout is gone and a second "attnbook" that
// shadows or is shadowed.
func TestAttnbookSpecs(t *testing.T) {
	user, system := t.TempDir(), t.TempDir()
	checkout := t.TempDir()
	writeFile(t, filepath.Join(checkout, "go.mod"), "module "+Module+"\n")
	write := func(dir, name string, o specOptions) {
		o.SpecDir = filepath.Join(dir, name)
		if _, err := writeSpecDir(o, "/usr/local/go/bin/go"); err != nil {
			t.Fatal(err)
		}
	}
	o := testSpecOptions(t)
	o.Root, o.ByFolder = checkout, true
	write(user, "attnbook", o)
	o.Root, o.ByFolder = "/gone/checkout", false
	write(user, "attnbook-1234abcd", o)
	write(system, "attnbook", o)
	writeFile(t, filepath.Join(user, "python3", "kernel.json"), `{"argv": ["python3"], "display_name": "Python 3", "language": "python", "env": {}}`)

	py := &python{KernelDirs: []string{user, system}, DataDir: filepath.Dir(user)}
	var got []string
	for _, s := range attnbookSpecs(py) {
		got = append(got, fmt.Sprintf("%s %s shadowed=%v", s.Name, s.Spec.Env[RootEnv], s.Shadowed))
	}
	want := []string{
		"attnbook " + checkout + " shadowed=false",
		"attnbook-1234abcd /gone/checkout shadowed=false",
		"attnbook /gone/checkout shadowed=true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("attnbookSpecs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := describeSpec(readSpec(filepath.Join(user, "attnbook"))); !strings.Contains(d, "serves the checkout each notebook is in; default "+checkout) {
		t.Errorf("describeSpec(by folder) = %q", d)
	}
	if d := describeSpec(readSpec(filepath.Join(user, "attnbook-1234abcd"))); !strings.Contains(d, "serves /gone/checkout (not an attnbook checkout any more)") {
		t.Errorf("describeSpec(pinned, gone) = %q", d)
	}
}

// specBin lays out a kernel spec's bin/ in dir as specFiles does — go, a link to the cell builder
// (built from this checkout), and the script go-wire with the given content — and returns bin/go.
func specBin(t *testing.T, dir, goWire string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	if out, err := exec.Command(goBin, "build", "-o", filepath.Join(dir, cellBuildName), "./internal/cellbuild").CombinedOutput(); err != nil {
		t.Fatalf("building the cell builder: %v\n%s", err, out)
	}
	writeFile(t, filepath.Join(dir, goWireName), goWire)
	if err := os.Chmod(filepath.Join(dir, goWireName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(cellBuildName, filepath.Join(dir, goShimName)); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, goShimName)
}

// TestGoShimHandsCellBuildsToCellBuild: GoNB's `go build -o BIN`, `go get` and goimports'
// `go env -json …` in its module are the cell builder's (bin/go), which runs them with
// $ATTNBOOK_GO; the same with other arguments, outside a GoNB module, or without $ATTNBOOK_GO go
// to bin/go-wire.
func TestGoShimHandsCellBuildsToCellBuild(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the shim is a POSIX shell script")
	}
	bin := t.TempDir()
	fakeGo := filepath.Join(t.TempDir(), "real-go")
	writeFile(t, fakeGo, "#!/bin/sh\necho go \"$@\"\n")
	if err := os.Chmod(fakeGo, 0o755); err != nil {
		t.Fatal(err)
	}
	shim := specBin(t, bin, "#!/bin/sh\necho wire \"$@\"\n")
	gonbMod, otherMod := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(gonbMod, "go.mod"), "module gonb_1234abcd\n")
	writeFile(t, filepath.Join(otherMod, "go.mod"), "module example.com/x\n")
	for _, tc := range []struct {
		dir, tmpDir, goVar string
		args               []string
		want               string
	}{
		// get first: a build runs go get's check too, and records it (cellbuild's goGet).
		{gonbMod, gonbMod, fakeGo, []string{"get"}, "go get"},
		{gonbMod, gonbMod, fakeGo, []string{"build", "-o", "/t/gonb_1234abcd"}, "go build -o /t/gonb_1234abcd"},
		{gonbMod, gonbMod, fakeGo, []string{"env", "-json", "GOMOD", "GOROOT"}, "go env -json GOMOD GOROOT"},
		{gonbMod, gonbMod, fakeGo, []string{"build", "-o", "/t/b", "-race"}, "wire build -o /t/b -race"},
		{gonbMod, gonbMod, fakeGo, []string{"test", "-c", "-o", "/t/b"}, "wire test -c -o /t/b"},
		{gonbMod, gonbMod, fakeGo, []string{"get", "-u"}, "wire get -u"},
		{gonbMod, gonbMod, fakeGo, []string{"env", "GOROOT"}, "wire env GOROOT"},
		{gonbMod, gonbMod, fakeGo, []string{"mod", "init", "gonb_1234abcd"}, "wire mod init gonb_1234abcd"},
		{gonbMod, gonbMod, "", []string{"get"}, "wire get"},
		{gonbMod, "", fakeGo, []string{"build", "-o", "/t/b"}, "wire build -o /t/b"},
		{gonbMod, "", fakeGo, []string{"get"}, "wire get"},
		{otherMod, otherMod, fakeGo, []string{"build", "-o", "/t/b"}, "wire build -o /t/b"},
		{otherMod, otherMod, fakeGo, []string{"get"}, "wire get"},
		{otherMod, otherMod, fakeGo, []string{"env", "-json", "GOMOD"}, "wire env -json GOMOD"},
	} {
		cmd := exec.Command(shim, tc.args...)
		cmd.Dir = tc.dir
		cmd.Env = append(os.Environ(), "GONB_TMP_DIR="+tc.tmpDir, goEnvVar+"="+tc.goVar)
		out, err := cmd.CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if got := lines[len(lines)-1]; err != nil || got != tc.want {
			t.Errorf("bin/go %q in %s (GONB_TMP_DIR=%q, %s=%q): %q, %v; want %q last", tc.args, tc.dir, tc.tmpDir, goEnvVar, tc.goVar, out, err, tc.want)
		}
	}
}
