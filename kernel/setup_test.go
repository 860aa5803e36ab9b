package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
)

func TestToolPinFollowsTheToolchain(t *testing.T) {
	for _, tc := range []struct{ goVersion, gopls string }{
		{"go1.26.8", "v0.23.0"},
		{"go1.27rc1", "v0.23.0"},
		{"go1.25.3", "v0.20.0"},
		{"go1.24.4", "v0.20.0"}, // Debian trixie (the classroom image)
		{"devel go1.27-abcdef", "v0.23.0"},
	} {
		if got := pinFor(tc.goVersion).Gopls; got != tc.gopls {
			t.Errorf("pinFor(%q).Gopls = %q, want %q", tc.goVersion, got, tc.gopls)
		}
	}
}

func TestGoToolsArePinned(t *testing.T) {
	root, err := findRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	tools := goTools("go1.26.8")
	gonb := requiredVersion(filepath.Join(root, "go.mod"), gonbModule)
	if gonb != gonbVersion {
		t.Errorf("go.mod requires gonb %q but gonbVersion is %q: update the constant with the tool line", gonb, gonbVersion)
	}
	want := map[string]string{"gonb": gonb, "goimports": "v0.47.1-0.20260707181000-a299dadba899", "gopls": "v0.23.0"}
	for _, tool := range tools {
		if tool.Version != want[tool.Name] {
			t.Errorf("%s pinned at %q, want %q", tool.Name, tool.Version, want[tool.Name])
		}
		install := strings.Join(tool.Install, " ")
		if tool.Name != "gonb" && !strings.HasSuffix(install, "@"+tool.Version) {
			t.Errorf("%s installs with %q: want an exact @version", tool.Name, install)
		}
	}
	if v := requiredVersion(filepath.Join(root, "go.mod"), "github.com/gomlx/gomlx"); v != "v0.28.16" {
		t.Errorf("requiredVersion(gomlx) = %q, want v0.28.16", v)
	}
	if d := goDirective(filepath.Join(root, "go.mod")); d != "1.27" {
		t.Errorf("goDirective = %q, want 1.27", d)
	}
	if tc := goModLine(filepath.Join(root, "go.mod"), "toolchain"); tc != "go1.27.3" {
		t.Errorf("go.mod's toolchain line = %q, want go1.27.3", tc)
	}
}

// A go command set to GOTOOLCHAIN=local, older than go.mod asks (the machines of this project: Go
// 1.26.8, GOTOOLCHAIN=local in its go.env), is told the export that fetches go.mod's toolchain.
func TestCheckGoNamesTheExport(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module m\n\ngo 1.27\n\ntoolchain go1.27.3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ goToolchain, want string }{
		{"local", "export GOTOOLCHAIN=go1.27.3 (the go command downloads it from the module proxy) and run this again, or install a newer Go"},
		{"auto", "go1.26.8 is older than go.mod's go1.27: install a newer Go from https://go.dev/dl"},
	} {
		e := &env{Root: root, Go: goEnv{GOVERSION: "go1.26.8", GOTOOLCHAIN: tc.goToolchain}}
		_, _, err := checkGo(e)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("GOTOOLCHAIN=%s: checkGo error %v, want it to contain %q", tc.goToolchain, err, tc.want)
		}
	}
	e := &env{Root: root, Go: goEnv{GOVERSION: "go1.27.3", GOTOOLCHAIN: "local", GOROOT: "/go", GOPATH: "/gopath"}}
	if _, _, err := checkGo(e); err != nil {
		t.Errorf("go1.27.3: %v", err)
	}
}

// TestRunAndBenchCheckGoFirst: run and bench, which build with go.mod's Go, say what to do about
// an older one before anything else, as setup and doctor do (not the go command's message about
// the GOTOOLCHAIN the kernel passes on).
func TestRunAndBenchCheckGoFirst(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module m\n\ngo 1.27\n\ntoolchain go1.27.3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "go1.26.8 is older than go.mod's go1.27: GOTOOLCHAIN=local keeps the go command from fetching go.mod's toolchain: export GOTOOLCHAIN=go1.27.3"
	var stderr strings.Builder
	e := &env{Root: root, Go: goEnv{GOVERSION: "go1.26.8", GOTOOLCHAIN: "local"}, Stdout: io.Discard, Stderr: &stderr}
	if _, err := runPrerequisites(context.Background(), e); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("runPrerequisites with go1.26.8: %v, want an error starting %q", err, want)
	}
	if code := cmdBench(context.Background(), e, []string{"--quick"}); code != exitMissing || !strings.HasPrefix(stderr.String(), "bench: "+want) {
		t.Errorf("bench with go1.26.8: exit %d, stderr %q; want %d and %q", code, stderr.String(), exitMissing, "bench: "+want)
	}
}

