// Package workspace keeps a student's copies of the course notebooks: students work on copies in a
// work folder, never on the course's own files, and a later Sync brings what is new in the course
// without overwriting their work.
//
// Sync copies every course notebook the work folder lacks, replaces a copy the student has not
// edited when the course changed it, and leaves an edited one alone, reporting it as Changed: Take
// then moves the student's version aside (into kept/) and copies the course's. "Edited" compares
// the cells' types and sources only: running a notebook (outputs, execution counts) or opening it
// (the kernel's language_info, cell ids) is not an edit. A manifest in the work folder
// (ManifestName) records, per notebook, a hash of the course version the copy was made from.
//
// `go run ./kernel up` syncs <checkout>/work from <checkout>/notebooks before it starts Jupyter;
// the classroom image calls Sync on each student's work folder from the image's notebooks.
package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"
)

// ManifestName is the manifest's file name in the work folder.
const ManifestName = ".attnbook-course.json"

// KeptDir is the folder, inside the work folder, where Take moves a student's version aside.
const KeptDir = "kept"

// Options name the two folders and what the copies' metadata should say.
type Options struct {
	Course string // the course notebooks (*.ipynb), read only
	Work   string // the student's folder: created when missing
	// LanguageInfo, when set, is written as every copy's metadata.language_info: the exact object
	// the kernel reports (GoNB's kernel_info_reply), so that opening a notebook does not change
	// it. The classic Notebook marks a notebook changed, and asks "Leave site?", when they differ.
	LanguageInfo map[string]any
}

// Status is what Sync did with one course notebook.
type Status string

const (
	Added    Status = "added"    // new in the course (or first Sync): copied
	Restored Status = "restored" // the student's copy was gone: copied again
	Updated  Status = "updated"  // the course changed it and the copy was not edited: replaced
	Changed  Status = "changed"  // the course changed it and the copy was edited: kept; see Take
	Current  Status = "current"  // nothing to do
)

// Entry is one notebook's line of a Report.
type Entry struct {
	Name   string // file name, e.g. "08_exercises.ipynb"
	Status Status
}

// Report is what a Sync did, one entry per course notebook in name order.
type Report struct {
	Work    string
	Entries []Entry
}

// Count is the number of entries with status s.
func (r *Report) Count(s Status) int {
	n := 0
	for _, e := range r.Entries {
		if e.Status == s {
			n++
		}
	}
	return n
}

// Write prints the report for a student: one line per notebook that is not current, and for a
// Changed one the command that takes the course's version (takeCmd, with %s for the notebook's
// name without .ipynb, e.g. "go run ./kernel work -take %s").
func (r *Report) Write(w io.Writer, takeCmd string) {
	if len(r.Entries) == r.Count(Current) {
		fmt.Fprintf(w, "workspace: %s: your %d notebooks are up to date with the course\n", r.Work, len(r.Entries))
		return
	}
	fmt.Fprintf(w, "workspace: %s (your copies of the course notebooks)\n", r.Work)
	for _, e := range r.Entries {
		switch e.Status {
		case Added:
			fmt.Fprintf(w, "  added     %s\n", e.Name)
		case Restored:
			fmt.Fprintf(w, "  restored  %s (it was missing)\n", e.Name)
		case Updated:
			fmt.Fprintf(w, "  updated   %s (a new version from the course; you had not edited it)\n", e.Name)
		case Changed:
			fmt.Fprintf(w, "  changed   %s: the course has a new version; yours is kept. To take the new one\n"+
				"            (yours moves to %s/): %s\n", e.Name, KeptDir, fmt.Sprintf(takeCmd, strings.TrimSuffix(e.Name, ".ipynb")))
		}
	}
}

// manifest is the work folder's record of the course versions its copies were made from.
type manifest struct {
	// Notebooks maps a notebook's file name to the CellsHash of the course version copied.
	Notebooks map[string]string `json:"notebooks"`
}

// Sync brings the work folder up to date with the course; see the package doc.
func Sync(o Options) (*Report, error) {
	names, err := courseNotebooks(o.Course)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Work, 0o755); err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	m, err := readManifest(o.Work)
	if err != nil {
		return nil, err
	}
	r := &Report{Work: o.Work}
	for _, name := range names {
		course, err := loadNotebook(filepath.Join(o.Course, name))
		if err != nil {
			return nil, err
		}
		courseHash := CellsHash(course)
		copyPath := filepath.Join(o.Work, name)
		base, known := m.Notebooks[name]
		mine, err := loadNotebook(copyPath)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		status := Current
		switch {
		case !exists && !known:
			status = Added
		case !exists:
			status = Restored
		case !known: // a file of the same name from before any manifest: adopt it when equal
			if CellsHash(mine) == courseHash {
				m.Notebooks[name] = courseHash
			} else {
				status = Changed
			}
		case base == courseHash:
		case CellsHash(mine) == base:
			status = Updated
		default:
			status = Changed
		}
		switch status {
		case Added, Restored, Updated:
			if err := writeNotebook(copyPath, course, o.LanguageInfo); err != nil {
				return nil, err
			}
			m.Notebooks[name] = courseHash
		default:
			if err := setLanguageInfo(copyPath, mine, o.LanguageInfo); err != nil {
				return nil, err
			}
		}
		r.Entries = append(r.Entries, Entry{name, status})
	}
	if err := writeManifest(o.Work, m); err != nil {
		return nil, err
	}
	return r, nil
}

