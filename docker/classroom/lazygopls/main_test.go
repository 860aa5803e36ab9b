package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain makes the test binary a fake gopls when LAZYGOPLS_FAKE is set: it appends every
// message it reads to the file LAZYGOPLS_FAKE names and answers each request with
// {"fake": METHOD}.
func TestMain(m *testing.M) {
	if log := os.Getenv("LAZYGOPLS_FAKE"); log != "" {
		fakeGopls(log)
		return
	}
	os.Exit(m.Run())
}

func fakeGopls(logPath string) {
	f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		os.Exit(3)
	}
	defer f.Close()
	in := bufio.NewReader(os.Stdin)
	for {
		body, err := readMessage(in)
		if err != nil {
			return
		}
		var m message
		_ = json.Unmarshal(body, &m)
		f.Write(append(body, '\n'))
		if len(m.ID) > 0 && m.Method != "" {
			writeMessage(os.Stdout, response(m.ID, `{"fake":"`+m.Method+`"}`))
		}
	}
}

// client is the GoNB side of a connection to serve.
type client struct {
	t   *testing.T
	w   io.Writer
	in  *bufio.Reader
	got chan string
}

func (c *client) send(body string) {
	c.t.Helper()
	if err := writeMessage(c.w, []byte(body)); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) recv() string {
	c.t.Helper()
	select {
	case m, ok := <-c.got:
		if !ok {
			c.t.Fatal("the connection closed, want a message")
		}
		return m
	case <-time.After(20 * time.Second):
		c.t.Fatal("no message within 20s")
	}
	return ""
}

// start runs serve on one end of a pipe; the fake gopls logs to the returned path.
func start(t *testing.T) (c *client, logPath string, starts *int, done chan error) {
	logPath = filepath.Join(t.TempDir(), "fake.log")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	newReal := func() (*exec.Cmd, error) {
		n++
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), "LAZYGOPLS_FAKE="+logPath)
		cmd.Stderr = os.Stderr
		return cmd, nil
	}
	a, b := net.Pipe()
	done = make(chan error, 1)
	go func() { done <- serve(b, b, newReal); b.Close() }()
	c = &client{t: t, w: a, in: bufio.NewReader(a), got: make(chan string, 10)}
	go func() {
		defer close(c.got)
		for {
			body, err := readMessage(c.in)
			if err != nil {
				return
			}
			c.got <- string(body)
		}
	}()
	t.Cleanup(func() { a.Close() })
	return c, logPath, &n, done
}

const (
	initialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":0,"workspaceFolders":[{"uri":"file:///tmp/gonb_x","name":"gonb_x"}]}}`
	initialized = `{"jsonrpc":"2.0","method":"initialized","params":{}}`
	didOpen     = `{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///tmp/gonb_x/main.go","languageId":"go","version":1,"text":"package main"}}}`
	completion  = `{"jsonrpc":"2.0","id":2,"method":"textDocument/completion","params":{"textDocument":{"uri":"file:///tmp/gonb_x/main.go"},"position":{"line":0,"character":3}}}`
)

func TestHandshakeAloneStartsNoGopls(t *testing.T) {
	c, logPath, starts, done := start(t)
	c.send(initialize)
	if got := c.recv(); !strings.Contains(got, `"id":1`) || !strings.Contains(got, `"capabilities"`) {
		t.Fatalf("initialize answered %s, want id 1 with capabilities", got)
	}
	c.send(initialized)
	c.send(`{"jsonrpc":"2.0","id":9,"method":"shutdown"}`)
	if got := c.recv(); got != `{"jsonrpc":"2.0","id":9,"result":null}` {
		t.Fatalf("shutdown answered %s", got)
	}
	c.send(`{"jsonrpc":"2.0","method":"exit"}`)
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if *starts != 0 {
		t.Errorf("gopls started %d times for a handshake, want 0", *starts)
	}
	if _, err := os.Stat(logPath); !os.IsNotExist(err) {
		t.Errorf("the fake gopls ran (its log exists: %v)", err)
	}
}

