package linkd_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/attnbook/attnbook/kernel/internal/linkd"
	"github.com/attnbook/attnbook/kernel/internal/thptools"
)

// residentTools builds the tools (from the build cache after `kernel setup`) and returns the go
// command, its tool directory and the built tools' directory.
func residentTools(t *testing.T) (goBin, toolDir, tools string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the resident tools fork, on Linux")
	}
	goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goBin, "env", "GOROOT", "GOTOOLDIR").Output()
	if err != nil {
		t.Fatal(err)
	}
	goroot, toolDir, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	goBin = filepath.Join(goroot, "bin", "go")
	tools = filepath.Join(t.TempDir(), "tools")
	if _, err := thptools.Build(context.Background(), tools, goBin, thptools.Commands{}); err != nil {
		t.Fatal(err)
	}
	if !thptools.Resident(tools, "compile") || !thptools.Resident(tools, "link") {
		t.Fatal("the tools were built without the resident mode")
	}
	return goBin, toolDir, tools
}

// waitListening waits until the server Run started on sock listens.
func waitListening(t *testing.T, sock string) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		_, errSock := os.Stat(sock)
		_, errMark := os.Stat(sock + ".starting")
		if errSock == nil && errMark != nil {
			return // listening, and its starting mark gone
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("no server listening 30 s after Run started one (socket: %v, mark: %v)", errSock, errMark)
		}
	}
}

// waitGone waits until the server on sock has stopped listening.
func waitGone(t *testing.T, sock string) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(sock); err != nil {
			return
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("the server still listens 10 s after its import configuration was removed")
		}
	}
}

