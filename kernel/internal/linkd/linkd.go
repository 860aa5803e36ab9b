// Package linkd runs notebook cells' links and compiles through resident tools: builds of the
// toolchain's cmd/link and cmd/compile (made by kernel/internal/thptools with Overlay's patch)
// that do once the work every cell of a notebook repeats, then fork a child for the next cell
// before it comes; the child populates the pages it shares with its server at once (a system
// call for many pages, where the tool would take a page fault for each), turns its garbage
// collector off (it runs once), waits for the request and goes on as an ordinary run does. A
// linker's child also reads each of those pages once while it waits: under a hypervisor that
// shadows page tables, a process's first access to a page traps even when the page is populated.
//
// The resident linker loads the ~230 packages a notebook links once, and runs the dead-code pass
// over them as far as it goes without the cell; its child loads only the cell's package, carries
// the dead-code pass on from its roots and finishes the link (layout, output), its output's
// memory populated before the request. Why: a warm cell is one compile and one link, and the link
// is most of it. Of a notebook cell's 0.55 s link on a 2-core Zen 3 guest, loading the packages'
// objects and symbols (~290,000) took 0.19–0.25 s, every cell, for the same packages. Through a
// server the same link took 0.39 s; on a Zen 4, flooding the dead code in the server took a
// cell's link from 155 to 128 ms (docs/benchmarks.md).
//
// The resident compiler sets itself up (flags, import configuration, the universe and the
// runtime's declarations) and reads the export data of the packages its source files import once;
// its child parses and compiles the cell's files as they are at the request, with a heap
// populated before it (docs/benchmarks.md has the figures).
//
// A server serves one command: the same tool, arguments, import configuration and tool
// environment, hashed into its socket's name; a linker's also serves links of the same program
// with other packages, and a compiler's the compiles whose import configuration file has grown
// since its start (RunVia). Run starts one when there is none and the caller runs the tool
// the ordinary way meanwhile; a server exits when idle for ten minutes, or within a second of its
// import configuration going (the notebook's kernel ended). Whatever goes wrong (no
// server, a refused request), Run says so and the caller runs the tool the ordinary way, so a cell
// never depends on it. ATTNBOOK_LINKD=off turns both off.
package linkd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	serveVar = "ATTNBOOK_LINKD_SERVE" // the server's socket, in the server's environment only
	OffVar   = "ATTNBOOK_LINKD"       // "off" turns resident links and compiles off
	refused  = 3                      // a child's exit status when it cannot serve a request
	trailer  = "\x00linkd-exit "      // the status line: a child that succeeded writes it as it exits, else the server once it exited
)

// runTimeout bounds one run through a server; a normal one takes a second at most.
const runTimeout = 60 * time.Second

// ErrNoServer says no server was listening for this command; Run has started one.
var ErrNoServer = errors.New("linkd: no server yet (started one)")

// ErrFailed says the server ran the command and it failed (a compile error): running it again
// the ordinary way would fail the same.
var ErrFailed = errors.New("linkd: failed")

// Run runs the link or compile command argv (argv[0] a tool built with Overlay; its -o and
// -importcfg arguments as the go command writes them) with the environment env through the
// server for it, starting one if there is none. A nil error means the output is written; an
// error wrapping ErrFailed carries the tool's messages; otherwise the caller runs the tool the
// ordinary way.
func Run(argv, env []string) error { return RunVia(argv, env, "", "") }