// Take replaces the student's copy of a course notebook (name, with or without .ipynb) by the
// course's version, after moving the student's aside to kept/NAME.YYYYMMDD-HHMMSS.ipynb (at now).
// It returns the path the student's version was kept at ("" when there was no copy).
func Take(o Options, name string, now time.Time) (kept string, err error) {
	name = strings.TrimSuffix(filepath.Base(name), ".ipynb") + ".ipynb"
	course, err := loadNotebook(filepath.Join(o.Course, name))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			names, _ := courseNotebooks(o.Course)
			return "", fmt.Errorf("workspace.Take: %s is not a course notebook (have %s)", name, strings.Join(names, ", "))
		}
		return "", err
	}
	m, err := readManifest(o.Work)
	if err != nil {
		return "", err
	}
	copyPath := filepath.Join(o.Work, name)
	if _, err := os.Stat(copyPath); err == nil {
		kept = filepath.Join(o.Work, KeptDir, strings.TrimSuffix(name, ".ipynb")+"."+now.Format("20060102-150405")+".ipynb")
		if err := os.MkdirAll(filepath.Dir(kept), 0o755); err != nil {
			return "", err
		}
		if _, err := os.Stat(kept); err == nil {
			return "", fmt.Errorf("workspace.Take: %s already exists: try again in a second", kept)
		}
		if err := os.Rename(copyPath, kept); err != nil {
			return "", err
		}
	}
	if err := writeNotebook(copyPath, course, o.LanguageInfo); err != nil {
		return kept, err
	}
	m.Notebooks[name] = CellsHash(course)
	return kept, writeManifest(o.Work, m)
}

// courseNotebooks lists the course's *.ipynb file names, sorted.
func courseNotebooks(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: the course folder: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".ipynb") {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("workspace: no notebooks in %s", dir)
	}
	slices.Sort(names)
	return names, nil
}

// notebook is an .ipynb file as generic JSON, numbers kept as written.
type notebook map[string]any

func loadNotebook(path string) (notebook, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var nb notebook
	if err := dec.Decode(&nb); err != nil {
		return nil, fmt.Errorf("workspace: %s is not a notebook: %w", path, err)
	}
	if _, ok := nb["cells"].([]any); !ok {
		return nil, fmt.Errorf("workspace: %s is not a notebook: no cells", path)
	}
	return nb, nil
}

// CellsHash is a hash of a notebook's cell types and sources: what a student edits. Outputs,
// execution counts, cell ids and metadata do not count.
func CellsHash(nb map[string]any) string {
	h := sha256.New()
	cells, _ := nb["cells"].([]any)
	for _, c := range cells {
		cell, _ := c.(map[string]any)
		fmt.Fprintf(h, "%v\x00", cell["cell_type"])
		switch s := cell["source"].(type) {
		case string:
			io.WriteString(h, s)
		case []any:
			for _, line := range s {
				fmt.Fprint(h, line)
			}
		}
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// writeNotebook writes nb to path (atomically) with metadata.language_info set to info when given.
func writeNotebook(path string, nb notebook, info map[string]any) error {
	if info != nil {
		md, _ := nb["metadata"].(map[string]any)
		if md == nil {
			md = map[string]any{}
			nb["metadata"] = md
		}
		md["language_info"] = info
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // as Jupyter writes notebooks: sorted keys, one-space indent, UTF-8
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(nb); err != nil {
		return err
	}
	return writeAtomic(path, b.Bytes())
}

// setLanguageInfo rewrites a copy whose language_info differs from info; nothing else changes.
func setLanguageInfo(path string, nb notebook, info map[string]any) error {
	if info == nil {
		return nil
	}
	md, _ := nb["metadata"].(map[string]any)
	if md != nil && reflect.DeepEqual(normalize(md["language_info"]), normalize(info)) {
		return nil
	}
	return writeNotebook(path, nb, info)
}

// normalize round-trips v through JSON, so that values decoded with UseNumber compare equal to
// values built in Go.
func normalize(v any) any {
	data, _ := json.Marshal(v)
	var out any
	json.Unmarshal(data, &out)
	return out
}

func readManifest(work string) (*manifest, error) {
	m := &manifest{Notebooks: map[string]string{}}
	data, err := os.ReadFile(filepath.Join(work, ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("workspace: %s: %w (delete it: the next sync treats every differing copy as edited)", filepath.Join(work, ManifestName), err)
	}
	if m.Notebooks == nil {
		m.Notebooks = map[string]string{}
	}
	return m, nil
}

func writeManifest(work string, m *manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(work, ManifestName), append(data, '\n'))
}

// writeAtomic writes data to a temporary file beside path and renames it over path.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