// TestLink links programs through a server and checks them against the ordinary link's, then
// its refusals and its exit.
func TestLink(t *testing.T) {
	goBin, toolDir, tools := residentTools(t)
	goroot := filepath.Dir(filepath.Dir(goBin))
	dir := t.TempDir()
	nm := filepath.Join(t.TempDir(), "nm") // built now: the server would go idle while go tool nm builds it
	if out, err := exec.Command(goBin, "build", "-o", nm, "cmd/nm").CombinedOutput(); err != nil {
		t.Fatalf("go build cmd/nm: %v\n%s", err, out)
	}
	cfg, err := exec.Command(goBin, "list", "-export", "-deps", "-f", "{{if .Export}}packagefile {{.ImportPath}}={{.Export}}{{end}}", "fmt", "strings").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	importcfg := filepath.Join(dir, "importcfg")
	if err := os.WriteFile(importcfg, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOROOT="+goroot) // idle for the default ten minutes: nm and compile between links may take seconds on a loaded machine
	obj := filepath.Join(dir, "main.a")
	run := func(argv ...string) string {
		t.Helper()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", argv[0], err, out)
		}
		return string(out)
	}
	compile := func(word string) {
		t.Helper()
		// shout's String is reached only through fmt's call of an interface method: the
		// server floods fmt's side, the child main's.
		src := "package main\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\ntype shout string\n\n" +
			"func (s shout) String() string { return strings.ToUpper(string(s)) }\n\nfunc main() { fmt.Println(shout(\"" + word + "\")) }\n"
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		run(filepath.Join(toolDir, "compile"), "-o", obj, "-p", "main", "-complete", "-importcfg", importcfg, "-pack", "main.go")
	}
	symbolsOf := func(exe string) string {
		var names []string
		for line := range strings.Lines(run(nm, exe)) {
			if f := strings.Fields(line); len(f) >= 3 {
				names = append(names, f[1]+" "+f[2])
			}
		}
		slices.Sort(names)
		return strings.Join(names, "\n")
	}
	link := func(exe string) []string {
		return []string{filepath.Join(tools, "link"), "-o", exe, "-importcfg", importcfg, "-buildmode=exe", obj}
	}
	sock, err := linkd.Socket(link("x"), env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(importcfg) }) // the server exits within a second of that

	compile("hello")
	if err := linkd.Run(link(filepath.Join(dir, "first")), env); !errors.Is(err, linkd.ErrNoServer) {
		t.Fatalf("first Run: %v, want ErrNoServer", err)
	}
	waitListening(t, sock)
	for _, word := range []string{"hello", "again"} {
		compile(word)
		exe := filepath.Join(dir, word)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs { // two at once: the server takes them in turn
			wg.Go(func() { errs[i] = linkd.Run(link(exe+string(rune('0'+i))), env) })
		}
		wg.Wait()
		run(link(exe)...) // the ordinary link, with the same linker
		for i, err := range errs {
			if err != nil {
				t.Fatalf("Run %d of %q: %v", i, word, err)
			}
			if got, want := run(exe+string(rune('0'+i))), strings.ToUpper(word)+"\n"; got != want {
				t.Errorf("program linked by the server printed %q, want %q", got, want)
			}
		}
		if got, want := run(exe), strings.ToUpper(word)+"\n"; got != want {
			t.Errorf("program linked the ordinary way printed %q, want %q", got, want)
		}
		// The same symbols: the server's dead code pass, carried on in its child, reaches what
		// an ordinary link reaches (only their order and the tables' sizes differ).
		if got, want := symbolsOf(exe+"0"), symbolsOf(exe); got != want {
			t.Errorf("the server's program has other symbols than the ordinary link's:\n%s", lineDiff(got, want))
		}
	}

	// A link whose import configuration adds packages to the server's (a cell importing
	// something new) is served by that server through RunVia, its child loading them after
	// the server's, and no server starts for the wider configuration.
	wider, err := exec.Command(goBin, "list", "-export", "-deps", "-f", "{{if .Export}}packagefile {{.ImportPath}}={{.Export}}{{end}}", "fmt", "strings", "sort", "unicode/utf8").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	// The configuration is rewritten in place, as the cell builder extends its own.
	if err := os.WriteFile(importcfg, wider, 0o644); err != nil {
		t.Fatal(err)
	}
	src := "package main\n\nimport (\n\t\"fmt\"\n\t\"sort\"\n\t\"strings\"\n\t\"unicode/utf8\"\n)\n\n" +
		"func main() { s := []string{\"b\", \"a\"}; sort.Strings(s); fmt.Println(strings.Join(s, \",\"), utf8.RuneLen('é')) }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	run(filepath.Join(toolDir, "compile"), "-o", obj, "-p", "main", "-complete", "-importcfg", importcfg, "-pack", "main.go")
	widerLink := []string{filepath.Join(tools, "link"), "-o", filepath.Join(dir, "wider"), "-importcfg", importcfg, "-buildmode=exe", obj}
	if err := linkd.RunVia(widerLink, env, importcfg, string(cfg)); err != nil {
		t.Fatalf("RunVia with more packages than the server's: %v", err)
	}
	if widerSock, err := linkd.Socket(widerLink, env); err != nil {
		t.Fatal(err)
	} else if _, err := os.Stat(widerSock + ".starting"); err == nil {
		t.Errorf("RunVia, served by the narrower configuration's server, started a server for the wider one")
	}
	run(filepath.Join(tools, "link"), "-o", filepath.Join(dir, "wider-ordinary"), "-importcfg", importcfg, "-buildmode=exe", obj)
	if got := run(filepath.Join(dir, "wider")); got != "a,b 2\n" {
		t.Errorf("program with more packages, linked by the server, printed %q, want %q", got, "a,b 2\n")
	}
	if got, want := symbolsOf(filepath.Join(dir, "wider")), symbolsOf(filepath.Join(dir, "wider-ordinary")); got != want {
		t.Errorf("the server's program with more packages has other symbols than the ordinary link's:\n%s", lineDiff(got, want))
	}
	// One whose configuration leaves out packages the server loaded, and adds one, is served
	// too, its child flooding dead code from the program's roots alone; a server for that
	// configuration starts, for the links after.
	narrow, err := exec.Command(goBin, "list", "-export", "-deps", "-f", "{{if .Export}}packagefile {{.ImportPath}}={{.Export}}{{end}}", "os", "strconv", "unicode/utf8").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	narrowCfg := filepath.Join(dir, "importcfg.narrow") // another file, as the cell builder's linkOnly writes
	if err := os.WriteFile(narrowCfg, narrow, 0o644); err != nil {
		t.Fatal(err)
	}
	src = "package main\n\nimport (\n\t\"os\"\n\t\"strconv\"\n\t\"unicode/utf8\"\n)\n\n" +
		"func main() { os.Stdout.WriteString(strconv.Itoa(utf8.RuneLen('é')) + \"\\n\") }\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	run(filepath.Join(toolDir, "compile"), "-o", obj, "-p", "main", "-complete", "-importcfg", narrowCfg, "-pack", "main.go")
	narrowLink := func(exe string) []string {
		return []string{filepath.Join(tools, "link"), "-o", exe, "-importcfg", narrowCfg, "-buildmode=exe", obj}
	}
	if err := linkd.RunVia(narrowLink(filepath.Join(dir, "narrow")), env, importcfg, string(cfg)); err != nil {
		t.Fatalf("RunVia with fewer packages than the server's: %v", err)
	}
	if narrowSock, err := linkd.Socket(narrowLink("x"), env); err != nil {
		t.Fatal(err)
	} else {
		waitListening(t, narrowSock)
	}
	run(narrowLink(filepath.Join(dir, "narrow-ordinary"))...)
	if got := run(filepath.Join(dir, "narrow")); got != "2\n" {
		t.Errorf("program with fewer packages, linked by the server, printed %q, want %q", got, "2\n")
	}
	if got, want := symbolsOf(filepath.Join(dir, "narrow")), symbolsOf(filepath.Join(dir, "narrow-ordinary")); got != want {
		t.Errorf("the server's program with fewer packages has other symbols than the ordinary link's:\n%s", lineDiff(got, want))
	}
	os.Remove(narrowCfg) // its server exits within a second

	// A request whose arguments differ from the server's is refused, and nothing is written.
	status, msg := request(t, sock, []string{"-o", filepath.Join(dir, "refused"), "-importcfg", importcfg, "-buildmode=exe", "-s", obj})
	if status != "3" || !strings.Contains(msg, "differ from the server's") {
		t.Errorf("request with -s: status %q, %q; want 3, arguments differ", status, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "refused")); err == nil {
		t.Errorf("a refused request wrote its output")
	}
	// One whose import configuration names another file for a package loaded is refused too.
	other := filepath.Join(dir, "importcfg2")
	os.WriteFile(other, bytes.Replace(cfg, []byte("packagefile strings="), []byte("packagefile strings=/nonexistent/"), 1), 0o644)
	status, msg = request(t, sock, []string{"-o", filepath.Join(dir, "refused"), "-importcfg", other, "-buildmode=exe", obj})
	if status != "3" || !strings.Contains(msg, "package strings is") {
		t.Errorf("request with another strings: status %q, %q; want 3, package strings is …", status, msg)
	}

	t.Setenv(linkd.OffVar, "off")
	if err := linkd.Run(link(filepath.Join(dir, "off")), env); err == nil {
		t.Errorf("Run with %s=off ran", linkd.OffVar)
	}
	os.Remove(importcfg)
	waitGone(t, sock)
}

