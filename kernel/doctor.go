package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/attnbook/attnbook/pkg/backend"
)

// check is one line of doctor's report.
type check struct {
	Name, Value string
	Problem     string // empty when fine; else what is wrong and how to fix it
	Optional    bool   // a problem that does not fail doctor
}

func cmdDoctor(ctx context.Context, e *env, args []string) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		fmt.Fprintln(e.Stderr, "usage: go run ./kernel doctor")
		return exitUsage
	}
	fmt.Fprintf(e.Stdout, "doctor: attnbook at %s\n", e.Root)
	checks := doctorChecks(ctx, e)
	missing := 0
	for _, c := range checks {
		mark := "ok"
		switch {
		case c.Problem != "" && c.Optional:
			mark = "--"
		case c.Problem != "":
			mark = "MISSING"
			missing++
		}
		fmt.Fprintf(e.Stdout, "  %-8s %-10s %s\n", mark, c.Name, c.Value)
		if c.Problem != "" {
			fmt.Fprintf(e.Stdout, "  %-8s %-10s %s\n", "", "", c.Problem)
		}
	}
	if missing > 0 {
		fmt.Fprintf(e.Stderr, "doctor: %d required part(s) missing: run go run ./kernel setup (details above)\n", missing)
		return exitMissing
	}
	fmt.Fprintln(e.Stdout, "doctor: everything required is in place")
	return exitOK
}

func doctorChecks(ctx context.Context, e *env) []check {
	var cs []check
	built := runtime.Version()
	cs = append(cs, check{Name: "Go", Value: fmt.Sprintf("%s (%s); this command was built with %s", e.Go.GOVERSION, e.Go.GoBinary(), built)})
	if _, _, err := checkGo(e); err != nil {
		cs[0].Problem = err.Error()
	}
	for _, t := range goTools(e.Go.GOVERSION) {
		c := check{Name: t.Name, Optional: !t.Required}
		have := t.Installed(e)
		switch {
		case have == "":
			c.Value = "not installed (" + t.Why + ")"
			c.Problem = fmt.Sprintf("want %s in %s: go %s", t.Version, e.Go.ToolDir(), strings.Join(t.Install, " "))
		case have != t.Version:
			c.Value = fmt.Sprintf("%s at %s", have, t.Path(e))
			c.Problem = fmt.Sprintf("want %s: go %s", t.Version, strings.Join(t.Install, " "))
		default:
			c.Value = fmt.Sprintf("%s at %s", have, t.Path(e))
		}
		cs = append(cs, c)
	}

	py := probePython(ctx)
	jc := check{Name: "Jupyter"}
	switch {
	case py == nil:
		jc.Value = "no Python found"
	default:
		server := py.Server()
		if server == "" {
			server = "no Jupyter server"
		}
		jc.Value = fmt.Sprintf("%s; jupyter_client %s, nbclient %s (Python %s at %s)", server,
			orNone(py.Packages["jupyter_client"]), orNone(py.Packages["nbclient"]), py.Version, py.Path)
	}
	if py == nil || !py.CanServe() || !py.CanRun() {
		cmdline, _ := jupyterInstallCommand()
		jc.Problem = "need a Jupyter server and nbclient: " + cmdline
	}
	cs = append(cs, jc)
	cs = append(cs, kernelSpecCheck(e, py))

	gomlx, goxla := depVersion("github.com/gomlx/gomlx"), depVersion("github.com/gomlx/go-xla")
	cs = append(cs, check{Name: "GoMLX", Value: fmt.Sprintf("%s (go-xla %s)", gomlx, goxla)})

	choice := backend.Choose()
	how := "cells link XLA too"
	if wantNoXLA() {
		how = "cells build with " + noXLAFlags + " to link fast; run setup again after installing a PJRT plugin"
	}
	cs = append(cs, check{Name: "backend", Value: choice.String() + " (what a notebook gets: same environment, GOMLX_NO_AUTO_INSTALL=1; " + how + ")"})
	cpu, cuda := "not installed", "not installed"
	for _, p := range choice.Plugins {
		switch {
		case p == "cpu":
			cpu = "installed"
		case p == "cuda":
			cuda = "installed (go-xla)"
		case strings.Contains(p, "cuda"):
			cuda = "JAX's plugin at " + p
		}
	}
	cs = append(cs,
		check{Name: "XLA CPU", Value: cpu, Optional: true, Problem: ifThen(cpu == "not installed", "optional: faster than pure Go; see README (Backends)")},
		check{Name: "XLA CUDA", Value: cuda, Optional: true, Problem: ifThen(cuda == "not installed" && choice.GPU, "a GPU is present: install JAX's jax-cuda13-pjrt or go-xla's CUDA plugin; see README (Backends)")},
		check{Name: "GPU", Value: gpuDescription(ctx, choice.GPU)},
	)
	return cs
}

// kernelSpecCheck compares the registered kernel spec with what setup writes for this repository.
func kernelSpecCheck(e *env, py *python) check {
	c := check{Name: "kernel"}
	dir, err := userSpecDir(py)
	if err != nil {
		c.Value, c.Problem = "unknown Jupyter data dir", err.Error()
		return c
	}
	have := readSpec(dir)
	if have == nil {
		c.Value = fmt.Sprintf("%q not registered (%s)", KernelName, dir)
		c.Problem = "register it: go run ./kernel setup"
		return c
	}
	want := newKernelSpec(specOptions{Root: e.Root, SpecDir: dir, GoRoot: e.Go.GOROOT, ToolDir: e.Go.ToolDir(), NoXLA: wantNoXLA()})
	c.Value = fmt.Sprintf("%q in %s, wired to %s", KernelName, dir, have.Env[RootEnv])
	shim, _ := os.ReadFile(filepath.Join(dir, "bin", "go"))
	switch {
	case have.Env[RootEnv] != e.Root:
		c.Problem = "it serves another copy of attnbook: run go run ./kernel setup here to point it at " + e.Root
	case !reflect.DeepEqual(*have, want) || string(shim) != goShim(e.Go.GoBinary()):
		c.Problem = "it is out of date: go run ./kernel setup"
	}
	return c
}

func depVersion(mod string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, d := range info.Deps {
		if d.Path == mod {
			if d.Replace != nil {
				return d.Replace.Version + " (replaced)"
			}
			return d.Version
		}
	}
	return "unknown"
}

func gpuDescription(ctx context.Context, gpu bool) string {
	if !gpu {
		return "none (no /dev/nvidia* device)"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader").Output(); err == nil {
		return "NVIDIA " + strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(out)), "\n", "; ")), " ")
	}
	return "NVIDIA device present (nvidia-smi not available)"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func ifThen(cond bool, s string) string {
	if cond {
		return s
	}
	return ""
}
