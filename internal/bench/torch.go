package bench

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/attnbook/attnbook/pkg/benchdata"
)

var (
	//go:embed openblas_core.py
	openblasCore string
	//go:embed torch_bench.py
	torchBench string
	// torchScript is torch_bench.py, run under the kernels OpenBLAS picks for the CPU (an
	// OPENBLAS_CORETYPE from the environment dropped), or those the CPU calls for where OpenBLAS
	// does not know it (openblas_core.py, before torch loads OpenBLAS).
	torchScript = openblasCore + "\nstrongest_openblas_core()\n\n" + torchBench
)

// DefaultPython is the interpreter with Debian's python3-torch: the system one, not whatever
// python3 comes first on $PATH (a pyenv shim, a virtualenv without torch).
const DefaultPython = "/usr/bin/python3"

// The two builds of libblas.so.3 Debian offers for the PyTorch side. Debian's python3-torch 1.13
// links libblas.so.3, which the alternatives system points at one of them: the reference BLAS
// (libblas3) unless libopenblas0-pthread is installed, whose higher priority makes it the default
// in auto mode. The bench puts the build it wants first on LD_LIBRARY_PATH, whatever the system's
// choice, and checks in /proc/self/maps that it is the one loaded.
const (
	ReferenceBLASDir = "/usr/lib/x86_64-linux-gnu/blas"             // libblas3: netlib's reference BLAS
	OpenBLASDir      = "/usr/lib/x86_64-linux-gnu/openblas-pthread" // libopenblas0-pthread
)

// SystemBLAS is the file libblas.so.3 resolves to without LD_LIBRARY_PATH, through Debian's
// alternatives, or "" where there are none.
func SystemBLAS() string {
	p, err := filepath.EvalSymlinks("/usr/lib/x86_64-linux-gnu/libblas.so.3")
	if err != nil {
		return ""
	}
	return p
}

// torchNames maps the Go formulations to their PyTorch counterparts where the names differ.
var torchNames = map[string]string{"gomlx_layers": "torch_mha", "fused": "sdpa", "flash": "sdpa"}

// TorchName is the PyTorch side's name of the Go formulation impl.
func TorchName(impl string) string {
	if n, ok := torchNames[impl]; ok {
		return n
	}
	return impl
}

// torchSetup is the reply to "setup" (and, partly, to "info").
type torchSetup struct {
	Torch      string             `json:"torch"`
	Python     string             `json:"python"`
	Threads    int                `json:"threads"`
	BLAS       []string           `json:"blas"`        // BLAS libraries mapped into the process
	BLASConfig string             `json:"blas_config"` // OpenBLAS's openblas_get_config() and core, or ""
	Impls      []string           `json:"impls"`
	Notes      []string           `json:"notes"`
	Check      map[string]float64 `json:"check"`   // forward output vs the chapter's, normwise relative error
	Seconds    map[string]float64 `json:"seconds"` // the first forward call of each formulation
	Reference  struct {
		AbsSum float64   `json:"abs_sum"`
		Head   []float32 `json:"head"`
		Tail   []float32 `json:"tail"`
	} `json:"reference"`
}

func (s *torchSetup) sortedChecks() []string { return slices.Sorted(maps.Keys(s.Check)) }

// torchProc is one PyTorch process: one JSON request per line on its stdin, one reply per line
// on its stdout.
type torchProc struct {
	series benchdata.Series
	setup  *torchSetup
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *lockedBuffer
}

// hasTorch reports whether python can import torch.
func hasTorch(python string) bool {
	if _, err := os.Stat(python); err != nil {
		return false
	}
	return exec.Command(python, "-c", "import torch").Run() == nil
}

// torchBuild is one PyTorch process to start: the host's python3-torch or the container's, on
// one build of libblas.so.3.
type torchBuild struct {
	series benchdata.Series
	argv   []string // the command, the script last
	env    []string // added to this process's environment (host; the container gets -e flags)
	dir    string   // the folder whose libblas.so.3 the process must load; "" on CUDA
}