// TestCompile compiles packages through a server and checks each object against the ordinary
// compile's, byte for byte: with the imports the server read, with fewer (a package only the
// server imported is not recorded), with one more; then a compile error, a refusal and its exit.
func TestCompile(t *testing.T) {
	goBin, _, tools := residentTools(t)
	dir := t.TempDir()
	cfg, err := exec.Command(goBin, "list", "-export", "-deps", "-f", "{{if .Export}}packagefile {{.ImportPath}}={{.Export}}{{end}}", "fmt", "strings", "os").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	importcfg := filepath.Join(dir, "importcfg")
	if err := os.WriteFile(importcfg, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOROOT="+filepath.Dir(filepath.Dir(goBin)))
	source := func(imports []string, body string) {
		t.Helper()
		src := "package main\n\nimport (\n"
		for _, p := range imports {
			src += "\t\"" + p + "\"\n"
		}
		src += ")\n\nfunc main() {\n" + body + "\n}\n"
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	compile := func(obj string) []string {
		return []string{filepath.Join(tools, "compile"), "-o", obj, "-p", "main", "-complete", "-c=2", "-importcfg", importcfg, "-pack", "./main.go"}
	}
	ordinary := func(obj string) []byte {
		t.Helper()
		argv := compile(obj)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("compile: %v\n%s", err, out)
		}
		data, err := os.ReadFile(obj)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(dir); err != nil { // Run starts the server in the caller's directory
		t.Fatal(err)
	}
	sock, err := linkd.Socket(compile("x"), env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(importcfg) }) // the server exits within a second of that

	source([]string{"fmt", "strings"}, `fmt.Println(strings.ToUpper("hello"))`)
	if err := linkd.Run(compile(filepath.Join(dir, "first.a")), env); !errors.Is(err, linkd.ErrNoServer) {
		t.Fatalf("first Run: %v, want ErrNoServer", err)
	}
	waitListening(t, sock)
	for _, c := range []struct {
		name    string
		imports []string
		body    string
	}{
		{"the server's imports", []string{"fmt", "strings"}, `fmt.Println(strings.ToUpper("hello"))`},
		{"fewer", []string{"fmt"}, `fmt.Println("hello")`},
		{"one more", []string{"fmt", "os", "strings"}, `fmt.Fprintln(os.Stderr, strings.Repeat("a", 3))`},
		{"the server's again", []string{"fmt", "strings"}, `fmt.Println(strings.Fields("a b"))`},
	} {
		source(c.imports, c.body)
		served := filepath.Join(dir, "served.a")
		if err := linkd.Run(compile(served), env); err != nil {
			t.Fatalf("%s: Run: %v", c.name, err)
		}
		got, err := os.ReadFile(served)
		if err != nil {
			t.Fatal(err)
		}
		if want := ordinary(filepath.Join(dir, "ordinary.a")); !bytes.Equal(got, want) {
			t.Errorf("%s: the served object (%d bytes) differs from the ordinary compile's (%d bytes)", c.name, len(got), len(want))
		}
	}

	// A notebook cell's new import extends the configuration file in place: the server started
	// with the file as it was serves the compile (it reads the file again), and no other starts.
	more, err := exec.Command(goBin, "list", "-export", "-deps", "-f", "{{if .Export}}packagefile {{.ImportPath}}={{.Export}}{{end}}", "text/tabwriter").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	extended := string(cfg)
	for line := range strings.Lines(string(more)) {
		if !strings.Contains(extended, line) {
			extended += line
		}
	}
	if err := os.WriteFile(importcfg, []byte(extended), 0o644); err != nil {
		t.Fatal(err)
	}
	source([]string{"fmt", "os", "text/tabwriter"}, `w := tabwriter.NewWriter(os.Stdout, 0, 8, 1, ' ', 0)
	fmt.Fprintln(w, "a\tb")
	w.Flush()`)
	served := filepath.Join(dir, "served.a")
	if err := linkd.RunVia(compile(served), env, importcfg, string(cfg)); err != nil {
		t.Fatalf("extended configuration: RunVia: %v", err)
	}
	got, err := os.ReadFile(served)
	if err != nil {
		t.Fatal(err)
	}
	if want := ordinary(filepath.Join(dir, "ordinary.a")); !bytes.Equal(got, want) {
		t.Errorf("extended configuration: the served object (%d bytes) differs from the ordinary compile's (%d bytes)", len(got), len(want))
	}
	if own, err := linkd.Socket(compile("x"), env); err != nil || own == sock || linkd.Starting(own) {
		t.Errorf("extended configuration: a server of its own is starting (%v)", err)
	} else if _, err := os.Stat(own); err == nil {
		t.Errorf("extended configuration: a server of its own listens")
	}
	// One that names a package the server read differently is refused.
	changed := strings.Replace(extended, "packagefile fmt=", "packagefile fmt=/nonexistent/", 1)
	if err := os.WriteFile(importcfg, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if status, msg := request(t, sock, compile(served)[1:]); status != "3" || !strings.Contains(msg, "no longer names fmt") {
		t.Errorf("configuration naming fmt's archive differently: status %q, %q; want 3, no longer names fmt", status, msg)
	}
	if err := os.WriteFile(importcfg, cfg, 0o644); err != nil {
		t.Fatal(err)
	}

	// A compile error is the compile's own, and writes nothing.
	source([]string{"fmt"}, `fmt.Println(undefinedName)`)
	failed := filepath.Join(dir, "failed.a")
	if err := linkd.Run(compile(failed), env); !errors.Is(err, linkd.ErrFailed) || !strings.Contains(err.Error(), "undefined: undefinedName") {
		t.Errorf("Run of a file with an error: %v, want ErrFailed naming undefinedName", err)
	}
	if _, err := os.Stat(failed); err == nil {
		t.Errorf("a failed compile left its output")
	}
	// A request whose arguments differ from the server's but for -o is refused.
	status, msg := request(t, sock, append(compile(failed)[1:], "-N"))
	if status != "3" || !strings.Contains(msg, "differ from the server's") {
		t.Errorf("request with -N: status %q, %q; want 3, arguments differ", status, msg)
	}
	os.Remove(importcfg)
	waitGone(t, sock)
}

// request sends one request to the server at sock and returns the child's status and output.
func request(t *testing.T, sock string, args []string) (status, output string) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(strings.Join(args, "\x00")))
	c.(*net.UnixConn).CloseWrite()
	out, _ := io.ReadAll(c)
	// A child that succeeded writes the status line as it exits, and its server once more.
	i := strings.LastIndex(string(out), "\x00linkd-exit ")
	if i < 0 {
		return "", string(out)
	}
	return strings.TrimSpace(string(out[i+len("\x00linkd-exit "):])), string(out[:i])
}

