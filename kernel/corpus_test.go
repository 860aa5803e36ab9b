package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/attnbook/attnbook/internal/nbrun"
)

// sharedCorpus is the copy of Tiny Shakespeare next to the checkout (../shared/data), which the
// download tests serve from a local server. Without it the tests skip loudly (fail under CI=true).
func sharedCorpus(t *testing.T) []byte {
	t.Helper()
	root, err := findRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "..", "shared", "data", "tinyshakespeare.txt")
	data, err := os.ReadFile(p)
	if err != nil {
		nbrun.Missing(t, "the download tests serve ../shared/data/tinyshakespeare.txt from 127.0.0.1: "+err.Error())
	}
	return data
}

// corpusServer serves good, wrong, short, cut, long and missing variants of the corpus on
// 127.0.0.1 and counts requests.
func corpusServer(t *testing.T, good []byte) (base string, hits *atomic.Int32) {
	t.Helper()
	hits = new(atomic.Int32)
	wrong := bytes.Clone(good)
	wrong[len(wrong)/2] ^= 1
	mux := http.NewServeMux()
	serve := func(body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { hits.Add(1); w.Write(body) }
	}
	mux.HandleFunc("/good", serve(good))
	mux.HandleFunc("/wrong", serve(wrong))
	mux.HandleFunc("/short", serve(good[:len(good)-1000]))
	mux.HandleFunc("/long", serve(append(bytes.Clone(good), "more"...)))
	mux.HandleFunc("/cut", func(w http.ResponseWriter, r *http.Request) {
		// Content-Length says the whole file; the connection drops halfway.
		hits.Add(1)
		w.Header().Set("Content-Length", "1115394")
		w.Write(good[:len(good)/2])
		panic(http.ErrAbortHandler)
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) { hits.Add(1); http.NotFound(w, r) })
	srv := httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return srv.URL, hits
}

// closedURL is a URL on 127.0.0.1 where nothing listens: "no network".
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/input.txt"
}

// TestFetchCorpus: each source ends in the pinned file at dest or in an error naming the source
// and the reason; dest is never written otherwise, and no temporary file is left behind.
func TestFetchCorpus(t *testing.T) {
	good := sharedCorpus(t)
	base, _ := corpusServer(t, good)
	offline := closedURL(t)
	for _, tc := range []struct {
		name    string
		sources []string
		wantErr []string // "" when the file must arrive
	}{
		{"good", []string{base + "/good"}, nil},
		{"wrong checksum", []string{base + "/wrong"}, []string{"/wrong: not the pinned file: SHA-256 "}},
		{"truncated", []string{base + "/short"}, []string{"/short: not the pinned file: 1114394 bytes, want 1115394"}},
		{"connection cut", []string{base + "/cut"}, []string{"/cut: after ", "unexpected EOF"}},
		{"too long", []string{base + "/long"}, []string{"/long: more than 1115394 bytes"}},
		{"404", []string{base + "/missing"}, []string{"/missing: HTTP 404 Not Found"}},
		{"no network", []string{offline}, []string{offline + ": ", "connection refused"}},
		{"fallback after 404", []string{base + "/missing", base + "/good"}, nil},
		{"fallback after no network", []string{offline, base + "/good"}, nil},
		{"every source fails", []string{base + "/wrong", offline}, []string{"could not download Tiny Shakespeare (", "/wrong: ", offline + ": "}},
		{"no source", nil, []string{"no source to download Tiny Shakespeare from"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			dest := filepath.Join(dir, "tinyshakespeare.txt")
			var progress bytes.Buffer
			from, err := fetchCorpus(context.Background(), http.DefaultClient, tc.sources, dest, &progress)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("fetchCorpus: %v", err)
				}
				if from != tc.sources[len(tc.sources)-1] {
					t.Errorf("came from %q, want %q", from, tc.sources[len(tc.sources)-1])
				}
				if got, _ := os.ReadFile(dest); !bytes.Equal(got, good) {
					t.Errorf("%s holds %d bytes, not the corpus", dest, len(got))
				}
				if err := checkCorpusFile(dest); err != nil {
					t.Error(err)
				}
				if !strings.Contains(progress.String(), " 25% 50% 75% 100%\n") {
					t.Errorf("progress %q lacks the quarters", progress.String())
				}
			} else {
				if err == nil {
					t.Fatalf("fetchCorpus succeeded, want an error containing %q", tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if _, err := os.Stat(dest); !os.IsNotExist(err) {
					t.Errorf("%s exists after a failed download (%v)", dest, err)
				}
			}
			if entries, _ := os.ReadDir(dir); len(entries) > map[bool]int{true: 1, false: 0}[tc.wantErr == nil] {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("the data folder holds %q: a temporary file was left behind", names)
			}
		})
	}
}

