package workspace

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nbJSON is a notebook with one code cell per source, as the course commits them.
func nbJSON(sources ...string) string {
	var cells []any
	for _, s := range sources {
		cells = append(cells, map[string]any{"cell_type": "code", "execution_count": nil, "metadata": map[string]any{},
			"outputs": []any{}, "source": strings.SplitAfter(s, "\n")})
	}
	nb := map[string]any{"cells": cells, "nbformat": 4, "nbformat_minor": 5,
		"metadata": map[string]any{"kernelspec": map[string]any{"name": "attnbook", "display_name": "Go (attnbook)", "language": "go"},
			"language_info": map[string]any{"name": "go", "file_extension": ".go", "mimetype": "text/x-go"}}}
	data, _ := json.MarshalIndent(nb, "", " ")
	return string(data) + "\n"
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// sources is the concatenated source of a notebook file's cells.
func sources(t *testing.T, path string) string {
	t.Helper()
	nb, err := loadNotebook(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range nb["cells"].([]any) {
		for _, l := range c.(map[string]any)["source"].([]any) {
			b.WriteString(l.(string))
		}
		b.WriteString("|")
	}
	return b.String()
}

func statuses(r *Report) map[string]Status {
	m := map[string]Status{}
	for _, e := range r.Entries {
		m[e.Name] = e.Status
	}
	return m
}

var kernelInfo = map[string]any{"name": "go", "version": "go1.26.8 X:simd", "mimetype": "text/x-go", "file_extension": ".go",
	"pygments_lexer": "", "codemirror_mode": "", "nbconvert_exporter": ""}

// TestSyncLifecycle plays a term: the first sync copies; the student edits one notebook and runs
// another; the course adds a notebook and changes three (one edited, one run, one untouched); a
// deleted copy comes back; Take keeps the student's version aside. The course folder is never
// written.
func TestSyncLifecycle(t *testing.T) {
	dir := t.TempDir()
	course, work := filepath.Join(dir, "notebooks"), filepath.Join(dir, "work")
	write(t, filepath.Join(course, "00_start.ipynb"), nbJSON("fmt.Println(1)"))
	write(t, filepath.Join(course, "01_scores.ipynb"), nbJSON("a := 1", "%%\nfmt.Println(a)"))
	write(t, filepath.Join(course, "02_weights.ipynb"), nbJSON("w := 2"))
	write(t, filepath.Join(course, "README.md"), "not a notebook")
	o := Options{Course: course, Work: work, LanguageInfo: kernelInfo}
	snapshot := func() map[string]string {
		m := map[string]string{}
		entries, _ := os.ReadDir(course)
		for _, e := range entries {
			m[e.Name()] = read(t, filepath.Join(course, e.Name()))
		}
		return m
	}

	r, err := Sync(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(r); len(got) != 3 || got["00_start.ipynb"] != Added || got["01_scores.ipynb"] != Added || got["02_weights.ipynb"] != Added {
		t.Fatalf("first sync: %v, want 3 added", got)
	}
	copy01 := read(t, filepath.Join(work, "01_scores.ipynb"))
	if !strings.Contains(copy01, `"version": "go1.26.8 X:simd"`) || !strings.Contains(copy01, `"pygments_lexer": ""`) {
		t.Errorf("copy's language_info is not the kernel's:\n%s", copy01)
	}
	if r, _ := Sync(o); r.Count(Current) != 3 {
		t.Errorf("second sync: %v, want all current", statuses(r))
	}
	if again := read(t, filepath.Join(work, "01_scores.ipynb")); again != copy01 {
		t.Error("a sync with nothing to do rewrote a copy")
	}
	before := snapshot()

	// The student edits 01 and runs 02 (outputs, execution counts, another language_info).
	write(t, filepath.Join(work, "01_scores.ipynb"), strings.Replace(copy01, "a := 1", "a := 42 // mine", 1))
	ran := strings.Replace(read(t, filepath.Join(work, "02_weights.ipynb")), `"outputs": []`, `"outputs": [{"name": "stdout", "output_type": "stream", "text": ["2\n"]}]`, 1)
	ran = strings.Replace(ran, `"execution_count": null`, `"execution_count": 3`, 1)
	write(t, filepath.Join(work, "02_weights.ipynb"), strings.Replace(ran, "go1.26.8 X:simd", "go1.25.0", 1))
	// The course changes 00 (untouched), 01 (edited) and 02 (run), and adds 03.
	write(t, filepath.Join(course, "00_start.ipynb"), nbJSON("fmt.Println(1, \"new\")"))
	write(t, filepath.Join(course, "01_scores.ipynb"), nbJSON("a := 1", "%%\nfmt.Println(a, \"fixed\")"))
	write(t, filepath.Join(course, "02_weights.ipynb"), nbJSON("w := 2.5"))
	write(t, filepath.Join(course, "03_mask.ipynb"), nbJSON("m := 3"))
	before = snapshot()

	r, err = Sync(o)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{"00_start.ipynb": Updated, "01_scores.ipynb": Changed, "02_weights.ipynb": Updated, "03_mask.ipynb": Added}
	for name, s := range want {
		if statuses(r)[name] != s {
			t.Errorf("after the course changed: %s is %q, want %q", name, statuses(r)[name], s)
		}
	}
	if got := sources(t, filepath.Join(work, "01_scores.ipynb")); !strings.Contains(got, "a := 42 // mine") {
		t.Errorf("the student's edit is gone: %q", got)
	}
	if got := sources(t, filepath.Join(work, "00_start.ipynb")); got != "fmt.Println(1, \"new\")|" {
		t.Errorf("00 not updated: %q", got)
	}
	var b bytes.Buffer
	r.Write(&b, "go run ./kernel work -take %s")
	for _, w := range []string{"  added     03_mask.ipynb\n", "  updated   00_start.ipynb (a new version from the course; you had not edited it)\n",
		"  changed   01_scores.ipynb: the course has a new version; yours is kept. To take the new one\n            (yours moves to kept/): go run ./kernel work -take 01_scores\n"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("report lacks %q:\n%s", w, b.String())
		}
	}
	if strings.Contains(b.String(), "current") {
		t.Errorf("report lists current notebooks:\n%s", b.String())
	}
	// The run copy's language_info is the kernel's again; the edited one stays changed.
	if r, _ := Sync(o); statuses(r)["01_scores.ipynb"] != Changed || r.Count(Current) != 3 {
		t.Errorf("third sync: %v", statuses(r))
	}

	// Take: the student's version moves to kept/, the course's arrives, and it is current after.
	now := time.Date(2026, 11, 25, 14, 5, 6, 0, time.UTC)
	kept, err := Take(o, "01_scores", now)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(work, "kept", "01_scores.20261125-140506.ipynb"); kept != want {
		t.Errorf("kept at %q, want %q", kept, want)
	}
	if got := sources(t, kept); !strings.Contains(got, "a := 42 // mine") {
		t.Errorf("kept copy lost the edit: %q", got)
	}
	if got := sources(t, filepath.Join(work, "01_scores.ipynb")); !strings.Contains(got, "fixed") {
		t.Errorf("took %q, want the course's version", got)
	}
	if r, _ := Sync(o); r.Count(Current) != 4 {
		t.Errorf("after Take: %v, want all current", statuses(r))
	}
	if _, err := Take(o, "99_nope", now); err == nil || !strings.Contains(err.Error(), "99_nope.ipynb is not a course notebook (have 00_start.ipynb, 01_scores.ipynb") {
		t.Errorf("Take of an unknown notebook: %v", err)
	}

	// A deleted copy comes back.
	os.Remove(filepath.Join(work, "03_mask.ipynb"))
	if r, _ := Sync(o); statuses(r)["03_mask.ipynb"] != Restored {
		t.Errorf("deleted copy: %v, want restored", statuses(r))
	}
	for name, content := range before {
		if read(t, filepath.Join(course, name)) != content {
			t.Errorf("the course's %s was written", name)
		}
	}
}

// TestSyncAdoptsExistingFiles: a work folder made before the manifest (or by hand) keeps its
// files; equal ones count as copies, differing ones as changed.
func TestSyncAdoptsExistingFiles(t *testing.T) {
	dir := t.TempDir()
	course, work := filepath.Join(dir, "c"), filepath.Join(dir, "w")
	write(t, filepath.Join(course, "00_a.ipynb"), nbJSON("x := 1"))
	write(t, filepath.Join(course, "01_b.ipynb"), nbJSON("y := 2"))
	write(t, filepath.Join(work, "00_a.ipynb"), nbJSON("x := 1"))
	write(t, filepath.Join(work, "01_b.ipynb"), nbJSON("y := 3 // mine"))
	r, err := Sync(Options{Course: course, Work: work})
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(r); got["00_a.ipynb"] != Current || got["01_b.ipynb"] != Changed {
		t.Errorf("got %v", got)
	}
	if got := sources(t, filepath.Join(work, "01_b.ipynb")); got != "y := 3 // mine|" {
		t.Errorf("the student's file was replaced: %q", got)
	}
}

func TestSyncBadInput(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "c", "00_a.ipynb"), "{not json")
	write(t, filepath.Join(dir, "w2", ManifestName), "[]")
	write(t, filepath.Join(dir, "c2", "00_a.ipynb"), nbJSON("x"))
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"no course folder", Options{Course: filepath.Join(dir, "none"), Work: filepath.Join(dir, "w")}, "workspace: the course folder: "},
		{"empty course", Options{Course: filepath.Join(dir, "w"), Work: filepath.Join(dir, "w")}, "workspace: no notebooks in "},
		{"broken notebook", Options{Course: filepath.Join(dir, "c"), Work: filepath.Join(dir, "w")}, "00_a.ipynb is not a notebook: "},
		{"broken manifest", Options{Course: filepath.Join(dir, "c2"), Work: filepath.Join(dir, "w2")}, ManifestName + ": json: cannot unmarshal"},
	} {
		os.MkdirAll(filepath.Join(dir, "w"), 0o755)
		if _, err := Sync(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Sync error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestCellsHashIgnoresRunsAndMetadata(t *testing.T) {
	a := map[string]any{"cells": []any{map[string]any{"cell_type": "code", "source": []any{"x := 1\n", "y"}, "outputs": []any{}}}}
	b := map[string]any{"metadata": map[string]any{"x": 1}, "cells": []any{map[string]any{"cell_type": "code", "source": "x := 1\ny", "id": "abc",
		"execution_count": 7, "outputs": []any{map[string]any{"output_type": "stream", "text": "1"}}}}}
	c := map[string]any{"cells": []any{map[string]any{"cell_type": "markdown", "source": "x := 1\ny"}}}
	if CellsHash(a) != CellsHash(b) {
		t.Error("outputs, ids or metadata changed the hash")
	}
	if CellsHash(a) == CellsHash(c) {
		t.Error("a cell's type did not change the hash")
	}
}
