package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// extend adds to the record r the packages a cell imports that its program did not link yet
// (added, and their dependencies): a student's first cell with a package pulled in the go command
// (its load, and a compile and a link of its own, ~1 s on a slow machine) only to learn what
// `go list -export` says in a fraction of that. For each package the record did not have: its
// archive (`go list -export` compiles what the build cache lacks, with the build's flags, so the
// archive is the one `go build` would link), its dependencies, the stamp of its directory when
// outside GOROOT and the module cache (taken after `go list`, one call, and kept only when no file
// changed within `settle` of its start; else the go command builds the cell), a line in both
// import configurations, and the module it comes from in the link's build
// information, as the go command writes it. A module replaced by another, or without a checksum
// in go.sum, is left to the go command. The import configurations are rewritten in place: the
// resident compiler and linker of the configurations before the first extension serve the
// compiles and links after it (the record's CompileBase and LinkBase, linkd.RunVia).
func extend(goBin string, r *record, added []string) error {
	known := func(p string) bool { _, ok := slices.BinarySearch(r.Imports, p); return ok }
	const module = `{{with .Module}}{{.Path}}{{if .Replace}} replaced{{end}}{{if .Main}} main{{end}}` + "\t" + `{{.Version}}` + "\t" + `{{.Sum}}{{else}}` + "\t\t" + `{{end}}`
	const where = `{{if .Standard}}std{{else if not .Module}}local{{else if .Module.Replace}}{{if .Module.Replace.Version}}cache{{else}}local{{end}}{{else if .Module.Version}}cache{{else}}local{{end}}`
	listed := time.Now()
	list, err := goOutput(goBin, append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{join .Deps \" \"}}\t" + module + "\t" + where + "\t{{.Dir}}{{range .EmbedFiles}}\t{{.}}{{end}}"}, added...)...)
	if err != nil {
		return err
	}
	cfgs := map[string]string{}
	for _, name := range []string{"importcfg", "importcfg.link"} {
		data, err := os.ReadFile(filepath.Join(stateDir, name))
		if err != nil {
			return err
		}
		cfgs[name] = string(data)
	}
	info, err := newBuildInfo(cfgs["importcfg.link"])
	if err != nil {
		return err
	}
	deps := map[string][]string{}
	for i, p := range r.Imports {
		for _, j := range r.DepsOf[i] {
			deps[p] = append(deps[p], r.Imports[j])
		}
	}
	var lines strings.Builder
	var linked []string // the packages added, in go list's order
	for line := range strings.Lines(string(list)) {
		fields := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(fields) < 8 {
			return fmt.Errorf("go list -export: %q", line)
		}
		p, export, mod := fields[0], fields[1], fields[3]
		if known(p) {
			continue
		}
		if mod != "" && !strings.HasSuffix(mod, " main") {
			if err := info.need(mod, fields[4], fields[5]); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
		if fields[6] == "local" {
			dir, embeds := fields[7], fields[8:]
			if err := unchangedSince(dir, embeds, listed.Add(-settle)); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			st, err := stamp(dir, embeds)
			if err != nil {
				return err
			}
			r.Deps = append(r.Deps, dep{dir, embeds, st})
		}
		if export == "" { // unsafe has no archive, and the compiler knows it
			continue
		}
		deps[p] = strings.Fields(fields[2])
		r.Archives = append(r.Archives, export)
		linked = append(linked, p)
		fmt.Fprintf(&lines, "packagefile %s=%s\n", p, export)
	}
	r.Imports = append(r.Imports, linked...)
	cfgs["importcfg"] += lines.String()
	cfgs["importcfg.link"] = info.config(lines.String())
	slices.Sort(r.Imports)
	slices.Sort(r.Archives)
	r.Archives = slices.Compact(r.Archives)
	r.DepsOf = depsOf(r.Imports, deps)
	if err := os.RemoveAll(stateDir); err != nil {
		return err
	}
	return save(*r, cfgs)
}

// buildInfo is a link's import configuration around its modinfo line: the build information
// (runtime/debug.BuildInfo's text between its 16-byte markers) the go command gives the program.
type buildInfo struct {
	before, after string // the configuration's lines before and after the modinfo line
	start, end    string // the markers
	lines         []string
}

func newBuildInfo(cfg string) (*buildInfo, error) {
	i := strings.Index(cfg, "\nmodinfo ")
	if i < 0 {
		return nil, errors.New("the link's import configuration has no modinfo")
	}
	before, rest := cfg[:i+1], cfg[i+1:]
	line, after, _ := strings.Cut(rest, "\n")
	s, err := strconv.Unquote(strings.TrimPrefix(line, "modinfo "))
	if err != nil || len(s) < 32 {
		return nil, fmt.Errorf("modinfo: %v", err)
	}
	return &buildInfo{before: before, after: after, start: s[:16], end: s[len(s)-16:],
		lines: strings.SplitAfter(s[16:len(s)-16], "\n")}, nil
}

// need makes sure the build information lists module mod (go list's "PATH", "PATH replaced")
// at version with checksum sum: a "dep" line in path order, as the go command writes them.
func (b *buildInfo) need(mod, version, sum string) error {
	path, replaced := strings.CutSuffix(mod, " replaced")
	at := len(b.lines)
	for i, l := range b.lines {
		if p, ok := strings.CutPrefix(l, "dep\t"); ok {
			p, _, _ = strings.Cut(p, "\t")
			if p == path {
				return nil
			}
			if p > path && at == len(b.lines) {
				at = i
			}
		} else if strings.HasPrefix(l, "build\t") && at == len(b.lines) {
			at = i
		}
	}
	if replaced {
		return fmt.Errorf("module %s is replaced: the go command writes its build information", path)
	}
	if version == "" || sum == "" {
		return fmt.Errorf("module %s has no version or checksum", path)
	}
	b.lines = slices.Insert(b.lines, at, "dep\t"+path+"\t"+version+"\t"+sum+"\n")
	return nil
}

// settle: a dependency's file changed later than this before go list started may have been read
// before or after the change, so its stamp (taken after go list) would not vouch for the archive.
const settle = 2 * time.Second

// unchangedSince reports an error when dir, one of its files or one of embeds changed at t or later.
func unchangedSince(dir string, embeds []string, t time.Time) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	paths := []string{dir}
	for _, e := range entries {
		paths = append(paths, filepath.Join(dir, e.Name()))
	}
	for _, f := range embeds {
		paths = append(paths, filepath.Join(dir, f))
	}
	for _, path := range paths {
		info, err := os.Stat(path)
		if err != nil {
			return err
		}
		if !info.ModTime().Before(t) {
			return fmt.Errorf("%s changed less than %v before go list read it", path, settle)
		}
	}
	return nil
}

// config is the import configuration with packagefile lines added before modinfo.
func (b *buildInfo) config(packagefiles string) string {
	info := b.start + strings.Join(b.lines, "") + b.end
	return b.before + packagefiles + "modinfo " + strconv.Quote(info) + "\n" + b.after
}
