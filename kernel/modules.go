package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

// Cells run offline (the kernel spec sets GOPROXY=off), and GoNB's `go get`, on a cell importing a
// package no cell imported before, reads the go.mod of every module the notebook's module requires
// (the repository's requirements), not only of those a build compiles: a module cache filled by
// builds alone lacks some (chromedp's, which only tests import) and that cell fails with "module
// lookup disabled by GOPROXY=off". So setup downloads them all, and run and doctor check.

// modulesOffline reports whether the module cache holds the go.mod of every module go.mod
// requires (what `go get` reads; the image keeps no module zips, so `go mod download` is no
// check there): nil when it does, otherwise an error naming the first missing module.
func modulesOffline(ctx context.Context, e *env) error {
	data, err := os.ReadFile(filepath.Join(e.Root, "go.mod"))
	if err != nil {
		return err
	}
	f, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, e.Go.GoBinary(), "env", "GOMODCACHE")
	cmd.Env = e.Go.Environ()
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	cache := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
	var missing []string
	for _, r := range f.Require {
		path, err1 := module.EscapePath(r.Mod.Path)
		version, err2 := module.EscapeVersion(r.Mod.Version)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("go.mod requires %s: %v", r.Mod, errors.Join(err1, err2))
		}
		if _, err := os.Stat(filepath.Join(cache, path, "@v", version+".mod")); err != nil {
			missing = append(missing, r.Mod.String())
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("the module cache lacks %s, which go.mod requires", missing[0])
	}
	return fmt.Errorf("the module cache lacks %s and %d more modules go.mod requires", missing[0], len(missing)-1)
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
	if err := modulesOffline(ctx, e); err != nil {
		return "", "", err
	}
	return "downloaded", done, nil
}
