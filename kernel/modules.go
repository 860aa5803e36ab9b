package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Cells run offline (the kernel spec sets GOPROXY=off), and GoNB's `go get`, on a cell importing a
// package no cell imported before, loads the go.mod of every module the notebook's module requires
// (the repository's requirements), not only of those a build compiles: a module cache filled by
// builds alone lacks some (chromedp's, which only tests import) and that cell fails with "module
// lookup disabled by GOPROXY=off". So setup downloads them all, and run and doctor check.

// modulesOffline asks the go command, offline, whether every module go.mod requires is in the
// module cache; nil when they are (~0.05 s), otherwise the go command's first complaint.
func modulesOffline(ctx context.Context, e *env) error {
	cmd := exec.CommandContext(ctx, e.Go.GoBinary(), "mod", "download")
	cmd.Dir = e.Root
	cmd.Env = append(e.Go.Environ(), "GOPROXY=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		return fmt.Errorf("a module go.mod requires is not in the module cache (%s)", line)
	}
	return nil
}

// downloadModules is setup's step: `go mod download` when the module cache lacks a module.
func downloadModules(ctx context.Context, e *env) (string, string, error) {
	const done = "every module go.mod requires is in the module cache: cells run offline"
	if modulesOffline(ctx, e) == nil {
		return "ok", done, nil
	}
	var out bytes.Buffer
	if err := runGo(ctx, e, &out, "mod", "download"); err != nil {
		return "", "", fmt.Errorf("%w; cells importing a package for the first time will fail offline:\n%s", err, indent(out.String(), "        "))
	}
	return "downloaded", done, nil
}