// TestSetupCorpusStep runs setup's corpus step as a user would meet it: ATTNBOOK_DATA names an
// empty folder and the sources are the local server's. A good source downloads once; a second
// run only checks; an offline run is a warning that says what to put where; a wrong file in place
// is named.
func TestSetupCorpusStep(t *testing.T) {
	good := sharedCorpus(t)
	base, hits := corpusServer(t, good)
	root, err := findRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{Root: root, Stdout: new(bytes.Buffer), Stderr: new(bytes.Buffer)}
	data := t.TempDir()
	t.Setenv("ATTNBOOK_DATA", data)
	dest := filepath.Join(data, "tinyshakespeare.txt")

	t.Setenv(corpusSourcesEnv, closedURL(t))
	did, _, err := ensureCorpus(context.Background(), e)
	if did != "warning" || err == nil {
		t.Fatalf("offline: did %q, err %v; want a warning", did, err)
	}
	for _, w := range []string{"Notebooks 07 and 10 need Tiny Shakespeare", "(1115394 bytes, SHA-256 86c4e6aa9db7c042…) to\n          " + dest,
		"or set ATTNBOOK_DATA to a folder holding it as tinyshakespeare.txt", "curl -fL -o '" + dest + "' https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("offline message lacks %q:\n%v", w, err)
		}
	}

	t.Setenv(corpusSourcesEnv, base+"/missing, "+base+"/good")
	did, detail, err := ensureCorpus(context.Background(), e)
	if did != "downloaded" || err != nil || !strings.Contains(detail, base+"/good") {
		t.Fatalf("download: did %q detail %q err %v", did, detail, err)
	}
	n := hits.Load()
	if did, _, err := ensureCorpus(context.Background(), e); did != "ok" || err != nil || hits.Load() != n {
		t.Errorf("second run: did %q err %v, %d more requests; want ok and none", did, err, hits.Load()-n)
	}

	if err := os.WriteFile(dest, good[:100], 0o644); err != nil {
		t.Fatal(err)
	}
	did, _, err = ensureCorpus(context.Background(), e)
	if did != "warning" || err == nil || !strings.Contains(err.Error(), dest+" is not Tiny Shakespeare as pinned (100 bytes, want 1115394)") {
		t.Errorf("wrong file in place: did %q err %v", did, err)
	}
}

// TestCorpusPinMatchesTheImage: docker/Dockerfile bakes the same file into the image.
func TestCorpusPinMatchesTheImage(t *testing.T) {
	root, err := findRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	df, err := os.ReadFile(filepath.Join(root, "docker", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]string{"SHAKESPEARE_SHA256": corpusSHA256, "SHAKESPEARE_SIZE": "1115394"} {
		m := regexp.MustCompile(`(?m)^ARG ` + arg + `=(\S+)$`).FindSubmatch(df)
		if m == nil || string(m[1]) != want {
			t.Errorf("docker/Dockerfile: ARG %s = %q, want %q (kernel/corpus.go's pin)", arg, m, want)
		}
	}
	for _, src := range corpusSources {
		if !strings.Contains(string(df), src) {
			t.Errorf("docker/Dockerfile lacks the source %s", src)
		}
	}
}