func TestExperiment(t *testing.T) {
	for _, tc := range []struct {
		arch, version, user, want string
		simd                      bool
	}{
		{"amd64", "go1.26.8", "", "simd", true},
		{"amd64", "go1.26.8", "simd", "simd", true},
		{"amd64", "go1.26.8", "loopvar", "loopvar,simd", true},
		{"amd64", "go1.26.8", "nosimd", "nosimd", false},
		{"amd64", "devel go1.27-abc", "", "simd", true},
		{"amd64", "go1.25.3", "", "", false}, // no simd experiment before Go 1.26
		{"arm64", "go1.26.8", "", "", false},
		{"arm64", "go1.26.8", "simd", "simd", true}, // the user's own choice is kept
	} {
		g := goEnv{GOARCH: tc.arch, GOVERSION: tc.version, GOEXPERIMENT: tc.user}
		if got := g.Experiment(); got != tc.want || g.SIMD() != tc.simd {
			t.Errorf("%s %s GOEXPERIMENT=%q: Experiment() = %q SIMD() = %v, want %q %v", tc.arch, tc.version, tc.user, got, g.SIMD(), tc.want, tc.simd)
		}
	}
	g := goEnv{GOARCH: "amd64", GOVERSION: "go1.26.8"}
	t.Setenv("GOEXPERIMENT", "")
	n := 0
	for _, kv := range g.Environ() {
		if strings.HasPrefix(kv, "GOEXPERIMENT=") {
			n++
			if kv != "GOEXPERIMENT=simd" {
				t.Errorf("Environ() has %q, want GOEXPERIMENT=simd", kv)
			}
		}
	}
	if n != 1 {
		t.Errorf("Environ() has %d GOEXPERIMENT entries, want 1", n)
	}
}

// TestGODEBUG: programs built with the SIMD kernels run with math.Exp's FMA path off, the user's
// own GODEBUG kept; without the kernels GODEBUG is the user's.
func TestGODEBUG(t *testing.T) {
	for _, tc := range []struct {
		arch, experiment, user, want string
	}{
		{"amd64", "", "", "cpu.fma=off"},
		{"amd64", "", "gctrace=1", "gctrace=1,cpu.fma=off"},
		{"amd64", "", "cpu.fma=on", "cpu.fma=on"}, // the user's own choice is kept
		{"amd64", "nosimd", "", ""},
		{"arm64", "", "", ""},
		{"arm64", "simd", "gctrace=1", "gctrace=1"}, // no cpu.fma option on arm64
	} {
		t.Setenv("GODEBUG", tc.user)
		g := goEnv{GOARCH: tc.arch, GOVERSION: "go1.26.8", GOEXPERIMENT: tc.experiment}
		if got := g.GODEBUG(); got != tc.want {
			t.Errorf("%s GODEBUG=%q: GODEBUG() = %q, want %q", tc.arch, tc.user, got, tc.want)
		}
		var got []string
		for _, kv := range g.Environ() {
			if strings.HasPrefix(kv, "GODEBUG=") {
				got = append(got, kv)
			}
		}
		var want []string
		if tc.want != "" {
			want = []string{"GODEBUG=" + tc.want}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s GODEBUG=%q: Environ() has %q, want GODEBUG=%q", tc.arch, tc.user, got, tc.want)
		}
	}
}

func TestDefaultRoot(t *testing.T) {
	other := t.TempDir()
	writeFile(t, filepath.Join(other, "go.mod"), "module "+Module+"\n")
	gone := filepath.Join(t.TempDir(), "deleted")
	spec := func(root string) *kernelSpec { return &kernelSpec{Env: map[string]string{RootEnv: root}} }
	for _, tc := range []struct {
		name     string
		have     *kernelSpec
		want     string
		wantNote string
	}{
		{"none registered", nil, "/here", ""},
		{"ours", spec("/here"), "/here", ""},
		{"another live checkout keeps it", spec(other), other, "keep the default " + other},
		{"a deleted checkout is replaced", spec(gone), "/here", "which is gone"},
		{"not a checkout", spec(t.TempDir()), "/here", "which is gone"},
	} {
		got, note := defaultRoot(tc.have, "/here")
		if got != tc.want || (tc.wantNote == "") != (note == "") || !strings.Contains(note, tc.wantNote) {
			t.Errorf("%s: defaultRoot = %q, %q; want %q and a note containing %q", tc.name, got, note, tc.want, tc.wantNote)
		}
	}
}

func TestFindRoot(t *testing.T) {
	root, err := findRoot(".")
	if err != nil || filepath.Base(root) == "kernel" || modulePath(filepath.Join(root, "go.mod")) != Module {
		t.Errorf("findRoot(.) = %q, %v", root, err)
	}
	if _, err := findRoot(t.TempDir()); err == nil {
		t.Errorf("findRoot outside the repository: want an error")
	}
}

