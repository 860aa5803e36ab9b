package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/attnbook/attnbook/pkg/gpt"
)

// The Tiny Shakespeare corpus that notebooks 07 and 10 read: karpathy/char-rnn's
// data/tinyshakespeare/input.txt, pinned by size and SHA-256. docker/Dockerfile pins the same file
// (SHAKESPEARE_SHA256, SHAKESPEARE_SIZE; a test checks they agree).
const (
	corpusSHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
	corpusSize   = 1115394
	// corpusSourcesEnv replaces corpusSources with a comma-separated list of URLs (a mirror, or a
	// local server: the tests use one on 127.0.0.1).
	corpusSourcesEnv = "ATTNBOOK_CORPUS_URLS"
)

// corpusSources are tried in order: GitHub's raw file, then jsDelivr's mirror of the same
// repository (another host and CDN, the same bytes; the pin checks them).
var corpusSources = []string{
	gpt.CorpusURL,
	"https://cdn.jsdelivr.net/gh/karpathy/char-rnn@master/data/tinyshakespeare/input.txt",
}

// corpusClient gives up quickly where there is no network (a firewall that drops packets would
// otherwise hold setup for minutes); the proxy comes from the environment, as curl's would.
var corpusClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 15 * time.Second}).DialContext,
	TLSHandshakeTimeout:   15 * time.Second,
	ResponseHeaderTimeout: 30 * time.Second,
}}

// corpusDest is where setup saves the corpus: $ATTNBOOK_DATA when set, else the checkout's data/
// folder (git-ignored; pkg/gpt and notebook 07 look there).
func corpusDest(root string) string {
	if dir := os.Getenv("ATTNBOOK_DATA"); dir != "" {
		return filepath.Join(dir, gpt.CorpusName)
	}
	return filepath.Join(root, "data", gpt.CorpusName)
}

// checkCorpusFile reports whether path holds the pinned corpus: nil when it does, an error that
// says what differs otherwise (fs.ErrNotExist when there is no file).
func checkCorpusFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return err
	}
	return checkPin(n, h.Sum(nil))
}

func checkPin(n int64, sum []byte) error {
	if n != corpusSize {
		return fmt.Errorf("%d bytes, want %d", n, corpusSize)
	}
	if got := hex.EncodeToString(sum); got != corpusSHA256 {
		return fmt.Errorf("SHA-256 %s, want %s", got, corpusSHA256)
	}
	return nil
}

// ensureCorpus is setup's corpus step: nothing when a place notebook 07 reads from already holds
// the pinned file; else a download into corpusDest. Failing is a warning (notebooks 00–06 and 08–09
// need no corpus) whose text says exactly what to put where.
func ensureCorpus(ctx context.Context, e *env) (string, string, error) {
	for _, p := range gpt.CorpusPlaces(e.Root) {
		switch err := checkCorpusFile(p); {
		case err == nil:
			return "ok", e.rel(p), nil
		case !errors.Is(err, os.ErrNotExist):
			return "warning", "", fmt.Errorf("%w: %s is not Tiny Shakespeare as pinned (%v): notebooks 07 and 10 would read it; delete it and run go run ./kernel setup again", errWarning, p, err)
		}
	}
	sources := corpusSources
	if s := os.Getenv(corpusSourcesEnv); s != "" {
		sources = splitComma(s)
	}
	dest := corpusDest(e.Root)
	from, err := fetchCorpus(ctx, corpusClient, sources, dest, e.Stdout)
	if err != nil {
		return "warning", "", fmt.Errorf("%w: %v\n%s", errWarning, err, corpusHelp(dest))
	}
	return "downloaded", fmt.Sprintf("%s (from %s)", e.rel(dest), from), nil
}

// corpusHelp says what to put where when the corpus cannot be downloaded.
func corpusHelp(dest string) string {
	return fmt.Sprintf(`      Notebooks 07 and 10 need Tiny Shakespeare; 00-06, 08 and 09 run without it. Offline, copy
      karpathy/char-rnn's data/tinyshakespeare/input.txt (%d bytes, SHA-256 %s…) to
          %s
      or set ATTNBOOK_DATA to a folder holding it as %s; then run go run ./kernel setup again.
      With internet: curl -fL -o '%s' %s`, corpusSize, corpusSHA256[:16], dest, gpt.CorpusName, dest, gpt.CorpusURL)
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// fetchCorpus downloads the pinned corpus from the first source that serves it and saves it as
// dest, atomically: the bytes go to a temporary file beside dest, which is renamed to dest only
// once its size and SHA-256 match the pin, so dest is never half written. It returns the source
// used; when every source fails, the error names each with its reason. Progress goes to progress.
func fetchCorpus(ctx context.Context, client *http.Client, sources []string, dest string, progress io.Writer) (string, error) {
	if len(sources) == 0 {
		return "", errors.New("no source to download Tiny Shakespeare from")
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return "", fmt.Errorf("cannot create the data folder: %w", err)
	}
	var reasons []string
	for _, src := range sources {
		err := fetchOne(ctx, client, src, dest, progress)
		if err == nil {
			return src, nil
		}
		fmt.Fprintf(progress, "      %s: %v\n", src, err)
		reasons = append(reasons, fmt.Sprintf("%s: %v", src, err))
		if ctx.Err() != nil {
			break
		}
	}
	return "", fmt.Errorf("could not download Tiny Shakespeare (%s)", strings.Join(reasons, "; "))
}

func fetchOne(ctx context.Context, client *http.Client, src, dest string, progress io.Writer) (err error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %s", resp.Status)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".*.part")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	fmt.Fprintf(progress, "      downloading %s (%.1f MB):", src, float64(corpusSize)/1e6)
	pw := &percentWriter{w: progress, total: corpusSize}
	// One byte more than the pin: a longer file is caught without reading it all.
	n, err := io.Copy(io.MultiWriter(tmp, h, pw), io.LimitReader(resp.Body, corpusSize+1))
	fmt.Fprintln(progress)
	if err != nil {
		return fmt.Errorf("after %d bytes: %w", n, err)
	}
	if err := checkPin(n, h.Sum(nil)); err != nil {
		if n > corpusSize {
			return fmt.Errorf("more than %d bytes: not the pinned file", corpusSize)
		}
		return fmt.Errorf("not the pinned file: %v", err)
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dest)
}

// percentWriter prints " 25%", " 50%", … as bytes pass.
type percentWriter struct {
	w           io.Writer
	total, done int64
	shown       int64 // last quarter printed
}

func (p *percentWriter) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	for q := p.shown + 1; q <= 4 && p.done*4 >= q*p.total; q++ {
		fmt.Fprintf(p.w, " %d%%", q*25)
		p.shown = q
	}
	return len(b), nil
}
