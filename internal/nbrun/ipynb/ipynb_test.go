package ipynb

import (
	"strings"
	"testing"
)

const sample = `{
 "cells": [
  {"cell_type": "markdown", "metadata": {}, "source": ["# Title\n", "text"]},
  {"cell_type": "code", "execution_count": 3, "metadata": {}, "source": "\n  %%\nfmt.Println(1)",
   "outputs": [
    {"output_type": "stream", "name": "stdout", "text": ["1\n", "2\n"]},
    {"output_type": "display_data", "metadata": {}, "data": {"text/html": ["<b>", "x</b>"], "application/json": {"a": 1}}},
    {"output_type": "error", "ename": "ERROR", "evalue": "boom", "traceback": ["line 1", "line 2"]}
   ]},
  {"cell_type": "code", "execution_count": null, "metadata": {}, "source": [], "outputs": []}
 ],
 "metadata": {"kernelspec": {"name": "attnbook", "display_name": "Go (attnbook)"}},
 "nbformat": 4, "nbformat_minor": 5
}`

func TestParse(t *testing.T) {
	nb, err := Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(nb.Cells) != 3 || nb.KernelName() != "attnbook" || nb.NBFormat != 4 {
		t.Fatalf("Parse = %+v", nb)
	}
	if got := string(nb.Cells[0].Source); got != "# Title\ntext" {
		t.Errorf("list source = %q", got)
	}
	if got := nb.Cells[1].FirstLine(); got != "%%" {
		t.Errorf("FirstLine = %q, want the first non-blank line", got)
	}
	outs := nb.Cells[1].Outputs
	if string(outs[0].Text) != "1\n2\n" {
		t.Errorf("stream text = %q", outs[0].Text)
	}
	if html, ok := outs[1].DataText("text/html"); !ok || html != "<b>x</b>" {
		t.Errorf("DataText(text/html) = %q, %v", html, ok)
	}
	if js, ok := outs[1].DataText("application/json"); !ok || !strings.Contains(js, `"a"`) {
		t.Errorf("DataText(application/json) = %q, %v", js, ok)
	}
	if _, ok := outs[1].DataText("image/png"); ok {
		t.Errorf("DataText(image/png): want absent")
	}
	if outs[2].EName != "ERROR" || len(outs[2].Traceback) != 2 {
		t.Errorf("error output = %+v", outs[2])
	}
	if got := nb.CellsWithOutputs(); len(got) != 1 || got[0] != 1 {
		t.Errorf("CellsWithOutputs = %v, want [1]", got)
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "invalid JSON"},
		{"not json", "invalid JSON"},
		{`"a string"`, "not a notebook"},
		{`{"metadata": {}}`, `no "cells" list`},
		{`{"cells": {}}`, "not a notebook"},
		{`{"cells": [{"cell_type": "code", "source": 7}]}`, "not a notebook"},
		{`{"cells": [{"source": ""}]}`, `cell 0 has cell_type ""`},
		{`{"cells": [], "nbformat": 3}`, "nbformat 4"},
	} {
		if _, err := Parse([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error = %v, want one containing %q", tc.in, err, tc.want)
		}
	}
	if _, err := Parse([]byte(`{"cells": []}`)); err != nil {
		t.Errorf("an empty notebook is a notebook: %v", err)
	}
}