// RunVia is Run for a link that the server of another import configuration of the same program
// may serve where none serves argv's own: the file baseCfg with the content base, as that server
// was started. A notebook's cells import different sets of packages (each cell's link
// configuration names what its program links), and a server loads every package of its
// configuration (~230 a notebook links) once, at its start, while the cell that started it links
// the ordinary way (0.40–0.55 s against about 0.2 s through a server on a 2-core Zen 5 guest:
// docs/benchmarks.md, 2026-12-06). The
// base's server's child loads the packages the base lacks after its server's, and where the
// program leaves out some of the base's, floods dead code from the program's roots alone, as an
// ordinary link does; for the links after, a server for argv's own configuration then starts,
// unless argv's adds to the base (its child carries the base server's flood on). While the base's
// server is starting, the caller links the ordinary way and no other server starts. A compile
// goes the same way where its import configuration file has grown since the base (a cell's new
// import extends it in place): the base's server's child reads the file again, and refuses it
// if it names a package the server read differently.
func RunVia(argv, env []string, baseCfg, base string) error {
	if os.Getenv(OffVar) == "off" {
		return errors.New("linkd: off ($" + OffVar + "=off)")
	}
	sock, err := socket(argv, env, nil)
	if err != nil {
		return err
	}
	c, err := net.DialTimeout("unix", sock, time.Second)
	if err == nil {
		defer c.Close()
		return request(c, argv)
	}
	if i := slices.Index(argv, "-importcfg"); base != "" && i >= 0 && i+1 < len(argv) {
		baseArgv := slices.Clone(argv)
		baseArgv[i+1] = baseCfg
		if baseSock, err := socket(baseArgv, env, []byte(base)); err == nil && baseSock != sock {
			if c, err := net.DialTimeout("unix", baseSock, time.Second); err == nil {
				defer c.Close()
				if err := request(c, argv); !errors.Is(err, errRefused) {
					if err == nil && !extends(argv[i+1], base) {
						Start(argv, env)
					}
					return err
				}
			} else if markedStarting(baseSock) {
				return errors.New("linkd: the server of the configuration this link goes to is starting")
			}
		}
	}
	if starting(sock) {
		return ErrNoServer
	}
	if serr := serve(sock, argv, env); serr != nil {
		return fmt.Errorf("linkd: %v; starting a server: %v", err, serr)
	}
	return ErrNoServer
}

// extends reports whether the import configuration file cfgFile names every package base names,
// each with the same file.
func extends(cfgFile, base string) bool {
	cfg, err := os.ReadFile(cfgFile)
	if err != nil {
		return false
	}
	own := map[string]bool{}
	for line := range strings.Lines(string(cfg)) {
		if strings.HasPrefix(line, "packagefile ") {
			own[strings.TrimSpace(line)] = true
		}
	}
	for line := range strings.Lines(base) {
		if strings.HasPrefix(line, "packagefile ") && !own[strings.TrimSpace(line)] {
			return false
		}
	}
	return true
}

// errRefused says a server's child refused the request (arguments or packages not its own).
var errRefused = errors.New("linkd: refused")

// request sends argv's arguments to the server on c and reads its answer, as Run returns it.
func request(c net.Conn, argv []string) error {
	c.SetDeadline(time.Now().Add(runTimeout))
	if _, err := c.Write([]byte(strings.Join(argv[1:], "\x00"))); err != nil {
		return err
	}
	c.(*net.UnixConn).CloseWrite()
	out, err := readReply(c)
	if err != nil {
		return fmt.Errorf("linkd: %w", err)
	}
	i := bytes.LastIndex(out, []byte(trailer))
	if i < 0 {
		return fmt.Errorf("linkd: the server ended the connection without a status\n%s", out)
	}
	status, err := strconv.Atoi(strings.TrimSpace(string(out[i+len(trailer):])))
	switch {
	case err != nil:
		return fmt.Errorf("linkd: status %q", out[i+len(trailer):])
	case status == refused:
		return fmt.Errorf("%w: %s", errRefused, out[:i])
	case status != 0:
		return fmt.Errorf("%w: %s exited with status %d\n%s", ErrFailed, filepath.Base(argv[0]), status, out[:i])
	}
	return nil
}

