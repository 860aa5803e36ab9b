package notebooks_test

import (
	"testing"

	"github.com/attnbook/attnbook/internal/coursetest"
	"github.com/attnbook/attnbook/internal/nbrun"
)

// The notebook tests moved to internal/coursetest (Jupyter's file list shows notebooks only).
// This adapter keeps the tests still here (mha_implementations_test.go, gpt_test.go) compiling
// until their owners move them there too; then it goes.

type printed = coursetest.Printed
type picture = coursetest.Picture

func checkClean(t *testing.T, r *nbrun.Result)       { t.Helper(); coursetest.CheckClean(t, r) }
func checkBackendLine(t *testing.T, r *nbrun.Result) { t.Helper(); coursetest.CheckBackendLine(t, r) }
func checkPictures(t *testing.T, r *nbrun.Result, p []picture, find func(*testing.T, *nbrun.Result, string) nbrun.Cell) {
	t.Helper()
	coursetest.CheckPictures(t, r, p, find)
}
func cellWith(t *testing.T, r *nbrun.Result, s string) nbrun.Cell {
	t.Helper()
	return coursetest.CellWith(t, r, s)
}
func cellWithLine(t *testing.T, r *nbrun.Result, l string) nbrun.Cell {
	t.Helper()
	return coursetest.CellWithLine(t, r, l)
}
func linesInOrder(t *testing.T, cell, stdout string, want []string) {
	t.Helper()
	coursetest.LinesInOrder(t, cell, stdout, want)
}
func withoutGradFn(text string) []string { return coursetest.WithoutGradFn(text) }
