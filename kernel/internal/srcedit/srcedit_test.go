package srcedit_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/attnbook/attnbook/kernel/internal/srcedit"
)

// writeGoroot makes dir a toolchain source tree holding one file, src/pkg/f.go.
func writeGoroot(dir, content string) error {
	if err := os.MkdirAll(filepath.Join(dir, "src", "pkg"), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "src", "pkg", "f.go"), []byte(content), 0o644)
}

func ExampleApply() {
	dir, _ := os.MkdirTemp("", "goroot")
	defer os.RemoveAll(dir)
	if err := writeGoroot(dir, "package pkg\n\nfunc F() int { return 1 }\n"); err != nil {
		panic(err)
	}
	files, err := srcedit.Apply(dir, []srcedit.Edit{
		{File: "pkg/f.go", Anchor: "return 1", With: "return 2"},
		{File: "pkg/f.go", Anchor: "func F()", With: "func F() /* edited */"}, // on the result of the first
	})
	fmt.Printf("%s%v\n", files["pkg/f.go"], err)
	_, err = srcedit.Apply(dir, []srcedit.Edit{{File: "pkg/f.go", Anchor: "return 3", With: "return 4"}})
	fmt.Println(err)
	// Output:
	// package pkg
	//
	// func F() /* edited */ int { return 2 }
	// <nil>
	// srcedit: the toolchain's source does not match: pkg/f.go has 0 places to edit, want 1: "return 3"
}

func TestApplyMismatch(t *testing.T) {
	dir := t.TempDir()
	if err := writeGoroot(dir, "a a b\n"); err != nil {
		t.Fatal(err)
	}
	for _, e := range []srcedit.Edit{
		{File: "pkg/f.go", Anchor: "a", With: "c"}, // twice
		{File: "pkg/f.go", Anchor: "d", With: "c"}, // nowhere
	} {
		if _, err := srcedit.Apply(dir, []srcedit.Edit{e}); !errors.Is(err, srcedit.ErrMismatch) {
			t.Errorf("Apply(%q): %v, want ErrMismatch", e.Anchor, err)
		}
	}
	if _, err := srcedit.Apply(dir, []srcedit.Edit{{File: "pkg/none.go", Anchor: "a", With: "c"}}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Apply of a missing file: %v, want a not-exist error", err)
	}
	files, err := srcedit.Apply(dir, []srcedit.Edit{{File: "pkg/f.go", Anchor: "b", With: "a"}, {File: "pkg/f.go", Anchor: "a a a", With: "ok"}})
	if err != nil || string(files["pkg/f.go"]) != "ok\n" {
		t.Errorf("two edits in order: %q, %v; want \"ok\\n\"", files["pkg/f.go"], err)
	}
}
