// Package goenvcache keeps a GoNB module's answer to `go env -json NAME…` between cells. goimports
// asks it before every cell (GoNB runs goimports on each cell's code); the cell builder
// (kernel/internal/cellbuild) stores the go command's answer in CacheFile under CacheKey, and the
// goimports built for cells (kernel/internal/thptools) reads it back with Cached while the key
// still matches, instead of running the go command.
//
// This file is also compiled into that goimports, into golang.org/x/tools/internal/imports: it
// imports the standard library only and its names are not that package's.
package goenvcache

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// CacheFile, in the module's directory, holds the last `go env -json …` answer: its CacheKey on
// the first line, then the go command's output.
const CacheFile = ".attnbook-go-env"

// CacheKey hashes what `go ARGS` (ARGS: env -json NAME…), run in the current directory, reads
// besides ARGS: the go command $PATH finds (its path, size and time: the kernel spec's shim names
// the toolchain), the directory, the variables it reads (GoEnvRead), the go env file (`go env -w`)
// and the go.mod and go.work files from the directory up.
func CacheKey(args []string) (string, error) {
	h := sha256.New()
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	info, err := os.Stat(goBin)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%q %d %d %q %q\n", goBin, info.Size(), info.ModTime().UnixNano(), args, cwd)
	env := os.Environ()
	slices.Sort(env)
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); GoEnvRead(name, args) {
			fmt.Fprintf(h, "%q\n", kv)
		}
	}
	var files []string
	if f := goEnvFile(); f != "" {
		files = append(files, f)
	}
	for dir := cwd; ; dir = filepath.Dir(dir) {
		files = append(files, filepath.Join(dir, "go.mod"), filepath.Join(dir, "go.work"))
		if filepath.Dir(dir) == dir {
			break
		}
	}
	sum, err := HashFiles(files...)
	if err != nil {
		return "", err
	}
	h.Write([]byte(sum))
	return hex.EncodeToString(h.Sum(nil)), nil
}

// HashFiles hashes the files' names and contents; a missing file counts as empty.
func HashFiles(names ...string) (string, error) {
	h := sha256.New()
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		fmt.Fprintf(h, "%q %t %d\n", name, err == nil, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Cached is the answer CacheFile holds under key, if it holds one.
func Cached(key string) ([]byte, bool) {
	data, err := os.ReadFile(CacheFile)
	if err != nil {
		return nil, false
	}
	k, out, ok := strings.Cut(string(data), "\n")
	return []byte(out), ok && k == key
}

// GoEnvRead reports whether `go ARGS` may read the variable: the go command's own (GO*, CGO_*),
// the tools it names (CC, …), where its settings live (HOME, XDG_CONFIG_HOME) and any asked for.
func GoEnvRead(name string, args []string) bool {
	switch name {
	case "HOME", "XDG_CONFIG_HOME", "CC", "CXX", "FC", "AR", "PKG_CONFIG", "GCCGO":
		return true
	}
	return strings.HasPrefix(name, "GO") || strings.HasPrefix(name, "CGO_") || slices.Contains(args, name)
}

// goEnvFile is where `go env -w` writes ($GOENV, else os.UserConfigDir()/go/env), or "" for none.
func goEnvFile() string {
	if f, ok := os.LookupEnv("GOENV"); ok {
		if f == "off" {
			return ""
		}
		return f
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "go", "env")
}
