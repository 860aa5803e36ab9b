package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/attnbook/attnbook/pkg/benchdata"
)

// repoRoot is the repository root, two folders up from this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// dockerfileArg is the default of `ARG name=` in the Dockerfile at path.
func dockerfileArg(t *testing.T, path, name string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ARG ` + name + `=(\S+)$`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s has no ARG %s= line", path, name)
	}
	return string(m[1])
}

// TestTorchImagePins: the current-PyTorch image is reproducible: built on the classroom image's
// base tag, python3-torch pinned to one exact Debian version (installed as pinned), and tagged by
// that version and the Dockerfile's SHA-256, so an edited Dockerfile is a new image and an
// unchanged one is the cached image.
func TestTorchImagePins(t *testing.T) {
	root := repoRoot(t)
	dockerfile := filepath.Join(root, "docker", "torch", "Dockerfile")
	base := dockerfileArg(t, dockerfile, "BASE_IMAGE")
	if want := dockerfileArg(t, filepath.Join(root, "docker", "Dockerfile"), "BASE_IMAGE"); base != want {
		t.Errorf("docker/torch/Dockerfile builds on %s, the classroom image on %s: they must share the base", base, want)
	}
	version := dockerfileArg(t, dockerfile, "TORCH_DEB_VERSION")
	if !regexp.MustCompile(`^2\.\d+\.\d+\+dfsg-\d+$`).MatchString(version) {
		t.Errorf("TORCH_DEB_VERSION=%s: want one exact Debian version of PyTorch 2.x, e.g. 2.6.0+dfsg-7", version)
	}
	data, _ := os.ReadFile(dockerfile)
	for _, pin := range []string{`"python3-torch=${TORCH_DEB_VERSION}"`, `"libtorch2.6=${TORCH_DEB_VERSION}"`, "FROM ${BASE_IMAGE}"} {
		if !bytes.Contains(data, []byte(pin)) {
			t.Errorf("docker/torch/Dockerfile lacks %s", pin)
		}
	}
	if major, minor, _ := strings.Cut(version, "."); !bytes.Contains(data, []byte("libtorch"+major+"."+strings.SplitN(minor, ".", 2)[0]+"=")) {
		t.Errorf("docker/torch/Dockerfile pins python3-torch %s but not the libtorch of the same version", version)
	}

	im, err := ReadTorchImage(root)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	wantTag := "attnbook/torch:" + strings.NewReplacer("+", "_", "~", "_", ":", "_").Replace(version) + "-" + hex.EncodeToString(sum[:])[:12]
	if im.Tag != wantTag || im.DebVersion != version || im.Base != base {
		t.Errorf("ReadTorchImage = %+v, want tag %s, version %s, base %s", im, wantTag, version, base)
	}
	if got := im.Version(); got != version[:3] {
		t.Errorf("Version() = %q, want %q", got, version[:3])
	}
}

// fakePath makes a PATH holding bash and, if script is not "", a `docker` that runs it.
func fakePath(t *testing.T, script string) string {
	t.Helper()
	dir := t.TempDir()
	for _, tool := range []string{"bash", "sed", "head", "sha256sum", "cut", "tr", "dirname"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s not found", tool)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	if script != "" {
		if err := os.WriteFile(filepath.Join(dir, "docker"), []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCurrentTorchSkipped: where Docker is absent, or its daemon does not answer, the current
// PyTorch's columns are still in the report, with no times and the reason; --current-torch off
// leaves them out and says so.
func TestCurrentTorchSkipped(t *testing.T) {
	root := repoRoot(t)
	for _, c := range []struct {
		name, docker, why string
	}{
		{"no docker", "", "docker is not installed"},
		{"no daemon", `echo "Cannot connect to the Docker daemon at unix:///var/run/docker.sock" >&2; exit 1`, "no Docker daemon answers (docker version: Cannot connect to the Docker daemon"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("PATH", fakePath(t, c.docker))
			o := Options{Root: root, Out: t.TempDir(), CurrentTorch: "auto", BLAS: []string{"reference", "openblas"}, Device: "cpu"}
			rep := &benchdata.Report{}
			builds, skipped := containerBuilds(o, rep, 2, &bytes.Buffer{})
			if len(builds) != 0 || len(skipped) != 2 {
				t.Fatalf("%d builds, %d skipped: want 0 and 2", len(builds), len(skipped))
			}
			for i, name := range []string{"PyTorch 2.6 (reference BLAS)", "PyTorch 2.6 (OpenBLAS)"} {
				s := skipped[i]
				if s.Name != name || s.Framework != "pytorch" || !strings.HasPrefix(s.Backend, "container-") || !strings.Contains(s.Skipped, c.why) || !strings.HasPrefix(s.Image, "attnbook/torch:2.6") {
					t.Errorf("skipped[%d] = %+v, want %s saying %q", i, s, name, c.why)
				}
			}
			rep.Series = append([]benchdata.Series{{Framework: "go", Backend: "go", Name: "GoMLX go"}}, skipped...)
			rep.Results = []*benchdata.Result{{Impl: "chapter", Framework: "go", Backend: "go", Mode: Forward, RunsMS: []float64{1}}}
			rep.Finish()
			if txt := rep.Text(); !strings.Contains(txt, "PyTorch 2.6 (OpenBLAS): no times: ") || !strings.Contains(txt, c.why) {
				t.Errorf("the report does not say why the column is empty:\n%s", txt)
			}
		})
	}
	t.Run("off", func(t *testing.T) {
		rep := &benchdata.Report{}
		builds, skipped := containerBuilds(Options{Root: root, CurrentTorch: "off", BLAS: []string{"openblas"}}, rep, 2, &bytes.Buffer{})
		if len(builds)+len(skipped) != 0 || len(rep.Notes) != 1 || !strings.Contains(rep.Notes[0], "--current-torch off") {
			t.Errorf("off: %d builds, %d skipped, notes %q", len(builds), len(skipped), rep.Notes)
		}
	})
}

// requireDocker skips loudly unless CI=true or ATTNBOOK_DOCKER_TEST=1; with either, no Docker is
// a failure.
func requireDocker(t *testing.T) {
	t.Helper()
	ci, asked := os.Getenv("CI") == "true", os.Getenv("ATTNBOOK_DOCKER_TEST") == "1"
	if !ci && !asked {
		t.Skip("\n" + strings.Repeat("!", 78) + "\n" +
			"!!! SKIPPED: the current-PyTorch (2.6) container column was NOT built or tested.\n" +
			"!!! Run it with:  ATTNBOOK_DOCKER_TEST=1 go test -v -timeout 30m -run CurrentTorch ./internal/bench/\n" +
			"!!! It needs a docker daemon, root for debootstrap and Debian's mirror (to build the\n" +
			"!!! image once); CI=true makes it mandatory.\n" +
			strings.Repeat("!", 78))
	}
	if why := DockerAbsent(); why != "" {
		t.Fatalf("CI=true or ATTNBOOK_DOCKER_TEST=1, but %s: the current-PyTorch column cannot run", why)
	}
}

// TestCurrentTorchColumn builds the current-PyTorch image when missing (then finds it cached),
// checks what is in it (python3-torch as pinned, PyTorch 2.6 with F.scaled_dot_product_attention,
// no network under --network none, as the bench runs it), and runs the bench at a small size with the host's PyTorch 1.13 and the container's
// 2.6 on both BLAS builds: the container's columns are timed, its SDPA too (forward and fwd+bwd),
// and its chapter agrees with GoMLX's.
func TestCurrentTorchColumn(t *testing.T) {
	requireDocker(t)
	root := repoRoot(t)
	var progress bytes.Buffer
	start := time.Now()
	im, err := EnsureTorchImage(root, filepath.Join(t.TempDir(), "build.log"), &progress)
	if err != nil {
		t.Fatalf("EnsureTorchImage: %v\n%s", err, progress.String())
	}
	t.Logf("image %s ready in %v", im.Tag, time.Since(start).Round(time.Second))
	id := func() string {
		out, err := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", im.Tag).Output()
		if err != nil {
			t.Fatalf("docker image inspect %s: %v", im.Tag, err)
		}
		return strings.TrimSpace(string(out))
	}
	before := id()
	cmd := exec.Command("bash", filepath.Join(root, TorchImageScript))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != im.Tag || !strings.Contains(stderr.String(), "exists (cached)") || id() != before {
		t.Errorf("second build: %v, stdout %q, stderr %q: want the cached image %s unchanged", err, out, stderr.String(), im.Tag)
	}

	// No network: the container's only interface is loopback.
	probe := `import os, subprocess, torch, torch.nn.functional as F
print(subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "python3-torch"], capture_output=True, text=True).stdout)
print(torch.__version__, hasattr(F, "scaled_dot_product_attention"))
print("offline" if os.listdir("/sys/class/net") == ["lo"] else "interfaces %s" % os.listdir("/sys/class/net"))`
	got, err := exec.Command("docker", "run", "--rm", "--network", "none", im.Tag, "python3", "-c", probe).CombinedOutput()
	if want := im.DebVersion + "\n" + im.Version(); err != nil || !strings.HasPrefix(string(got), want) || !strings.Contains(string(got), " True\noffline") {
		t.Errorf("in the image: %v\n%s\nwant python3-torch %s, torch %s.x with F.scaled_dot_product_attention, offline", err, got, im.DebVersion, im.Version())
	}

	if !hasTorch(DefaultPython) {
		t.Fatalf("%s cannot import torch: the host's PyTorch columns are the comparison", DefaultPython)
	}
	o, err := ParseFlags(root, []string{"--size", "2,128,64,4", "--impls", "chapter,fused,fast", "--ref-impls", "chapter,fused", "--reps", "2", "--backends", "go", "-o", t.TempDir()}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(o, &progress)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, rep.Text())
	}
	keys := map[string]benchdata.Series{}
	for _, s := range rep.Series {
		keys[s.Key()] = s
	}
	for _, k := range []string{"go/go", "pytorch/reference-blas", "pytorch/openblas", "pytorch/container-reference-blas", "pytorch/container-openblas"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("no %s column; series %+v", k, rep.Series)
		}
	}
	for _, k := range []string{"pytorch/container-reference-blas", "pytorch/container-openblas"} {
		s := keys[k]
		if s.Skipped != "" || !strings.HasPrefix(s.Version, im.Version()+".") || s.Image != im.Tag {
			t.Errorf("%s: %+v, want PyTorch %s.x run in %s", k, s, im.Version(), im.Tag)
		}
		for _, impl := range []string{"chapter", "fused", "fast"} {
			for _, mode := range []Mode{Forward, Backward} {
				timed := rep.Find(impl, k, mode) != nil
				if want := impl != "fast" || k == "pytorch/container-openblas"; timed != want {
					t.Errorf("%s: %s %s timed %v, want %v (--ref-impls chapter,fused)", k, impl, mode.Label(), timed, want)
				}
			}
		}
		if x := rep.Ratio(benchdata.SDPARow, "go/go", k, Forward); !(x > 0) {
			t.Errorf("no GoMLX fused ÷ %s's SDPA ratio", s.Name)
		}
	}
	for _, res := range rep.Results {
		if res.Impl == "fast" && strings.HasSuffix(res.Backend, "reference-blas") {
			t.Errorf("a reference-BLAS column has a fast result, outside --ref-impls: %+v", res)
		}
	}
	if rep.Find("fused", "pytorch/openblas", Forward) != nil {
		t.Error("PyTorch 1.13 timed F.scaled_dot_product_attention, which it does not have")
	}
	for _, c := range rep.Checks {
		if !c.OK {
			t.Errorf("check failed: %+v", c)
		}
	}
	var sawRef bool
	for _, c := range rep.Checks {
		sawRef = sawRef || strings.Contains(c.What, "chapter vs PyTorch 2.6 (OpenBLAS) chapter")
	}
	if !sawRef {
		t.Errorf("GoMLX's chapter was not compared with PyTorch 2.6's; checks %+v", rep.Checks)
	}
	if !strings.HasPrefix(rep.Versions.PyTorchContainer, keys["pytorch/container-openblas"].Version+" (Python 3.") || !strings.HasPrefix(rep.Versions.PyTorch, "1.13") {
		t.Errorf("versions %+v", rep.Versions)
	}
	md := rep.Markdown()
	if !strings.Contains(md, "| PyTorch 2.6 (OpenBLAS) | ") || !strings.Contains(md, "--network none") || !strings.Contains(md, "÷ PyTorch 2.6 (OpenBLAS)") {
		t.Errorf("Markdown lacks the current PyTorch's columns, best-against-best row or container note:\n%s", md)
	}
	t.Logf("whole test %v\n%s", time.Since(start).Round(time.Second), rep.TablesText())
}
