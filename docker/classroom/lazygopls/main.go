// Command lazygopls stands in for gopls in the classroom hub's kernels, so code completion costs a
// student nothing until they ask for it.
//
// GoNB starts `gopls -listen unix;SOCKET` with every kernel and connects to it at once; gopls then
// loads the kernel's module (GoMLX and the course's packages) whether or not anyone ever presses
// Tab: in the 10-student class that was about 3/4 of a kernel's memory (100–180 MiB) and several
// CPU-seconds per student at the start of a class. lazygopls listens on that socket instead and
// answers the handshake (initialize, initialized, shutdown, exit) itself; the first other message
// (a completion, hover or definition request, or a file opened for one) starts the real gopls on
// its standard input and output, replays the handshake to it, and from then on passes every
// message both ways unchanged. A kernel whose student never asks for completion never starts
// gopls; the first completion in a kernel waits for gopls to load the module (a few seconds).
//
//	lazygopls -listen unix;/tmp/gonb_x/gopls_socket    (what GoNB runs; the real gopls starts lazily)
//	lazygopls version                                   (any other arguments: the real gopls runs)
//
// The real gopls is $LAZYGOPLS_REAL (default /usr/local/lib/attnbook-classroom/gopls). It dies with
// lazygopls (its standard input closes; on Linux also the parent-death signal).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// defaultReal is where the classroom image keeps the real gopls.
const defaultReal = "/usr/local/lib/attnbook-classroom/gopls"

// replayID is the id of the initialize request lazygopls replays to the real gopls; its answer
// is not passed on (the client had its answer from lazygopls).
const replayID = `"lazygopls-initialize"`

func main() {
	log.SetFlags(0)
	log.SetPrefix("lazygopls: ")
	real := os.Getenv("LAZYGOPLS_REAL")
	if real == "" {
		real = defaultReal
	}
	network, addr, ok := listenAddr(os.Args[1:])
	if !ok {
		// Not a server start (gopls version, gopls check ...): be the real gopls.
		err := syscall.Exec(real, append([]string{real}, os.Args[1:]...), os.Environ())
		log.Fatalf("exec %s: %v", real, err)
	}
	if network == "unix" {
		_ = os.Remove(addr) // a stale socket of an earlier run
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		log.Fatalf("listen %s %s: %v", network, addr, err)
	}
	for {
		conn, err := ln.Accept()
		if err != nil {
			log.Fatalf("accept: %v", err)
		}
		go func() {
			defer conn.Close()
			if err := serve(conn, conn, func() (*exec.Cmd, error) { return startReal(real) }); err != nil {
				log.Print(err)
			}
		}()
	}
}

// listenAddr reads gopls's `-listen ADDR` (or -listen=ADDR) with ADDR as GoNB writes it:
// "unix;PATH", "tcp;HOST:PORT", a path, or HOST:PORT.
func listenAddr(args []string) (network, addr string, ok bool) {
	for i, a := range args {
		switch {
		case a == "-listen" || a == "--listen":
			if i+1 < len(args) {
				addr = args[i+1]
			}
		case strings.HasPrefix(a, "-listen=") || strings.HasPrefix(a, "--listen="):
			addr = a[strings.Index(a, "=")+1:]
		}
	}
	switch {
	case addr == "":
		return "", "", false
	case strings.HasPrefix(addr, "unix;"):
		return "unix", addr[len("unix;"):], true
	case strings.HasPrefix(addr, "tcp;"):
		return "tcp", addr[len("tcp;"):], true
	case strings.HasPrefix(addr, "/"):
		return "unix", addr, true
	}
	return "tcp", addr, true
}

// startReal starts the real gopls serving LSP on its standard input and output.
func startReal(real string) (*exec.Cmd, error) {
	cmd := exec.Command(real)
	cmd.Stderr = os.Stderr
	setParentDeathSignal(cmd)
	return cmd, nil
}

// message is the part of an LSP message lazygopls looks at.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
}

