package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/attnbook/attnbook/pkg/benchdata"
	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/compute"
	. "github.com/gomlx/gomlx/core/graph" //nolint:revive // GoMLX's graph DSL is written dot-imported.
	"github.com/gomlx/gomlx/core/tensors"
)

// matmulProgram is (a @ b).sum() for `[n, n]` float32 a and b, compiled for one backend: the
// sum (n² additions, ≈ 1/n of the product's work) is read back so the product has finished.
type matmulProgram struct {
	exec *Exec
	a, b *tensors.Tensor
}

func newMatmulProgram(be compute.Backend, n int) (p *matmulProgram, err error) {
	defer catch(&err, "matmul %d", n)
	g := torchrand.New(int64(n))
	p = &matmulProgram{a: g.Randn(n, n), b: g.Randn(n, n)}
	p.exec, err = NewExec(be, func(a, b *Node) *Node { return ReduceAllSum(MatMul(a, b)) })
	return p, err
}

func (p *matmulProgram) time() (d time.Duration, err error) {
	defer catch(&err, "matmul")
	start := time.Now()
	outs, err := p.exec.Call(p.a, p.b)
	if err == nil {
		_ = outs[0].Value()
	}
	d = time.Since(start)
	release(outs)
	return d, err
}

// RunMatmul is `bench --mode matmul`: one float32 `[n, n]` × `[n, n]` product for each n of
// o.Matmul, on every GoMLX backend, on the variants of GoMLX's pure-Go backend of
// matmulChildren (child processes, run first), and on each PyTorch build, interleaved. Each gets -reps timed
// runs (default 5) after one warm-up run.
func RunMatmul(o Options, progress io.Writer) (*benchdata.Report, error) {
	start := time.Now()
	rep := newReport(o)
	rep.Peak = Peak()
	reps := o.Reps
	if reps == 0 {
		reps = 5
	}
	var failures []string
	gos := startBackends(o.Backends, rep)
	for _, g := range gos {
		rep.Series = append(rep.Series, g.series)
	}
	for _, c := range matmulChildren(o.NoSIMD) {
		s := benchdata.Series{Framework: "go", Backend: c.backend, Name: c.name}
		fmt.Fprintf(progress, "bench: timing %s in a child process (%s go run ./kernel bench …)\n", s.Name, strings.Join(c.env, " "))
		child, err := matmulChild(o, reps, c.env, progress)
		if err != nil {
			failures = append(failures, s.Name+" child: "+err.Error())
			continue
		}
		rep.Series = append(rep.Series, s)
		for _, res := range child.Results {
			if res.Key() == "go/go" {
				res.Backend = s.Backend
				rep.Results = append(rep.Results, res)
			}
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s was timed by a child process run with %s, just before the other columns", s.Name, strings.Join(c.env, " ")))
	}
	torches := startTorches(o, rep, progress)
	defer func() {
		for _, t := range torches {
			t.close()
		}
	}()

	type mjob struct {
		res   *benchdata.Result
		prog  *matmulProgram
		torch *torchProc
		n     int
	}
	var jobs []*mjob
	for _, n := range o.Matmul {
		for _, g := range gos {
			j := &mjob{res: &benchdata.Result{Impl: strconv.Itoa(n), Name: "MatMul", Framework: "go", Backend: g.series.Backend, Mode: Matmul}, n: n}
			p, err := newMatmulProgram(g.backend, n)
			if err == nil {
				t0 := time.Now()
				_, err = p.time() // compiles
				j.res.FirstCallMS = float64(time.Since(t0)) / 1e6
			}
			if err != nil {
				j.res.Error = oneLine(err.Error(), 300)
				failures = append(failures, err.Error())
			}
			j.prog = p
			jobs = append(jobs, j)
		}
		for _, t := range torches {
			jobs = append(jobs, &mjob{res: &benchdata.Result{Impl: strconv.Itoa(n), Name: "a @ b", Framework: "pytorch", Backend: t.series.Backend, Mode: Matmul}, torch: t, n: n})
		}
	}
	bar := newProgressBar(progress, len(jobs)*(reps+1))
	for round := range reps + 1 { // round 0: warm-up
		for _, j := range jobs {
			bar.step()
			if j.res.Error != "" {
				continue
			}
			bar.show(fmt.Sprintf("round %d: %s %s³", round, j.res.Key(), j.res.Impl))
			var d time.Duration
			var err error
			time.Sleep(settle)
			if j.torch != nil {
				var sec float64
				sec, err = j.torch.matmul(j.n)
				d = time.Duration(sec * float64(time.Second))
			} else {
				d, err = j.prog.time()
			}
			switch {
			case err != nil:
				j.res.Error = oneLine(err.Error(), 300)
				failures = append(failures, err.Error())
			case round > 0:
				j.res.RunsMS = append(j.res.RunsMS, float64(d)/1e6)
			}
		}
	}
	bar.finish()
	for _, j := range jobs {
		rep.Results = append(rep.Results, j.res)
	}
	finish(rep, start)
	if len(failures) > 0 {
		return rep, fmt.Errorf("%d failure(s): %s", len(failures), strings.Join(failures, "; "))
	}
	return rep, nil
}

// matmulVariant is a GoMLX configuration the matmul bench times in a child process.
type matmulVariant struct {
	backend, name string
	env           []string // added to the child's environment
}

// matmulChildren are the variants timed beside this binary's pure-Go backend: (with nosimd, when
// this binary has the SIMD kernels) a GoMLX built without GOEXPERIMENT=simd.
func matmulChildren(nosimd bool) []matmulVariant {
	var out []matmulVariant
	if nosimd && hasSIMD() {
		out = append(out, matmulVariant{"go-nosimd", "GoMLX go (no SIMD)", []string{"GOEXPERIMENT=nosimd"}})
	}
	return out
}

// matmulChild runs the matmul bench on the pure-Go backend in `go run ./kernel bench` with env
// added to its environment and returns its report.
func matmulChild(o Options, reps int, env []string, progress io.Writer) (*benchdata.Report, error) {
	dir, err := os.MkdirTemp("", "bench-child-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var sizes []string
	for _, n := range o.Matmul {
		sizes = append(sizes, strconv.Itoa(n))
	}
	args := []string{"run", "./kernel", "bench", "--mode", "matmul", "--backends", "go", "--python", "off", "--nosimd=false",
		"--matmul-sizes", strings.Join(sizes, ","), "--reps", strconv.Itoa(reps), "-o", dir}
	cmd := exec.Command("go", args...)
	cmd.Dir = o.Root
	cmd.Env = append(os.Environ(), env...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, progress
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s go %s: %w\n%s", strings.Join(env, " "), strings.Join(args, " "), err, out.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, err
	}
	var r benchdata.Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if slices.Contains(env, "GOEXPERIMENT=nosimd") && strings.Contains(","+r.Versions.GoExperiment+",", ",simd,") {
		return nil, errors.New("the child was built with GOEXPERIMENT=simd all the same")
	}
	return &r, nil
}