// blasBuild is the series and libblas.so.3 folder of one --blas name on the host ("pytorch",
// "PyTorch") or in the container ("pytorch", "PyTorch 2.6", backend prefix "container-").
func blasBuild(b, prefix, name string) (s benchdata.Series, dir, pkg string) {
	if b == "openblas" {
		return benchdata.Series{Framework: "pytorch", Backend: prefix + "openblas", Name: name + " (OpenBLAS)"}, OpenBLASDir, "libopenblas0-pthread"
	}
	return benchdata.Series{Framework: "pytorch", Backend: prefix + "reference-blas", Name: name + " (reference BLAS)"}, ReferenceBLASDir, "libblas3"
}

// hostBuilds are the host's PyTorch processes o asks for: one on CUDA, or one per --blas build.
func hostBuilds(o Options, rep *benchdata.Report, threads int) []torchBuild {
	argv := []string{o.Python, "-u", "-c", torchScript}
	if !hasTorch(o.Python) {
		rep.Notes = append(rep.Notes, fmt.Sprintf("PyTorch side skipped: %s cannot import torch", o.Python))
		return nil
	}
	if o.Device == "cuda" {
		return []torchBuild{{series: benchdata.Series{Framework: "pytorch", Backend: "cuda", Name: "PyTorch (CUDA)"}, argv: argv}}
	}
	var builds []torchBuild
	for _, b := range o.BLAS {
		s, dir, pkg := blasBuild(b, "", "PyTorch")
		if _, err := os.Stat(dir + "/libblas.so.3"); err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s skipped: %s/libblas.so.3 is missing (apt install %s)", s.Name, dir, pkg))
			continue
		}
		ld := dir
		if v := os.Getenv("LD_LIBRARY_PATH"); v != "" {
			ld += ":" + v
		}
		builds = append(builds, torchBuild{series: s, argv: argv, dir: dir,
			env: []string{"LD_LIBRARY_PATH=" + ld, "OPENBLAS_NUM_THREADS=" + strconv.Itoa(threads)}})
	}
	if len(builds) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("libblas.so.3 resolves on this machine, without LD_LIBRARY_PATH, to %s; each PyTorch column puts its own build first on LD_LIBRARY_PATH", SystemBLAS()))
	}
	return builds
}