func TestFirstRequestStartsGoplsAndReplaysHandshake(t *testing.T) {
	c, logPath, starts, done := start(t)
	c.send(initialize)
	c.recv()
	c.send(initialized)
	c.send(didOpen)
	c.send(completion)
	if got := c.recv(); got != `{"jsonrpc":"2.0","id":2,"result":{"fake":"textDocument/completion"}}` {
		t.Fatalf("completion answered %s, want the fake gopls's answer (and not the replayed initialize's)", got)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"textDocument/hover","params":{}}`)
	if got := c.recv(); !strings.Contains(got, `"id":3`) || !strings.Contains(got, "hover") {
		t.Fatalf("hover answered %s", got)
	}
	c.w.(net.Conn).Close()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if *starts != 1 {
		t.Errorf("gopls started %d times, want 1", *starts)
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m message
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("fake gopls got %q: %v", line, err)
		}
		methods = append(methods, m.Method)
	}
	want := "initialize initialized textDocument/didOpen textDocument/completion textDocument/hover"
	if got := strings.Join(methods, " "); got != want {
		t.Errorf("the real gopls got %q, want %q", got, want)
	}
	if !strings.Contains(string(data), `"workspaceFolders":[{"uri":"file:///tmp/gonb_x"`) {
		t.Errorf("the replayed initialize lost the client's params:\n%s", data)
	}
}

func TestGoplsThatCannotStartAnswersAnError(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	done := make(chan error, 1)
	go func() {
		done <- serve(b, b, func() (*exec.Cmd, error) { return exec.Command("/nonexistent/gopls"), nil })
		b.Close()
	}()
	c := &client{t: t, w: a, in: bufio.NewReader(a), got: make(chan string, 10)}
	go func() {
		for {
			body, err := readMessage(c.in)
			if err != nil {
				close(c.got)
				return
			}
			c.got <- string(body)
		}
	}()
	c.send(initialize)
	c.recv()
	c.send(completion)
	if got := c.recv(); !strings.Contains(got, `"id":2`) || !strings.Contains(got, "gopls did not start") {
		t.Fatalf("completion with no gopls answered %s, want an error for id 2", got)
	}
	a.Close()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

func TestListenAddr(t *testing.T) {
	for _, tc := range []struct {
		args          []string
		network, addr string
		ok            bool
	}{
		{[]string{"-listen", "unix;/tmp/g/gopls_socket"}, "unix", "/tmp/g/gopls_socket", true},
		{[]string{"-listen=tcp;127.0.0.1:7000"}, "tcp", "127.0.0.1:7000", true},
		{[]string{"--listen", "/tmp/s"}, "unix", "/tmp/s", true},
		{[]string{"-listen", "localhost:0"}, "tcp", "localhost:0", true},
		{[]string{"version"}, "", "", false},
		{[]string{"-listen"}, "", "", false},
	} {
		n, a, ok := listenAddr(tc.args)
		if n != tc.network || a != tc.addr || ok != tc.ok {
			t.Errorf("listenAddr(%q) = %q, %q, %v; want %q, %q, %v", tc.args, n, a, ok, tc.network, tc.addr, tc.ok)
		}
	}
}

func TestReadMessage(t *testing.T) {
	for _, tc := range []struct {
		in, body, err string
	}{
		{"Content-Length: 2\r\n\r\n{}", "{}", ""},
		{"Content-Type: application/vscode-jsonrpc\r\ncontent-length: 4\r\n\r\nnull", "null", ""},
		{"", "", "EOF"},
		{"Content-Length: x\r\n\r\n", "", "bad Content-Length"},
		{"X: 1\r\n\r\n{}", "", "without Content-Length"},
		{"Content-Length: 9\r\n\r\n{}", "", "reading a 9-byte message"},
	} {
		body, err := readMessage(bufio.NewReader(strings.NewReader(tc.in)))
		if tc.err == "" && (err != nil || string(body) != tc.body) {
			t.Errorf("readMessage(%q) = %q, %v; want %q", tc.in, body, err, tc.body)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("readMessage(%q) error = %v, want one containing %q", tc.in, err, tc.err)
		}
	}
}