func TestGoTestArgs(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"", "test -timeout=75m ./..."},
		{"-run X", "test -timeout=75m -run X ./..."},
		{"-run X ./pkg/...", "test -timeout=75m -run X ./pkg/..."},
		{"-v -count=1 .", "test -timeout=75m -v -count=1 ."},
		{"github.com/attnbook/attnbook/notebooks", "test -timeout=75m github.com/attnbook/attnbook/notebooks"},
		{"-run TestA/sub", "test -timeout=75m -run TestA/sub ./..."},
		{"-v -args -update", "test -timeout=75m -v ./... -args -update"},
		{"./kernel -args -x ./y", "test -timeout=75m ./kernel -args -x ./y"},
		{"-timeout 5m ./kernel", "test -timeout 5m ./kernel"},
		{"-timeout=5m", "test -timeout=5m ./..."},
	} {
		if got := strings.Join(goTestArgs(strings.Fields(tc.args)), " "); got != tc.want {
			t.Errorf("goTestArgs(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestServerArgs(t *testing.T) {
	custom := classicCustom("/r", &python{ConfigDir: "/home/s/.jupyter", NotebookStatic: "/usr/lib/python3/dist-packages/notebook/static"})
	args, path := serverArgs(false, "/r/notebooks", 8890, false, false, custom)
	if got := strings.Join(args, " "); got != "-m notebook --NotebookApp.ip=127.0.0.1 --NotebookApp.port=8890 --NotebookApp.port_retries=0 --NotebookApp.notebook_dir=/r/notebooks --no-browser "+
		`--NotebookApp.tornado_settings={"static_custom_path":["/home/s/.jupyter/custom","/r/kernel/classic","/usr/lib/python3/dist-packages/notebook/static/custom"]}` || path != "/tree" {
		t.Errorf("classic: %q %q", got, path)
	}
	args, path = serverArgs(true, "/r/notebooks", 8890, true, true, custom)
	if got := strings.Join(args, " "); got != "-m jupyterlab --ServerApp.ip=127.0.0.1 --ServerApp.port=8890 --ServerApp.port_retries=0 --ServerApp.root_dir=/r/notebooks --allow-root" || path != "/lab" {
		t.Errorf("lab: %q %q", got, path)
	}
}

func TestRandomToken(t *testing.T) {
	a, err1 := randomToken()
	b, err2 := randomToken()
	if err1 != nil || err2 != nil || len(a) != 48 || a == b || strings.Trim(a, "0123456789abcdef") != "" {
		t.Errorf("randomToken = %q, %q (%v, %v)", a, b, err1, err2)
	}
}

// requiredVersion is the version go.mod requires for module mod (e.g. the gonb tool), or "".
func requiredVersion(gomod, mod string) string {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(fields) >= 2 && fields[0] == mod {
			return fields[1]
		}
	}
	return ""
}

// TestTrustNotebooks: setup signs the notebooks in Jupyter's signature database (what the classic
// Notebook checks before it says "Trusted"), only those not signed yet, and a changed notebook is
// signed again.
func TestTrustNotebooks(t *testing.T) {
	ctx := context.Background()
	py := probePython(ctx)
	if py == nil || !py.Has("nbformat") {
		nbrun.Missing(t, "no Python with nbformat (Jupyter)")
	}
	t.Setenv("JUPYTER_DATA_DIR", t.TempDir()) // the notary's secret and database live here
	root := t.TempDir()
	nb := func(src string) string {
		return `{"cells": [{"cell_type": "code", "id": "c0", "metadata": {}, "source": "` + src + `", "outputs": [], "execution_count": null}],
 "metadata": {"kernelspec": {"name": "attnbook", "display_name": "Go (attnbook)", "language": "go"}}, "nbformat": 4, "nbformat_minor": 5}`
	}
	a := writeFile(t, filepath.Join(root, "notebooks", "a.ipynb"), nb("%%\\nfmt.Println(1)"))
	b := writeFile(t, filepath.Join(root, "notebooks", "b.ipynb"), nb("%%\\nfmt.Println(2)"))
	e := &env{Root: root, Stdout: io.Discard, Stderr: io.Discard}

	if got, err := untrustedNotebooks(ctx, py, []string{a, b}); err != nil || len(got) != 2 {
		t.Fatalf("before setup: untrusted %q (%v), want both", got, err)
	}
	for i, want := range []string{"signed", "ok"} {
		did, detail, err := trustNotebooks(ctx, e)
		if err != nil || did != want {
			t.Fatalf("trust run %d: %q %q %v, want %q", i+1, did, detail, err, want)
		}
	}
	if got, err := untrustedNotebooks(ctx, py, []string{a, b}); err != nil || len(got) != 0 {
		t.Errorf("after setup: untrusted %q (%v), want none", got, err)
	}
	writeFile(t, b, nb("%%\\nfmt.Println(3)"))
	if got, _ := untrustedNotebooks(ctx, py, []string{a, b}); len(got) != 1 || got[0] != b {
		t.Errorf("after editing b: untrusted %q, want only b", got)
	}
	if did, detail, err := trustNotebooks(ctx, e); err != nil || did != "signed" || !strings.HasPrefix(detail, "1 of 2 notebooks signed") {
		t.Errorf("trust after an edit: %q %q %v, want 1 of 2 signed", did, detail, err)
	}
}
