package thptools

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

	"github.com/attnbook/attnbook/kernel/internal/goenvcache"
	"github.com/attnbook/attnbook/kernel/internal/srcedit"
)

// GoimportsModule is the module goimports is built from.
const GoimportsModule = "golang.org/x/tools"

// importsPatch: before anything else goimports asks the go command for twelve variables (`go env
// -json …`), a go command for every cell GoNB runs it on. With it, it first reads the answer the
// cell builder stored for that very question (goenvcache.go, compiled into the same package) and
// runs the go command only when that answer is not current. With the heap on huge pages too, a
// notebook-04 cell's goimports took 12.1 ms against the stock one's 30.9 ms (hyperfine, 30 runs,
// a Zen 5 guest whose first touch of a page costs 11.6 µs).
var importsPatch = srcedit.Edit{File: "internal/imports/fix.go",
	Anchor: "\tif e.initialized {\n\t\treturn nil\n\t}\n",
	With: "\tif e.initialized {\n\t\treturn nil\n\t}\n" +
		"\tif e.Env == nil { // attnbook: the cell builder's answer, when current (attnbook_goenvcache.go)\n" +
		"\t\tif key, err := CacheKey(append([]string{\"env\", \"-json\"}, requiredGoEnvVars...)); err == nil {\n" +
		"\t\t\tif out, ok := Cached(key); ok && json.Unmarshal(out, &e.Env) == nil {\n" +
		"\t\t\t\te.initialized = true\n\t\t\t\treturn nil\n\t\t\t}\n\t\t}\n\t\te.Env = nil\n\t}\n"}

// importsAdded is the file importsPatch adds to golang.org/x/tools/internal/imports.
const importsAdded = "internal/imports/attnbook_goenvcache.go"

// Goimports is the goimports built into dir by Build with a version of GoimportsModule, or "".
// It is alone in its directory, which the kernel spec puts on $PATH before the stock goimports.
func Goimports(dir string) string {
	path := filepath.Join(dir, "goimports-bin", "goimports")
	if _, err := os.Stat(path); dir == "" || err != nil {
		return ""
	}
	return path
}

// goimportsSource returns x/tools' directory in the module cache and the files to lay over it:
// importsPatch and the file it adds.
func goimportsSource(gomodcache, version string) (dir string, files map[string][]byte, err error) {
	dir, err = moduleDir(gomodcache, GoimportsModule, version)
	if err != nil {
		return "", nil, err
	}
	files, err = srcedit.ApplyTree(dir, []srcedit.Edit{importsPatch})
	if errors.Is(err, srcedit.ErrMismatch) {
		return "", nil, fmt.Errorf("%w: %s@%s: %w", ErrUnsupported, GoimportsModule, version, err)
	} else if err != nil {
		return "", nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, importsAdded)); err == nil {
		return "", nil, fmt.Errorf("%w: %s exists in %s", ErrUnsupported, importsAdded, dir)
	}
	src := bytes.Replace(goenvcache.Source, []byte("\npackage goenvcache\n"), []byte("\npackage imports\n"), 1)
	if bytes.Equal(src, goenvcache.Source) {
		return "", nil, errors.New("thptools: goenvcache.go has no package clause to rename")
	}
	files[importsAdded] = src
	return dir, files, nil
}

// moduleDir is the extracted module in the module cache.
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
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", fmt.Errorf("thptools: %s@%s is not in the module cache (%w)", path, version, err)
	}
	return dir, nil
}

// buildGoimports builds goimports from GoimportsModule at version into bin/goimports-bin, with
// overlay (the toolchain's patched files, by absolute path) and the x/tools files laid over it.
// It needs no network: a module of its own in tmp requires x/tools and what x/tools requires, each
// replaced by its directory in the module cache (a module missing there is left to x/tools'
// go.mod: goimports imports none of them), and the go command gets an empty module cache of its
// own, as it refuses an overlay of files under GOMODCACHE.
func buildGoimports(ctx context.Context, g goEnv, version, tmp, bin string, overlay map[string]string) error {
	dir, files, err := goimportsSource(g.GOMODCACHE, version)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	toolsMod, err := modfile.ParseLax(filepath.Join(dir, "go.mod"), data, nil)
	if err != nil {
		return err
	}
	mod := new(modfile.File)
	mod.AddModuleStmt("attnbook.invalid/goimports")
	if toolsMod.Go != nil {
		mod.AddGoStmt(toolsMod.Go.Version)
	}
	mod.AddNewRequire(GoimportsModule, version, false)
	mod.AddReplace(GoimportsModule, version, dir, "")
	for _, r := range toolsMod.Require {
		if d, err := moduleDir(g.GOMODCACHE, r.Mod.Path, r.Mod.Version); err == nil {
			mod.AddNewRequire(r.Mod.Path, r.Mod.Version, false)
			mod.AddReplace(r.Mod.Path, r.Mod.Version, d, "")
		}
	}
	gomod, err := mod.Format()
	if err != nil {
		return err
	}
	work := filepath.Join(tmp, "goimports")
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
	for name, data := range files {
		file := filepath.Join(work, "x-tools", name)
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
	args := []string{"build", "-trimpath", "-overlay", ovFile, "-o", filepath.Join(bin, "goimports-bin", "goimports"), GoimportsModule + "/cmd/goimports"}
	cmd := exec.CommandContext(ctx, filepath.Join(g.GOROOT, "bin", "go"), args...)
	cmd.Dir = work
	cmd.Env = append(toolBuildEnv(g, filepath.Join(tmp, "modcache")), "GOFLAGS=-mod=mod", "GOPROXY=off")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("thptools: go %s: %w\n%s", strings.Join(args, " "), err, msg)
	}
	return nil
}
