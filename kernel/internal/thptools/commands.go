package thptools

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"

	"github.com/attnbook/attnbook/kernel/internal/srcedit"
)

// Commands are the commands Build builds beside the toolchain's compile and link: goimports
// (GoimportsModule) at version Goimports and GoNB (GoNBModule) at version GoNB ("" for none).
// GoNB's dependencies are those the go.mod file GoNBModFile requires: `kernel setup` installs
// GoNB from the repository's tool line, so the repository's go.mod picks their versions.
type Commands struct{ Goimports, GoNB, GoNBModFile string }

// list is the commands to build.
func (c Commands) list() []command {
	var out []command
	if c.Goimports != "" {
		out = append(out, goimportsCommand(c.Goimports))
	}
	if c.GoNB != "" {
		out = append(out, gonbCommand(c.GoNB, c.GoNBModFile))
	}
	return out
}

// command is a command of a module in the module cache that Build builds with changes: the files
// source returns (by path under the module's directory) laid over it, into bin/Name-bin/Name.
type command struct {
	Module, Version, Package, Name string
	source                         func(dir string) (map[string][]byte, error)
	modFile                        string // the go.mod whose requirements pick the dependencies' versions; "" for Module's
}

// commandPath is where Build puts the command name in dir: name-bin/name.
func commandPath(dir, name string) string { return filepath.Join(dir, name+"-bin", name) }

// built is the command name built into dir (commandPath), or "".
func built(dir, name string) string {
	path := commandPath(dir, name)
	if _, err := os.Stat(path); dir == "" || err != nil {
		return ""
	}
	return path
}

// moduleDir is the extracted module in the module cache. Modules published before go.mod files
// (GoNB's github.com/pkg/errors v0.9.1, github.com/gofrs/uuid v4.4.0+incompatible) have none in it.
func moduleDir(gomodcache, path, version string) (string, error) {
	p, err := module.EscapePath(path)
	if err != nil {
		return "", err
	}
	v, err := module.EscapeVersion(version)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(gomodcache, p+"@"+v)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return "", fmt.Errorf("thptools: %s@%s is not in the module cache (%w)", path, version, err)
	}
	return dir, nil
}

// buildCommand builds c into bin/c.Name-bin/c.Name, with overlay (the toolchain's patched files,
// by absolute path) and c's files laid over its module. It needs no network: a module of its own
// in tmp requires c.Module and what c.Module requires, each replaced by its directory in the
// module cache, and the go command gets an empty module cache of its own, as it refuses an overlay
// of files under GOMODCACHE. What the module graph needs beyond those (the go.mod files of older
// versions that modules without graph pruning require, GoNB's x/sys v0.6.0 by go-isatty) it reads
// from the module cache's downloads as a file proxy; they were checked when downloaded (setup's
// modules step, `go mod download` of the repository's whole graph, runs first and fetches them).
func buildCommand(ctx context.Context, g goEnv, c command, tmp, bin string, overlay map[string]string) error {
	dir, err := moduleDir(g.GOMODCACHE, c.Module, c.Version)
	if err != nil {
		return err
	}
	files, err := c.source(dir)
	if errors.Is(err, srcedit.ErrMismatch) {
		return fmt.Errorf("%w: %s@%s: %w", ErrUnsupported, c.Module, c.Version, err)
	} else if err != nil {
		return err
	}
	modFile := c.modFile
	if modFile == "" {
		modFile = filepath.Join(dir, "go.mod")
	}
	data, err := os.ReadFile(modFile)
	if err != nil {
		return err
	}
	requires, err := modfile.ParseLax(modFile, data, nil)
	if err != nil {
		return err
	}
	mod := new(modfile.File)
	mod.AddModuleStmt("attnbook.invalid/" + c.Name)
	if requires.Go != nil {
		mod.AddGoStmt(requires.Go.Version)
	}
	mod.AddNewRequire(c.Module, c.Version, false)
	mod.AddReplace(c.Module, c.Version, dir, "")
	// A replacement directory needs a go.mod: a module without one gets `module path` through the
	// overlay (the go command then reads no zip of it, which the module cache may have dropped).
	goMods := map[string]string{} // the missing go.mod's path → its content
	for _, r := range requires.Require {
		if r.Mod.Path == c.Module {
			continue
		}
		if d, err := moduleDir(g.GOMODCACHE, r.Mod.Path, r.Mod.Version); err == nil {
			mod.AddNewRequire(r.Mod.Path, r.Mod.Version, false)
			mod.AddReplace(r.Mod.Path, r.Mod.Version, d, "")
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err != nil {
				goMods[filepath.Join(d, "go.mod")] = "module " + modfile.AutoQuote(r.Mod.Path) + "\n"
			}
		}
	}
	gomod, err := mod.Format()
	if err != nil {
		return err
	}
	work := filepath.Join(tmp, c.Name)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(work, "go.mod"), gomod, 0o644); err != nil {
		return err
	}
	replace := map[string]string{}
	for k, v := range overlay {
		replace[k] = v
	}
	for path, content := range goMods {
		rel, err := filepath.Rel(g.GOMODCACHE, path) // pkg/errors@v0.9.1/go.mod: one file per module
		if err != nil {
			return err
		}
		file := filepath.Join(work, "gomod", rel)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			return err
		}
		replace[path] = file
	}
	for name, data := range files {
		file := filepath.Join(work, "module", name)
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return err
		}
		replace[filepath.Join(dir, name)] = file
	}
	ov, err := overlayJSON(replace)
	if err != nil {
		return err
	}
	ovFile := filepath.Join(work, "overlay.json")
	if err := os.WriteFile(ovFile, ov, 0o644); err != nil {
		return err
	}
	args := []string{"build", "-trimpath", "-overlay", ovFile, "-o", commandPath(bin, c.Name), c.Package}
	cmd := exec.CommandContext(ctx, filepath.Join(g.GOROOT, "bin", "go"), args...)
	cmd.Dir = work
	cmd.Env = append(toolBuildEnv(g, filepath.Join(tmp, "modcache")), "GOFLAGS=-mod=mod",
		"GOPROXY="+(&url.URL{Scheme: "file", Path: filepath.Join(g.GOMODCACHE, "cache", "download")}).String(), "GOSUMDB=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("thptools: go %s: %w\n%s", strings.Join(args, " "), err, msg)
	}
	return nil
}
