// Package srcedit changes a Go toolchain's source (or a module's) by anchored edits: each replaces
// the one occurrence of a piece of text in a file under GOROOT/src. An edit written for one
// release fails, and says where, on a source it no longer fits, rather than landing in the wrong
// place.
package srcedit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrMismatch says an edit's anchor does not occur exactly once in its file: the source is not
// the one the edit was written for.
var ErrMismatch = errors.New("srcedit: the toolchain's source does not match")

// An Edit replaces the one occurrence of Anchor in File (a path under GOROOT/src) with With.
type Edit struct{ File, Anchor, With string }

// Apply returns the files edits change in the toolchain at goroot, by path under goroot/src,
// each edit applied in order to the result of the ones before it.
func Apply(goroot string, edits []Edit) (map[string][]byte, error) {
	return ApplyTree(filepath.Join(goroot, "src"), edits)
}

// ApplyTree is Apply on another source tree, a module's directory: each File is a path under root.
func ApplyTree(root string, edits []Edit) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, e := range edits {
		src, ok := files[e.File]
		if !ok {
			var err error
			if src, err = os.ReadFile(filepath.Join(root, e.File)); err != nil {
				return nil, err
			}
		}
		if n := bytes.Count(src, []byte(e.Anchor)); n != 1 {
			return nil, fmt.Errorf("%w: %s has %d places to edit, want 1: %.50q", ErrMismatch, e.File, n, e.Anchor)
		}
		files[e.File] = bytes.Replace(src, []byte(e.Anchor), []byte(e.With), 1)
	}
	return files, nil
}