// serve speaks LSP with one client on r and w until the client closes the connection or sends
// exit. newReal makes (does not start) the real gopls command, the first time it is needed.
func serve(r io.Reader, w io.Writer, newReal func() (*exec.Cmd, error)) error {
	in := bufio.NewReader(r)
	var wmu sync.Mutex // one writer to the client at a time
	write := func(body []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		return writeMessage(w, body)
	}
	var (
		initParams  json.RawMessage // the client's initialize params, replayed to the real gopls
		initialized []byte          // the client's initialized notification, replayed too
		toReal      io.WriteCloser  // the real gopls's standard input, once started
		realCmd     *exec.Cmd
		realDone    chan error
	)
	defer func() {
		if toReal != nil {
			toReal.Close() // gopls exits at the end of its input
			if err := <-realDone; err != nil {
				log.Printf("gopls: %v", err)
			}
		}
	}()
	for {
		body, err := readMessage(in)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if toReal != nil {
			if err := writeMessage(toReal, body); err != nil {
				return fmt.Errorf("writing to gopls: %w", err)
			}
			continue
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			return fmt.Errorf("a message that is not JSON: %w", err)
		}
		switch m.Method {
		case "initialize":
			var req struct {
				Params json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(body, &req); err != nil {
				return fmt.Errorf("initialize: %w", err)
			}
			initParams = req.Params
			if err := write(response(m.ID, initializeResult)); err != nil {
				return err
			}
		case "initialized":
			initialized = body
		case "shutdown":
			if err := write(response(m.ID, "null")); err != nil {
				return err
			}
		case "exit":
			return nil
		case "$/cancelRequest", "$/setTrace", "workspace/didChangeConfiguration":
			// Nothing to cancel or configure yet.
		default:
			cmd, err := newReal()
			if err == nil {
				toReal, err = cmd.StdinPipe()
			}
			var fromReal io.ReadCloser
			if err == nil {
				fromReal, err = cmd.StdoutPipe()
			}
			if err == nil {
				err = cmd.Start()
			}
			if err != nil {
				toReal = nil
				if len(m.ID) > 0 { // a request: tell the client, and stay the stand-in
					if werr := write(errorResponse(m.ID, "gopls did not start: "+err.Error())); werr != nil {
						return werr
					}
				}
				log.Printf("starting gopls: %v", err)
				continue
			}
			realCmd = cmd
			realDone = make(chan error, 1)
			go func() {
				err := copyFromReal(fromReal, write)
				if werr := realCmd.Wait(); err == nil {
					err = werr
				}
				realDone <- err
			}()
			replay := [][]byte{request(replayID, "initialize", initParams)}
			if initialized != nil {
				replay = append(replay, initialized)
			}
			replay = append(replay, body)
			for _, b := range replay {
				if err := writeMessage(toReal, b); err != nil {
					return fmt.Errorf("writing to gopls: %w", err)
				}
			}
		}
	}
}

// copyFromReal passes the real gopls's messages to the client, less the answer to the replayed
// initialize.
func copyFromReal(r io.Reader, write func([]byte) error) error {
	in := bufio.NewReader(r)
	for {
		body, err := readMessage(in)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var m message
		if json.Unmarshal(body, &m) == nil && m.Method == "" && string(m.ID) == replayID {
			continue
		}
		if err := write(body); err != nil {
			return err
		}
	}
}

// initializeResult is what lazygopls answers to initialize: the capabilities GoNB uses (it reads
// none of them today), the ones gopls will have.
const initializeResult = `{"capabilities":{"textDocumentSync":{"openClose":true,"change":1},` +
	`"completionProvider":{"triggerCharacters":["."]},"hoverProvider":true,"definitionProvider":true},` +
	`"serverInfo":{"name":"gopls (lazygopls: started at the first request)"}}`

func response(id json.RawMessage, result string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`)
}

func errorResponse(id json.RawMessage, msg string) []byte {
	q, _ := json.Marshal(msg)
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32603,"message":` + string(q) + `}}`)
}

func request(id, method string, params json.RawMessage) []byte {
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	return []byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + string(params) + `}`)
}

// readMessage reads one LSP message (base protocol: headers, a blank line, Content-Length bytes
// of JSON) and returns its body. io.EOF only when the stream ends between messages.
func readMessage(r *bufio.Reader) ([]byte, error) {
	length := -1
	for first := true; ; first = false {
		line, err := r.ReadString('\n')
		if err == io.EOF && first && line == "" {
			return nil, io.EOF
		}
		if err != nil {
			return nil, fmt.Errorf("reading a message header: %w", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("bad Content-Length %q", v)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("a message without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("reading a %d-byte message: %w", length, err)
	}
	return body, nil
}

// writeMessage writes body as one LSP message.
func writeMessage(w io.Writer, body []byte) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	_, err := w.Write(b.Bytes())
	return err
}