// Start starts the server for argv, as Run does when there is none, unless one listens or is
// starting, and returns at once: a caller that knows a command before it is needed (a notebook's
// first cell, built by the go command, records the next cells' compile and link) gives the server
// a head start.
func Start(argv, env []string) error {
	if os.Getenv(OffVar) == "off" {
		return nil
	}
	sock, err := socket(argv, env, nil)
	if err != nil {
		return err
	}
	if _, err := os.Stat(sock); err == nil || starting(sock) {
		return nil
	}
	return serve(sock, argv, env)
}

// readReply reads a run's output up to its status line, which a child that linked writes as it
// exits (before its memory is torn down) and the server once the child has exited.
func readReply(r io.Reader) ([]byte, error) {
	var out []byte
	buf := make([]byte, 16<<10)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if i := bytes.LastIndex(out, []byte(trailer)); i >= 0 && bytes.IndexByte(out[i:], '\n') >= 0 {
			return out, nil
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// socket names the server for a command: a hash of the tool, its arguments but the output, the
// import configuration's content (importcfg's, or its file's when nil) and the environment.
func socket(argv, env []string, importcfg []byte) (string, error) {
	h := sha256.New()
	for i := 0; i < len(argv); i++ {
		if argv[i] == "-o" && i+1 < len(argv) {
			i++
			continue
		}
		fmt.Fprintf(h, "%q\n", argv[i])
		if argv[i] == "-importcfg" && i+1 < len(argv) {
			cfg := importcfg
			if cfg == nil {
				var err error
				if cfg, err = os.ReadFile(argv[i+1]); err != nil {
					return "", err
				}
			}
			fmt.Fprintf(h, "%d\n", len(cfg))
			h.Write(cfg)
		}
	}
	env = slices.Clone(env)
	slices.Sort(env)
	for _, kv := range env {
		if strings.HasPrefix(kv, "GO") || strings.HasPrefix(kv, "CGO_") {
			fmt.Fprintf(h, "%q\n", kv)
		}
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("attnbook-linkd-%d", os.Getuid()))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	// Another user could have made it first, and served programs of their own.
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return "", err
	}
	if st.Uid != uint32(os.Getuid()) || st.Mode&syscall.S_IFMT != syscall.S_IFDIR || st.Mode&0o077 != 0 {
		return "", fmt.Errorf("linkd: %s is not a private directory of this user", dir)
	}
	sock := filepath.Join(dir, hex.EncodeToString(h.Sum(nil))[:24]+".sock")
	if len(sock) > 100 { // sun_path holds 108 bytes
		return "", fmt.Errorf("linkd: socket path %s too long", sock)
	}
	return sock, nil
}

// startingFor is how long a server may take to listen after Run started it: the cells linked
// meanwhile start no other (the server removes sock+".starting" once it listens).
const startingFor = 30 * time.Second

// starting reports whether a server for sock was started less than startingFor ago, and if not
// marks one as starting now.
func starting(sock string) bool {
	mark := sock + ".starting"
	for range 2 {
		f, err := os.OpenFile(mark, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
			return false
		}
		if markedStarting(sock) {
			return true
		}
		os.Remove(mark) // a server that never listened: try again
	}
	return true
}

// markedStarting reports whether a server for sock was started less than startingFor ago and does
// not listen yet.
func markedStarting(sock string) bool {
	info, err := os.Stat(sock + ".starting")
	return err == nil && time.Since(info.ModTime()) < startingFor
}

// serve starts a server for argv on sock, detached: its own session, no standard streams.
func serve(sock string, argv, env []string) error {
	args := slices.Clone(argv[1:])
	for i := range args {
		if args[i] == "-o" && i+1 < len(args) {
			args[i+1] = os.DevNull
		}
	}
	cmd := exec.Command(argv[0], args...)
	// GOGC set: the compiler tunes its heap's growth at start unless it is (base.AdjustStartingHeap),
	// and that tuning turns the collector a child turned off back on after the child's collection.
	cmd.Env = append(slices.Clone(env), serveVar+"="+sock, "GOGC=100")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}
