package linkd

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"os"
	"path"
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
		With:   "func errorexit() {\n\texitIfErrors()\n\tresidentDone() // attnbook: a resident linker's child tells its client at once (attnbook_serve.go)\n\tExit(0)\n}\n"},
	{File: "cmd/link/internal/loader/loader.go", Anchor: loadSymsHead,
		With: "func (l *Loader) LoadSyms(arch *sys.Arch) {\n\tst := l.LoadSymsDefs() // attnbook: only those of the objects added since a LoadSymsDefs\n"},

	// The resident compiler (patch/gc_compiled.go.txt, patch/noder_preload.go.txt).
	{File: "cmd/compile/internal/gc/main.go",
		Anchor: "\t// Parse and typecheck input.\n\tnoder.LoadPackage(flag.Args())\n",
		With:   "\tcompiledServe() // attnbook: a resident compiler returns in a child, with a request (attnbook_compiled.go)\n\n\t// Parse and typecheck input.\n\tnoder.LoadPackage(flag.Args())\n"},
	{File: "cmd/compile/main.go",
		Anchor: "\tgc.Main(archInit)\n\tbase.Exit(0)\n",
		With:   "\tgc.Main(archInit)\n\tgc.CompiledDone() // attnbook: a resident compiler's child tells its client at once (attnbook_serve.go)\n\tbase.Exit(0)\n"},
	{File: "cmd/compile/internal/noder/import.go",
		Anchor: "\tpkg1 = types.NewPkg(path, \"\")\n\tif packages != nil {\n",
		With: "\tpkg1 = types.NewPkg(path, \"\")\n" +
			"\tif p, ok := preloaded[path]; ok && !pkg1.Direct { // attnbook: read by a resident compiler before the request (attnbook_preload.go)\n" +
			"\t\tpkg1.Direct = true\n\t\ttarget.Imports = append(target.Imports, pkg1)\n\t\treturn pkg1, p.pkg2, addFingerprint(path, p.data)\n\t}\n" +
			"\tif packages != nil {\n"},
	{File: "cmd/compile/internal/noder/irgen.go",
		Anchor: "\tctxt := types2.NewContext()\n\timporter := gcimports{\n\t\tctxt:     ctxt,\n\t\tpackages: make(map[string]*types2.Package),\n\t}\n",
		With:   "\tctxt, packages := preloadedState() // attnbook: a resident compiler's imports read before the request (attnbook_preload.go)\n\timporter := gcimports{\n\t\tctxt:     ctxt,\n\t\tpackages: packages,\n\t}\n"},
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

// added are the files the patch adds, by their path under GOROOT/src, from patch/. The server's
// loop (serve.go.txt) goes into each tool's package, its package clause named after it.
var added = map[string]string{
	"cmd/link/internal/ld/attnbook_linkd.go":         "ld_linkd.go.txt",
	"cmd/link/internal/ld/attnbook_serve.go":         "serve.go.txt",
	"cmd/link/internal/loader/attnbook_defs.go":      "loader_defs.go.txt",
	"cmd/compile/internal/gc/attnbook_compiled.go":   "gc_compiled.go.txt",
	"cmd/compile/internal/gc/attnbook_serve.go":      "serve.go.txt",
	"cmd/compile/internal/noder/attnbook_preload.go": "noder_preload.go.txt",
	"runtime/attnbook_fork.go":                       "runtime_fork.go.txt",
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
		if name == "serve.go.txt" {
			data = bytes.Replace(data, []byte("\npackage resident\n"), []byte("\npackage "+path.Base(path.Dir(file))+"\n"), 1)
		}
		files[file] = data
	}
	return files, nil
}
