package mhabench

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
)

//go:embed torch_bench.py
var torchScript string

// DefaultPython is the interpreter with Debian's python3-torch: the system one, not whatever
// python3 comes first on $PATH (a pyenv shim, a virtualenv without torch).
const DefaultPython = "/usr/bin/python3"

// torchNames maps the Go formulations to their PyTorch counterparts where the names differ.
var torchNames = map[string]string{"gomlx_layers": "torch_mha"}

// TorchName is the PyTorch side's name of the Go formulation impl.
func TorchName(impl string) string {
	if n, ok := torchNames[impl]; ok {
		return n
	}
	return impl
}

// torchSetup is the reply to "setup".
type torchSetup struct {
	OK        bool               `json:"ok"`
	Error     string             `json:"error"`
	Torch     string             `json:"torch"`
	Python    string             `json:"python"`
	Impls     []string           `json:"impls"`
	Notes     []string           `json:"notes"`
	Check     map[string]float64 `json:"check"`   // forward output vs the chapter's, normwise relative error
	Seconds   map[string]float64 `json:"seconds"` // the first forward call of each formulation
	Threads   int                `json:"threads"`
	Config    string             `json:"config"`
	Reference struct {
		AbsSum float64   `json:"abs_sum"`
		Sum    float64   `json:"sum"`
		Head   []float32 `json:"head"`
		Tail   []float32 `json:"tail"`
	} `json:"reference"`
}

// torchProc is the PyTorch process: one JSON request per line on its stdin, one reply per line
// on its stdout.
type torchProc struct {
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

func startTorch(python string) (*torchProc, error) {
	cmd := exec.Command(python, "-u", "-c", torchScript)
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

func (p *torchProc) setup(s Size, seed int64, threads int, device string) (*torchSetup, error) {
	var r torchSetup
	err := p.call(map[string]any{"cmd": "setup", "batch": s.Batch, "tokens": s.Tokens, "dim": s.Dim,
		"heads": s.Heads, "seed": seed, "threads": threads, "device": device}, &r)
	return &r, err
}

// run times one call of impl (PyTorch's name) in mode and returns seconds.
func (p *torchProc) run(impl string, mode Mode) (float64, error) {
	var r struct {
		Seconds float64 `json:"seconds"`
	}
	err := p.call(map[string]any{"cmd": "run", "impl": impl, "mode": string(mode)}, &r)
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