// TestSocketDir: the sockets' directory must be the user's own and private, or no server is used.
func TestSocketDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir := filepath.Join(tmp, fmt.Sprintf("attnbook-linkd-%d", os.Getuid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	argv := []string{"link", "-o", "x", "main.a"}
	if _, err := linkd.Socket(argv, nil); err == nil {
		t.Errorf("Socket accepted a directory others can enter")
	}
	os.Chmod(dir, 0o700)
	sock, err := linkd.Socket(argv, nil)
	if err != nil || filepath.Dir(sock) != dir {
		t.Errorf("Socket = %s, %v; want one in %s", sock, err, dir)
	}
}

// TestStarting: the cells linked while a server starts start no other, unless it never listened.
func TestStarting(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "x.sock")
	if linkd.Starting(sock) {
		t.Fatal("Starting with no mark said a server is starting")
	}
	if !linkd.Starting(sock) {
		t.Error("Starting right after a server was started said none is")
	}
	old := time.Now().Add(-time.Minute)
	os.Chtimes(sock+".starting", old, old)
	if linkd.Starting(sock) {
		t.Error("Starting a minute after a server that never listened said it is still starting")
	}
}

// lineDiff lists the lines only got has (-) and those only want has (+), at most 20.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var out []string
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out[:min(len(out), 20)], "\n")
}

