package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/attnbook/attnbook/pkg/benchdata"
)

// TorchImageScript builds the current-PyTorch image (docker/torch/Dockerfile: Debian trixie's
// python3-torch on the classroom image's base) and names its tag; relative to the repository root.
const TorchImageScript = "docker/torch/build.sh"

// TorchImage is the current-PyTorch image as docker/torch/build.sh --print names it.
type TorchImage struct {
	Tag        string // attnbook/torch:2.6.0_dfsg-7-<12 hex digits of the Dockerfile's SHA-256>
	DebVersion string // the pinned python3-torch, "2.6.0+dfsg-7"
	Base       string // the FROM image, "attnbook/debian:trixie-20261121"
}

// Version is PyTorch's major.minor from the Debian version: "2.6".
func (im TorchImage) Version() string {
	parts := strings.SplitN(im.DebVersion, ".", 3)
	if len(parts) < 2 {
		return im.DebVersion
	}
	return parts[0] + "." + parts[1]
}

// ReadTorchImage asks root's docker/torch/build.sh for the image's tag, pin and base (it
// builds nothing).
func ReadTorchImage(root string) (TorchImage, error) {
	script := filepath.Join(root, TorchImageScript)
	out, err := exec.Command("bash", script, "--print").Output()
	if err != nil {
		return TorchImage{}, fmt.Errorf("%s --print: %w%s", script, err, exitStderr(err))
	}
	var im TorchImage
	for _, line := range strings.Split(string(out), "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch k {
		case "tag":
			im.Tag = v
		case "torch_deb_version":
			im.DebVersion = v
		case "base_image":
			im.Base = v
		}
	}
	if im.Tag == "" || im.DebVersion == "" || im.Base == "" {
		return im, fmt.Errorf("%s --print printed %q: want tag=, torch_deb_version= and base_image= lines", script, out)
	}
	return im, nil
}

// DockerAbsent says why no Docker engine can run a container here ("" when one answers):
// docker is not installed, or its daemon does not answer.
func DockerAbsent() string {
	if _, err := exec.LookPath("docker"); err != nil {
		return "docker is not installed"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").CombinedOutput()
	if err != nil {
		return "no Docker daemon answers (docker version: " + oneLine(string(out)+" "+err.Error(), 200) + ")"
	}
	return ""
}

// imageExists reports whether docker has an image tagged tag.
func imageExists(tag string) bool {
	return exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", tag).Run() == nil
}

// EnsureTorchImage returns the current-PyTorch image, building it first with
// docker/torch/build.sh when docker has no image of its tag (the base image too, when missing:
// minutes, from Debian's mirror; once). The build's output goes to logPath. It returns an error
// saying why when Docker is absent or the build fails.
func EnsureTorchImage(root, logPath string, progress io.Writer) (TorchImage, error) {
	if why := DockerAbsent(); why != "" {
		return TorchImage{}, fmt.Errorf("%s", why)
	}
	im, err := ReadTorchImage(root)
	if err != nil {
		return im, err
	}
	if imageExists(im.Tag) {
		return im, nil
	}
	fmt.Fprintf(progress, "bench: building %s once: Debian trixie's python3-torch %s on %s (a few minutes; log: %s)\n",
		im.Tag, im.DebVersion, im.Base, logPath)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return im, err
	}
	log, err := os.Create(logPath)
	if err != nil {
		return im, err
	}
	defer log.Close()
	cmd := exec.Command("bash", filepath.Join(root, TorchImageScript))
	var tag bytes.Buffer
	cmd.Stdout, cmd.Stderr = &tag, log
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return im, fmt.Errorf("%s failed after %v (%v): %s", TorchImageScript, time.Since(start).Round(time.Second), err, logTail(logPath, 3))
	}
	if got := strings.TrimSpace(tag.String()); got != im.Tag || !imageExists(im.Tag) {
		return im, fmt.Errorf("%s printed tag %q, want %q, and docker has it: %v", TorchImageScript, got, im.Tag, imageExists(im.Tag))
	}
	fmt.Fprintf(progress, "bench: built %s in %v\n", im.Tag, time.Since(start).Round(time.Second))
	return im, nil
}

// containerBuilds are the current PyTorch's processes o asks for: one per --blas build, each a
// `docker run --network none` of the image from [EnsureTorchImage] running the bench's script.
// Only with o.CurrentTorch "auto" (the flag's default). Where they cannot run it returns their series as skipped, with
// the reason, so that the tables keep the columns and say why they are empty.
func containerBuilds(o Options, rep *benchdata.Report, threads int, progress io.Writer) (builds []torchBuild, skipped []benchdata.Series) {
	switch o.CurrentTorch {
	case "auto":
	case "off":
		rep.Notes = append(rep.Notes, "current PyTorch (container) columns off: --current-torch off")
		return nil, nil
	default: // Options not from ParseFlags: the host's PyTorch alone
		return nil, nil
	}
	name := "PyTorch 2.6" // the pin's version when build.sh can tell it
	im, err := ReadTorchImage(o.Root)
	if err == nil {
		name = "PyTorch " + im.Version()
	}
	var series []benchdata.Series
	var dirs []string
	for _, b := range o.BLAS {
		s, dir, _ := blasBuild(b, "container-", name)
		s.Image = im.Tag
		series, dirs = append(series, s), append(dirs, dir)
	}
	skip := func(why string) ([]torchBuild, []benchdata.Series) {
		for i := range series {
			series[i].Skipped = why
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s skipped: %s", series[i].Name, why))
		}
		return nil, series
	}
	switch {
	case o.Device == "cuda":
		return skip("the container runs PyTorch on the CPU only (--device cuda)")
	case err != nil:
		return skip(err.Error())
	}
	if im, err = EnsureTorchImage(o.Root, filepath.Join(o.Out, "torch-image-build.log"), progress); err != nil {
		return skip(fmt.Sprintf("no %s container: %v (docker/torch/Dockerfile)", name, err))
	}
	for i, s := range series {
		dir := dirs[i]
		argv := []string{"docker", "run", "--rm", "-i", "--network", "none",
			"--name", fmt.Sprintf("attnbook-bench-torch-%d-%s", os.Getpid(), strings.TrimPrefix(s.Backend, "container-")),
			"-e", "LD_LIBRARY_PATH=" + dir, "-e", "OPENBLAS_NUM_THREADS=" + strconv.Itoa(threads),
			// PyTorch 2.6's OpenMP workers otherwise spin after every parallel region, taking the
			// cores OpenBLAS's threads need: 9× slower on 2 cores (docs/gpt.md, Zen 4).
			"-e", "OMP_WAIT_POLICY=PASSIVE",
			im.Tag, "python3", "-u", "-c", torchScript}
		builds = append(builds, torchBuild{series: s, argv: argv, dir: dir})
	}
	return builds, nil
}

// exitStderr is ": " and the last lines of a failed command's stderr, or "".
func exitStderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return ": " + oneLine(string(ee.Stderr), 300)
	}
	return ""
}

// logTail is the last n non-empty lines of the file at path, on one line.
func logTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return oneLine(strings.Join(lines, " | "), 400)
}
