package eager_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/attnbook/attnbook/pkg/eager"
)

// An exercise check that says where an answer goes wrong, not only that it does.
func ExampleFirstDifference() {
	want := eager.Tensor([][]float64{{0.1385, 0.2379}, {0.2333, 0.1240}})
	got := eager.Tensor([][]float64{{0.1385, 0.2379}, {0.2333, 0.9999}})
	if index, g, w, found := eager.FirstDifference(got, want, 1e-5, 1e-8); found {
		fmt.Printf("first difference at %v: got %.4f, want %.4f\n", index, g, w)
	}
	_, _, _, found := eager.FirstDifference(want, want, 0, 0)
	fmt.Println("a tensor differs from itself:", found)
	// Output:
	// first difference at [1 1]: got 0.9999, want 0.1240
	// a tensor differs from itself: false
}

func TestFirstDifference(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tc := range []struct {
		name       string
		got, want  any
		rtol, atol float64
		index      string // "" when none differs
	}{
		{"equal", []float64{1, 2, 3}, []float64{1, 2, 3}, 0, 0, ""},
		{"within atol", []float64{1, 2, 3}, []float64{1, 2, 3.05}, 0, 0.1, ""},
		{"within rtol", []float64{100, 200}, []float64{100, 201}, 0.01, 0, ""},
		{"the first of two", [][]float64{{1, 2}, {3, 4}}, [][]float64{{1, 5}, {6, 4}}, 0, 0, "[0 1]"},
		{"3-d", [][][]float64{{{0, 0}, {0, 0}}, {{0, 0}, {0, 1}}}, [][][]float64{{{0, 0}, {0, 0}}, {{0, 0}, {0, 0}}}, 0, 0, "[1 1 1]"},
		{"NaN is never close", []float64{nan}, []float64{nan}, 1, 1, "[0]"},
		{"equal infinities are close", []float64{inf}, []float64{inf}, 0, 0, ""},
		{"opposite infinities", []float64{inf}, []float64{-inf}, 1, 1, "[0]"},
		{"ints", []int64{1, 2, 3}, []int64{1, 2, 4}, 0, 0, "[2]"},
		{"bools", []bool{true, false}, []bool{true, true}, 0, 0, "[1]"},
		{"0-d", 2.0, 3.0, 0, 0, "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			index, _, _, found := eager.FirstDifference(eager.Tensor(tc.got), eager.Tensor(tc.want), tc.rtol, tc.atol)
			if found != (tc.index != "") || (found && fmt.Sprint(index) != tc.index) {
				t.Errorf("FirstDifference = %v, %v; want %q", index, found, tc.index)
			}
		})
	}
}

func TestFirstDifferenceShapes(t *testing.T) {
	defer func() {
		err := fmt.Sprint(recover())
		if !strings.Contains(err, "eager.FirstDifference: got [2 3] and want [3 2] have different shapes") {
			t.Errorf("panic %q, want one naming both shapes", err)
		}
	}()
	eager.FirstDifference(eager.Zeros(2, 3), eager.Zeros(3, 2), 0, 0)
}
