package workspace_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/attnbook/attnbook/internal/workspace"
)

// A course of one notebook, a first Sync (the copy), an edit by the student, a new version in
// the course: the second Sync keeps the student's copy and says how to take the new one.
func Example() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	course, work := filepath.Join(dir, "notebooks"), filepath.Join(dir, "work")
	os.MkdirAll(course, 0o755)
	nb := func(src string) []byte {
		return []byte(`{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": ["` + src + `"]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}`)
	}
	os.WriteFile(filepath.Join(course, "01_scores.ipynb"), nb("x := 1"), 0o644)
	o := workspace.Options{Course: course, Work: work}

	r, _ := workspace.Sync(o)
	r.Work = "work/"
	r.Write(os.Stdout, "go run ./kernel work -take %s")

	os.WriteFile(filepath.Join(work, "01_scores.ipynb"), nb("x := 2 // mine"), 0o644)
	os.WriteFile(filepath.Join(course, "01_scores.ipynb"), nb("x := 1 // fixed"), 0o644)
	r, _ = workspace.Sync(o)
	r.Work = "work/"
	r.Write(os.Stdout, "go run ./kernel work -take %s")
	fmt.Println(r.Count(workspace.Changed), "changed")
	// Output:
	// workspace: work/ (your copies of the course notebooks)
	//   added     01_scores.ipynb
	// workspace: work/ (your copies of the course notebooks)
	//   changed   01_scores.ipynb: the course has a new version; yours is kept. To take the new one
	//             (yours moves to kept/): go run ./kernel work -take 01_scores
	// 1 changed
}
