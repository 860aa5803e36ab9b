package thptools

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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

// goimportsSource returns the files to lay over x/tools' directory dir: importsPatch's and the
// file it adds.
func goimportsSource(dir string) (map[string][]byte, error) {
	files, err := srcedit.ApplyTree(dir, []srcedit.Edit{importsPatch})
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, importsAdded)); err == nil {
		return nil, fmt.Errorf("%w: %s exists in %s", ErrUnsupported, importsAdded, dir)
	}
	src := bytes.Replace(goenvcache.Source, []byte("\npackage goenvcache\n"), []byte("\npackage imports\n"), 1)
	if bytes.Equal(src, goenvcache.Source) {
		return nil, errors.New("thptools: goenvcache.go has no package clause to rename")
	}
	files[importsAdded] = src
	return files, nil
}

// goimportsCommand is goimports at version, with importsPatch.
func goimportsCommand(version string) command {
	return command{Module: GoimportsModule, Version: version, Package: GoimportsModule + "/cmd/goimports", Name: "goimports",
		source: goimportsSource}
}

// Goimports is the goimports built into dir by Build with a version of GoimportsModule, or "".
// It is alone in its directory, which the kernel spec puts on $PATH before the stock goimports.
func Goimports(dir string) string { return built(dir, "goimports") }