// TestReadReply: a link's reply ends at its status line, even while the connection stays open (a
// child that linked writes it as it exits; its server closes the connection only after the child
// has exited).
func TestReadReply(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	defer server.Close()
	go func() {
		server.Write([]byte("a warning\n"))
		server.Write([]byte("\x00linkd-exit 0\n")) // and the connection stays open
	}()
	type reply struct {
		out []byte
		err error
	}
	got := make(chan reply, 1)
	go func() {
		out, err := linkd.ReadReply(client)
		got <- reply{out, err}
	}()
	select {
	case r := <-got:
		if r.err != nil || string(r.out) != "a warning\n\x00linkd-exit 0\n" {
			t.Errorf("reply %q, %v", r.out, r.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the reply did not end at its status line")
	}
}

// TestStart: Start starts a server for a command when none listens or is starting, once.
func TestStart(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	dir := t.TempDir()
	cfg, log := filepath.Join(dir, "importcfg"), filepath.Join(dir, "log")
	if err := os.WriteFile(cfg, []byte("packagefile fmt=/x/fmt.a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The "tool" logs that it was started as a server (its socket in $ATTNBOOK_LINKD_SERVE).
	argv := []string{"/bin/sh", "-c", `echo "$ATTNBOOK_LINKD_SERVE" >> ` + log, "-o", "x", "-importcfg", cfg}
	started := func() []string {
		data, _ := os.ReadFile(log)
		return strings.Fields(string(data))
	}
	if err := linkd.Start(argv, nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); len(started()) == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	sock, err := linkd.Socket(argv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := started(); !slices.Equal(got, []string{sock}) {
		t.Fatalf("Start ran the server for %q, want once for %s", got, sock)
	}
	if err := linkd.Start(argv, nil); err != nil { // starting: its mark is fresh
		t.Fatal(err)
	}
	os.Remove(sock + ".starting")
	if err := os.WriteFile(sock, nil, 0o600); err != nil { // listening
		t.Fatal(err)
	}
	if err := linkd.Start(argv, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if got := started(); len(got) != 1 {
		t.Errorf("Start with a server starting, then listening, started %d more", len(got)-1)
	}
}
