package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/attnbook/attnbook/kernel/internal/goenvcache"
)

// goGetRecord, in the module's directory, is the state of the last `go get` that succeeded: the
// key of the module files (getKey) on its first line, then the import paths outside the standard
// library that the module's Go files had at that `go get` or at one since with the same key.
const goGetRecord = ".attnbook-go-get"

// goGet is GoNB's `go get`, run before every cell's build: by the stock GoNB, and by build itself
// (the GoNB setup builds runs none, kernel/internal/thptools). It runs the go command only when that
// could change something: go.mod, go.sum, go.work or the repository's go.mod ($ATTNBOOK_ROOT)
// differ from what the last `go get` that succeeded left, or a Go file imports a path outside the
// standard library that was not imported at a `go get` since. Cells import different subsets of
// the same packages (goimports keeps only what a cell uses), so comparing the import declarations
// themselves would run `go get` for most cells. It returns the exit code.
func goGet(goBin string) int {
	key, err := getKey()
	if err != nil {
		return passThrough(goBin, "get")
	}
	imports, err := nonStdImports()
	if err != nil {
		return passThrough(goBin, "get")
	}
	recKey, seen := readGetRecord()
	if recKey == key && subset(imports, seen) {
		return 0
	}
	if code := runGet(goBin); code != 0 {
		return code
	}
	if recKey == key {
		imports = append(imports, seen...)
	}
	if key, err = getKey(); err == nil { // `go get` may have changed go.mod or go.sum
		slices.Sort(imports)
		err = writeFileAtomic(goGetRecord, key+"\n"+strings.Join(slices.Compact(imports), "\n"))
	}
	trace("go get record", err)
	return 0
}

// offlineHint follows a `go get` that needed a module the module cache lacks while offline: the
// kernel spec sets GOPROXY=off, and setup downloads every module the repository's go.mod requires.
const offlineHint = "attnbook: cells run offline (GOPROXY=off) and the module cache lacks a module the notebook's go.mod requires: " +
	"`go run ./kernel setup` in the attnbook checkout downloads them; or, to let this kernel download, run `%env GOPROXY=https://proxy.golang.org,direct` in a cell"

// runGet runs `go get`, adding offlineHint to a failure for want of a module offline.
func runGet(goBin string) int {
	var out bytes.Buffer
	cmd := exec.Command(goBin, "get")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, io.MultiWriter(os.Stderr, &out)
	code := exitCode(cmd.Run())
	if code != 0 && strings.Contains(out.String(), "disabled by GOPROXY=off") {
		io.WriteString(os.Stderr, offlineHint+"\n")
	}
	return code
}

// getKey hashes the module files a `go get` reads and writes, and the repository's go.mod.
func getKey() (string, error) {
	return goenvcache.HashFiles("go.mod", "go.sum", "go.work", filepath.Join(os.Getenv("ATTNBOOK_ROOT"), "go.mod"))
}

func readGetRecord() (key string, imports []string) {
	data, err := os.ReadFile(goGetRecord)
	if err != nil {
		return "", nil
	}
	key, rest, _ := strings.Cut(string(data), "\n")
	return key, strings.Fields(rest)
}

// nonStdImports lists the import paths of the directory's Go files (tests included, as `go get`
// reads them) whose first element has a dot: the paths outside the standard library.
func nonStdImports() ([]string, error) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		return nil, err
	}
	var paths []string
	fset := token.NewFileSet()
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			return nil, err
		}
		for _, s := range f.Imports {
			p, err := strconv.Unquote(s.Path.Value)
			if err != nil {
				return nil, err
			}
			if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
				paths = append(paths, p)
			}
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths), nil
}

// subset reports whether every element of a is in sorted b.
func subset(a, b []string) bool {
	for _, s := range a {
		if _, ok := slices.BinarySearch(b, s); !ok {
			return false
		}
	}
	return true
}

// goEnv answers `go env -json NAME…`, which goimports runs before every cell where it does not
// read the answer itself (the goimports setup builds for cells does: kernel/internal/thptools),
// from the last answer to the same question when nothing it depends on changed (goenvcache).
// Anything else goes to the go command. It returns the exit code.
func goEnv(goBin string, args []string) int {
	if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-") && a != "-json" }) {
		return passThrough(goBin, args...)
	}
	key, err := goenvcache.CacheKey(args)
	if err != nil {
		return passThrough(goBin, args...)
	}
	if out, ok := goenvcache.Cached(key); ok {
		os.Stdout.Write(out)
		return 0
	}
	cmd := exec.Command(goBin, args...)
	var out bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, &out, os.Stderr
	if err := cmd.Run(); err != nil {
		os.Stdout.Write(out.Bytes())
		return exitCode(err)
	}
	trace("go env cache", writeFileAtomic(goenvcache.CacheFile, key+"\n"+out.String()))
	os.Stdout.Write(out.Bytes())
	return 0
}

func writeFileAtomic(name, content string) error {
	tmp := name + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// passThrough runs the go command with args and returns its exit code.
func passThrough(goBin string, args ...string) int {
	cmd := exec.Command(goBin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return exitCode(cmd.Run())
}

func exitCode(err error) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		fmt.Fprintln(os.Stderr, "cellbuild:", err)
		return 1
	}
}
