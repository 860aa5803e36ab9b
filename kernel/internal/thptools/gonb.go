package thptools

import (
	"github.com/attnbook/attnbook/kernel/internal/srcedit"
)

// GoNBModule is the module the kernel, GoNB, is built from.
const GoNBModule = "github.com/janpfeifer/gonb"

// gonbPatch: before every cell's build GoNB runs `go get` (after goimports), a process of the cell
// builder that finds nothing to do almost every time (~10 ms a cell on a guest whose first touch
// of a page costs 11.6 µs). With it GoNB leaves that to the build, whose cell builder runs the
// same check first (kernel/internal/cellbuild). `%test` cells, built by `go test`, which the cell
// builder passes on, keep GoNB's `go get` (`%noautoget` still turns it off for them).
var gonbPatch = srcedit.Edit{File: "internal/goexec/execcode.go",
	Anchor: "\t// Download missing dependencies.\n\tif !s.AutoGet {\n",
	With:   "\t// Download missing dependencies.\n\tif !s.AutoGet || !s.CellIsTest { // attnbook: the cell builder's go build runs go get's check first\n"}

// gonbCommand is GoNB at version, with gonbPatch, its dependencies at the versions modFile requires.
func gonbCommand(version, modFile string) command {
	return command{Module: GoNBModule, Version: version, Package: GoNBModule, Name: "gonb", modFile: modFile,
		source: func(dir string) (map[string][]byte, error) { return srcedit.ApplyTree(dir, []srcedit.Edit{gonbPatch}) }}
}

// GoNB is the GoNB built into dir by Build with a version of GoNBModule, or "".
func GoNB(dir string) string { return built(dir, "gonb") }

// GoNBPath is where Build puts GoNB in dir, whether it is there or not (dir may be another
// machine's, an image's).
func GoNBPath(dir string) string { return commandPath(dir, "gonb") }
