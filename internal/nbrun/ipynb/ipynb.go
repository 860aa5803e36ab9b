// Package ipynb reads Jupyter notebooks (nbformat 4): enough to validate a file before running it,
// to check that committed notebooks carry no outputs, and to read what an executed cell printed.
//
// See https://nbformat.readthedocs.io/en/latest/format_description.html.
package ipynb

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Notebook is the part of an .ipynb file attnbook reads.
type Notebook struct {
	Cells         []Cell         `json:"cells"`
	Metadata      map[string]any `json:"metadata"`
	NBFormat      int            `json:"nbformat"`
	NBFormatMinor int            `json:"nbformat_minor"`
}

// Cell is one notebook cell. Outputs and ExecutionCount exist only for code cells.
type Cell struct {
	ID             string         `json:"id,omitempty"`
	CellType       string         `json:"cell_type"` // "code", "markdown" or "raw"
	Source         Text           `json:"source"`
	Metadata       map[string]any `json:"metadata"`
	Outputs        []Output       `json:"outputs,omitempty"`
	ExecutionCount *int           `json:"execution_count,omitempty"`
}

// FirstLine is the first non-blank line of the cell's source, trimmed: how errors name a cell.
func (c Cell) FirstLine() string {
	for _, line := range strings.Split(string(c.Source), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

// Output is one output of a code cell: a "stream" (Name is "stdout" or "stderr", Text the text),
// "display_data" or "execute_result" (Data by MIME type) or "error" (EName, EValue, Traceback).
type Output struct {
	OutputType string                     `json:"output_type"`
	Name       string                     `json:"name,omitempty"`
	Text       Text                       `json:"text,omitempty"`
	Data       map[string]json.RawMessage `json:"data,omitempty"`
	EName      string                     `json:"ename,omitempty"`
	EValue     string                     `json:"evalue,omitempty"`
	Traceback  []string                   `json:"traceback,omitempty"`
}

// DataText is the output's data for one MIME type ("text/html", "image/svg+xml", "text/plain", …)
// as text, and whether the output has it.
func (o Output) DataText(mime string) (string, bool) {
	raw, ok := o.Data[mime]
	if !ok {
		return "", false
	}
	var t Text
	if err := json.Unmarshal(raw, &t); err != nil {
		return string(raw), true // e.g. application/json holds an object
	}
	return string(t), true
}

// Text is a multi-line string that nbformat stores either as one string or as a list of lines.
type Text string

// UnmarshalJSON accepts both a string and a list of strings.
func (t *Text) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = Text(s)
		return nil
	}
	var lines []string
	if err := json.Unmarshal(b, &lines); err != nil {
		return errors.New("want a string or a list of strings")
	}
	*t = Text(strings.Join(lines, ""))
	return nil
}

// Parse decodes and validates a notebook: a JSON object with nbformat 4 (when given) and a list of
// cells, each with a known cell_type and a source.
func Parse(data []byte) (*Notebook, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, fmt.Errorf("not a notebook: invalid JSON at byte %d: %v", syntax.Offset, err)
		}
		return nil, fmt.Errorf("not a notebook: %v", err)
	}
	if _, ok := top["cells"]; !ok {
		return nil, errors.New(`not a notebook: no "cells" list`)
	}
	var nb Notebook
	if err := json.Unmarshal(data, &nb); err != nil {
		return nil, fmt.Errorf("not a notebook: %v", err)
	}
	if nb.Cells == nil {
		return nil, errors.New(`not a notebook: "cells" is not a list`)
	}
	if _, ok := top["nbformat"]; ok && nb.NBFormat != 4 {
		return nil, fmt.Errorf("unsupported notebook format %d (want nbformat 4)", nb.NBFormat)
	}
	for i, c := range nb.Cells {
		switch c.CellType {
		case "code", "markdown", "raw":
		default:
			return nil, fmt.Errorf("not a notebook: cell %d has cell_type %q", i, c.CellType)
		}
	}
	return &nb, nil
}

// Load reads and validates the notebook at path.
func Load(path string) (*Notebook, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	nb, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return nb, nil
}

// CellsWithOutputs lists the indices of code cells that carry outputs or an execution count:
// committed notebooks should have none.
func (nb *Notebook) CellsWithOutputs() []int {
	var idx []int
	for i, c := range nb.Cells {
		if c.CellType == "code" && (len(c.Outputs) > 0 || c.ExecutionCount != nil) {
			idx = append(idx, i)
		}
	}
	return idx
}

// KernelName is the notebook's metadata.kernelspec.name, or "".
func (nb *Notebook) KernelName() string {
	ks, _ := nb.Metadata["kernelspec"].(map[string]any)
	name, _ := ks["name"].(string)
	return name
}
