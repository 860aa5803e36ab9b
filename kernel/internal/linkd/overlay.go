package linkd

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/attnbook/attnbook/kernel/internal/srcedit"
)

//go:embed patch/*.txt
var patches embed.FS

// ErrUnsupported says this toolchain's source is not the one the patch was written for: the
// tools are then built without it, and cells link the ordinary way.
var ErrUnsupported = errors.New("linkd: unsupported toolchain source")

// edits are the changes to the linker's files (besides those added).
var edits = []srcedit.Edit{
	{File: "cmd/link/internal/ld/main.go",
		Anchor: "\tdefault:\n\t\taddlibpath(ctxt, \"command line\", \"command line\", flag.Arg(0), \"main\", \"\", zerofp)\n\t}\n",
		With:   "\tdefault:\n\t\tif os.Getenv(\"ATTNBOOK_LINKD_SERVE\") == \"\" { // attnbook: a server adds main per request (attnbook_linkd.go)\n\t\t\taddlibpath(ctxt, \"command line\", \"command line\", flag.Arg(0), \"main\", \"\", zerofp)\n\t\t}\n\t}\n"},
	{File: "cmd/link/internal/ld/lib.go",
		Anchor: "\t// ctxt.Library grows during the loop, so not a range loop.\n\ti := 0\n",
		With:   "\t// ctxt.Library grows during the loop, so not a range loop.\n\ti := linkdPreload(ctxt) // attnbook: 0 but in a resident linker's child (attnbook_linkd.go)\n"},
	{File: "cmd/link/internal/loader/loader.go",
		Anchor: "type Loader struct {\n",
		With:   "type Loader struct {\n\tdefs *loadState // attnbook: the definitions loaded so far, see LoadSymsDefs\n"},
	{File: "cmd/link/internal/loader/loader.go",
		Anchor: "type loadState struct {\n\tl            *Loader\n",
		With:   "type loadState struct {\n\tl            *Loader\n\tloaded       int // attnbook: l.objs whose definitions are loaded\n"},
	{File: "cmd/link/internal/ld/deadcode.go",
		Anchor: "\td := deadcodePass{ctxt: ctxt, ldr: ldr}\n\td.init()\n\td.flood()\n",
		With:   "\td := linkdDeadcode(ctxt, ldr) // attnbook: a resident linker's child goes on from its server's pass (attnbook_linkd.go)\n"},
	{File: "cmd/link/internal/ld/deadcode.go",
		Anchor: "\t\tsymIdx := d.wq.pop()\n",
		With:   "\t\tsymIdx := d.wq.pop()\n\t\tif linkdDefer(d, symIdx) { // attnbook: only while a resident linker floods (attnbook_linkd.go)\n\t\t\tcontinue\n\t\t}\n"},
	{File: "cmd/link/internal/ld/main.go",
		Anchor: "\t\tif err := ctxt.Out.Mmap(filesize); err != nil {\n",
		With:   "\t\tif linkdOutput(ctxt.Out, filesize) { // attnbook: a resident linker's child has the memory ready (attnbook_linkd.go)\n\t\t} else if err := ctxt.Out.Mmap(filesize); err != nil {\n"},
	{File: "cmd/link/internal/ld/lib.go",
		Anchor: "func errorexit() {\n\texitIfErrors()\n\tExit(0)\n}\n",
		With:   "func errorexit() {\n\texitIfErrors()\n\tlinkdDone() // attnbook: a resident linker's child tells its client at once (attnbook_linkd.go)\n\tExit(0)\n}\n"},
	{File: "cmd/link/internal/loader/loader.go", Anchor: loadSymsHead,
		With: "func (l *Loader) LoadSyms(arch *sys.Arch) {\n\tst := l.LoadSymsDefs() // attnbook: only those of the objects added since a LoadSymsDefs\n"},
}

// loadSymsHead is the start of the loader's LoadSyms, which LoadSymsDefs (patch/loader_defs.go.txt)
// takes over.
const loadSymsHead = `func (l *Loader) LoadSyms(arch *sys.Arch) {
	// Allocate space for symbols, making a guess as to how much space we need.
	// This function was determined empirically by looking at the cmd/compile on
	// Darwin, and picking factors for hashed and hashed64 syms.
	var symSize, hashedSize, hashed64Size int
	for _, r := range l.objs[goObjStart:] {
		symSize += r.ndef + r.nhasheddef/2 + r.nhashed64def/2 + r.NNonpkgdef()
		hashedSize += r.nhasheddef / 2
		hashed64Size += r.nhashed64def / 2
	}
	// Index 0 is invalid for symbols.
	l.objSyms = make([]objSym, 1, symSize)

	st := loadState{
		l:            l,
		hashed64Syms: make(map[uint64]symAndSize, hashed64Size),
		hashedSyms:   make(map[goobj.HashType]symAndSize, hashedSize),
	}

	for _, r := range l.objs[goObjStart:] {
		st.preloadSyms(r, pkgDef)
	}
	l.npkgsyms = l.NSym()
	for _, r := range l.objs[goObjStart:] {
		st.preloadSyms(r, hashed64Def)
		st.preloadSyms(r, hashedDef)
		st.preloadSyms(r, nonPkgDef)
	}
`

// added are the files the patch adds, by their path under GOROOT/src, from patch/.
var added = map[string]string{
	"cmd/link/internal/ld/attnbook_linkd.go":    "ld_linkd.go.txt",
	"runtime/attnbook_fork.go":                  "runtime_fork.go.txt",
	"cmd/link/internal/loader/attnbook_defs.go": "loader_defs.go.txt",
}

// Overlay returns the resident linker's patch to the toolchain at goroot: the new content of
// each file it changes or adds, by path under goroot/src. Built with it, cmd/link links as
// before unless $ATTNBOOK_LINKD_SERVE is set (byte for byte: kernel/internal/thptools tests it).
func Overlay(goroot string) (map[string][]byte, error) {
	files, err := srcedit.Apply(goroot, edits)
	if errors.Is(err, srcedit.ErrMismatch) {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	} else if err != nil {
		return nil, err
	}
	for file, name := range added {
		if _, err := os.Stat(filepath.Join(goroot, "src", file)); err == nil {
			return nil, fmt.Errorf("%w: %s exists", ErrUnsupported, file)
		}
		data, err := patches.ReadFile("patch/" + name)
		if err != nil {
			return nil, err
		}
		files[file] = data
	}
	return files, nil
}