// startTorches starts the PyTorch processes o asks for and runs their setup ("info" in matmul
// mode): the host's PyTorch on the reference BLAS and OpenBLAS (or on CUDA), then the current
// PyTorch in its container ([containerBuilds]) on the same builds. It adds their series to rep,
// in that order, with the container's columns also where they cannot run: their Skipped says
// why. What else cannot start is a note.
func startTorches(o Options, rep *benchdata.Report, progress io.Writer) []*torchProc {
	if o.Python == "off" {
		return nil
	}
	threads := runtime.GOMAXPROCS(0)
	builds := hostBuilds(o, rep, threads)
	current, skipped := containerBuilds(o, rep, threads, progress)
	builds = append(builds, current...)
	var out []*torchProc
	for _, b := range builds {
		fmt.Fprintf(progress, "bench: starting %s (%s, %d threads)\n", b.series.Name, b.argv[0], threads)
		p, err := startTorch(b.argv, b.env)
		if err == nil {
			p.series = b.series
			req := map[string]any{"cmd": "info", "threads": threads}
			if !slices.Contains(o.Modes, Matmul) {
				s := o.Size
				impls := o.Impls
				if strings.HasSuffix(b.series.Backend, "reference-blas") {
					impls = o.RefImpls
				}
				var names []string
				for _, n := range impls {
					names = append(names, TorchName(n))
				}
				req = map[string]any{"cmd": "setup", "batch": s.Batch, "tokens": s.Tokens, "dim": s.Dim,
					"heads": s.Heads, "seed": o.Seed, "threads": threads, "device": o.Device, "impls": names}
			}
			p.setup = &torchSetup{}
			err = p.call(req, p.setup)
		}
		if err != nil {
			msg := oneLine(err.Error(), 300)
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s skipped: %s", b.series.Name, msg))
			if p != nil {
				p.close()
			}
			if b.series.Image != "" { // the container's column stays, saying why it is empty
				b.series.Skipped = msg
				skipped = append(skipped, b.series)
			}
			continue
		}
		libblas := slices.IndexFunc(p.setup.BLAS, func(l string) bool { return strings.Contains(filepath.Base(l), "libblas.so.3") })
		if b.dir != "" && (libblas < 0 || filepath.Dir(p.setup.BLAS[libblas]) != b.dir) {
			msg := fmt.Sprintf("it did not load %s/libblas.so.3 (loaded: %s)", b.dir, strings.Join(p.setup.BLAS, ", "))
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s skipped: %s", b.series.Name, msg))
			p.close()
			if b.series.Image != "" {
				b.series.Skipped = msg
				skipped = append(skipped, b.series)
			}
			continue
		}
		p.series.Version = p.setup.Torch
		if b.series.Image == "" {
			rep.Versions.PyTorch, rep.Versions.Python = p.setup.Torch, p.setup.Python
		} else {
			rep.Versions.PyTorchContainer = fmt.Sprintf("%s (Python %s; %s)", p.setup.Torch, p.setup.Python, b.series.Image)
		}
		for _, n := range p.setup.Notes {
			if !slices.Contains(rep.Notes, n) {
				rep.Notes = append(rep.Notes, n)
			}
		}
		blas := "no libblas.so.3"
		if libblas >= 0 {
			blas = p.setup.BLAS[libblas]
			if c := p.setup.BLASConfig; c != "" {
				blas += " (" + c + ")"
			}
		}
		where := ""
		if b.series.Image != "" {
			where = " in a container of " + b.series.Image + " (--network none)"
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s: PyTorch %s%s, %d threads, sgemm from %s", p.series.Name, p.setup.Torch, where, p.setup.Threads, blas))
		out = append(out, p)
		rep.Series = append(rep.Series, p.series)
	}
	rep.Series = append(rep.Series, skipped...)
	return out
}

// startTorch starts the PyTorch script, argv, with env added to this process's environment.
func startTorch(argv, env []string) (*torchProc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	p := &torchProc{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	var err error
	if p.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.out = bufio.NewScanner(stdout)
	p.out.Buffer(make([]byte, 1<<20), 64<<20)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return p, nil
}

// call sends req and decodes the reply into reply; a reply with ok=false is an error.
func (p *torchProc) call(req map[string]any, reply any) error {
	line, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := p.in.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("pytorch process: %w%s", err, p.stderrTail())
	}
	if !p.out.Scan() {
		err := p.out.Err()
		if err == nil {
			err = errors.New("exited")
		}
		return fmt.Errorf("pytorch process: %w%s", err, p.stderrTail())
	}
	var status struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(p.out.Bytes(), &status); err != nil {
		return fmt.Errorf("pytorch process: bad reply %q: %w", p.out.Text(), err)
	}
	if !status.OK {
		return fmt.Errorf("pytorch: %s", status.Error)
	}
	return json.Unmarshal(p.out.Bytes(), reply)
}

// run times one call of impl (PyTorch's name) in mode and returns seconds.
func (p *torchProc) run(impl string, mode Mode) (float64, error) {
	var r struct {
		Seconds float64 `json:"seconds"`
	}
	err := p.call(map[string]any{"cmd": "run", "impl": impl, "mode": string(mode)}, &r)
	return r.Seconds, err
}

// matmul times one (a @ b).sum() of [n, n] float32 matrices and returns seconds.
func (p *torchProc) matmul(n int) (float64, error) {
	var r struct {
		Seconds float64 `json:"seconds"`
	}
	err := p.call(map[string]any{"cmd": "matmul", "n": n}, &r)
	return r.Seconds, err
}

func (p *torchProc) close() {
	_, _ = p.in.Write([]byte(`{"cmd": "quit"}` + "\n"))
	_ = p.in.Close()
	_ = p.cmd.Wait()
}

func (p *torchProc) stderrTail() string {
	s := strings.TrimSpace(p.stderr.String())
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return "\n    " + strings.Join(lines, "\n    ")
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
