package gpt

import (
	"math"
	"strings"
	"testing"

	"github.com/gomlx/gomlx/core/tensors"
)

// TestHeadStats: a head that always looks one token back, and a uniform causal head.
func TestHeadStats(t *testing.T) {
	const T = 4
	w := make([]float32, 2*T*T)
	for i := range T {
		w[i*T+max(i-1, 0)] = 1 // head 0: previous token (row 0: itself)
		for j := 0; j <= i; j++ {
			w[(T+i)*T+j] = 1 / float32(i+1) // head 1: uniform
		}
	}
	stats, err := HeadStats([]*tensors.Tensor{tensors.FromFlatDataAndDimensions(w, 2, T, T)})
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 2 {
		t.Fatalf("%d stats", len(stats))
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6 }
	p := stats[0]
	if !near(p.Previous, 1) || !near(p.Self, 0) || !near(p.Distance, 1) || !near(p.First, 1.0/3) {
		t.Errorf("previous-token head: %+v", p)
	}
	u := stats[1] // rows 1..3: 1/2, 1/3, 1/4
	want := (1.0/2 + 1.0/3 + 1.0/4) / 3
	if !near(u.Self, want) || !near(u.Previous, want) || !near(u.First, want) || !near(u.Distance, (0.5+1+1.5)/3) {
		t.Errorf("uniform head: %+v, want self=previous=first=%g, distance 1", u, want)
	}
	sum, err := SummarizeHeads([]HeadStat{{Layer: 0, Head: 0, Self: u.Self, Previous: u.Previous, First: u.First, Distance: u.Distance}, u}, stats)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"most on the previous token: block 0 head 0, 1.00 (0.36 before)",
		"most on the token itself: block 0 head 1, 0.36", "least on the first token: block 0 head 0, 0.33 (0.36 before)",
		"shortest look back: block 0 head 0, 1.0 tokens"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	table, err := FormatHeadStats(stats, stats)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table, "L0 H0") || !strings.Contains(table, "1.00 → 1.00") {
		t.Errorf("table:\n%s", table)
	}
}
