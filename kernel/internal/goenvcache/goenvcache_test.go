package goenvcache

import (
	"os"
	"path/filepath"
	"testing"
)

func TestGoEnvRead(t *testing.T) {
	args := []string{"env", "-json", "GOMOD", "TERM"}
	for name, want := range map[string]bool{
		"GOFLAGS": true, "GOWORK": true, "CGO_CFLAGS": true, "HOME": true, "CC": true, "TERM": true,
		"PWD": false, "HYPERFINE_RANDOMIZED_ENVIRONMENT_OFFSET": false, "LANG": false,
	} {
		if got := GoEnvRead(name, args); got != want {
			t.Errorf("GoEnvRead(%q, %q) = %v, want %v", name, args, got, want)
		}
	}
}

// TestCacheKey: the key stays while nothing `go env` reads changes, and moves with the names
// asked, a variable it reads, the go command on $PATH, a go.work above the module and the go env
// file; Cached answers only under the key stored.
func TestCacheKey(t *testing.T) {
	tmp := t.TempDir()
	mod := filepath.Join(tmp, "work", "gonb_test")
	bin := filepath.Join(tmp, "bin")
	for _, d := range []string{mod, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(name, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(mod, "go.mod"), "module gonb_test\n\ngo 1.22\n")
	write(filepath.Join(bin, "go"), "#!/bin/sh\n")
	t.Chdir(mod)
	t.Setenv("PATH", bin)
	t.Setenv("GOENV", filepath.Join(tmp, "goenv"))
	args := []string{"env", "-json", "GOMOD", "GOFLAGS"}
	key := func() string {
		t.Helper()
		k, err := CacheKey(args)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	first := key()
	if key() != first {
		t.Fatal("CacheKey changed with nothing changed")
	}
	if _, ok := Cached(first); ok {
		t.Error("Cached answered with no cache file")
	}
	write(CacheFile, first+"\n{\"GOMOD\": \"x\"}\n")
	if out, ok := Cached(first); !ok || string(out) != "{\"GOMOD\": \"x\"}\n" {
		t.Errorf("Cached(stored key) = %q, %v", out, ok)
	}
	seen := map[string]string{first: "first"}
	moved := func(what string) {
		t.Helper()
		k := key()
		if prev, ok := seen[k]; ok {
			t.Errorf("%s: the key is the one of %s", what, prev)
		}
		if _, ok := Cached(k); ok {
			t.Errorf("%s: Cached answered under a new key", what)
		}
		seen[k] = what
	}
	args = []string{"env", "-json", "GOMOD"}
	moved("other names")
	t.Setenv("GOFLAGS", "-mod=mod")
	moved("GOFLAGS set")
	t.Setenv("LANG", "C")
	if _, ok := seen[key()]; !ok {
		t.Error("LANG, which go env does not read, moved the key")
	}
	write(filepath.Join(bin, "go"), "#!/bin/sh\n# another toolchain\n")
	moved("another go command")
	write(filepath.Join(tmp, "work", "go.work"), "go 1.22\n\nuse ./gonb_test\n")
	moved("a go.work above")
	write(filepath.Join(tmp, "goenv"), "GOFLAGS=-mod=vendor\n")
	moved("go env -w")
}
