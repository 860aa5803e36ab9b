package gpt

import (
	"fmt"
	"strings"

	"github.com/gomlx/compute/dtypes"

	"github.com/gomlx/gomlx/core/tensors"
)

// HeadStat summarizes where one head looks over a sequence (rows 1…T-1; row 0 can only see
// itself): the mean weight a token gives to itself, to the token just before it and to the first
// token, and the mean distance back, Σⱼ w[i][j]·(i−j).
type HeadStat struct {
	Layer, Head                     int
	Self, Previous, First, Distance float64
}

// HeadStats computes a HeadStat for every head of AttentionWeights' output (`[H, T, T]` float32
// per layer). Any other shape is an *ArgumentError naming the layer.
func HeadStats(weights []*tensors.Tensor) ([]HeadStat, error) {
	var stats []HeadStat
	for l, w := range weights {
		arg := fmt.Sprintf("weights[%d]", l)
		if w == nil {
			return nil, argErr("HeadStats", arg, "must be a float32 [H, T, T] tensor (one layer of Model.AttentionWeights), got nil")
		}
		dims := w.Shape().Dimensions
		if w.Rank() != 3 || dims[1] != dims[2] || w.DType() != dtypes.Float32 {
			return nil, argErr("HeadStats", arg, "must be a float32 [H, T, T] tensor (one layer of Model.AttentionWeights), got %s", w.Shape())
		}
		H, T := dims[0], dims[1]
		flat, err := tensors.CopyFlatData[float32](w)
		if err != nil {
			return nil, argErr("HeadStats", arg, "cannot be read: %v", err)
		}
		for h := range H {
			s := HeadStat{Layer: l, Head: h}
			if T < 2 {
				stats = append(stats, s)
				continue
			}
			for i := 1; i < T; i++ {
				row := flat[(h*T+i)*T : (h*T+i+1)*T]
				s.Self += float64(row[i])
				s.Previous += float64(row[i-1])
				s.First += float64(row[0])
				for j := 0; j <= i; j++ {
					s.Distance += float64(row[j]) * float64(i-j)
				}
			}
			n := float64(T - 1)
			s.Self, s.Previous, s.First, s.Distance = s.Self/n, s.Previous/n, s.First/n, s.Distance/n
			stats = append(stats, s)
		}
	}
	return stats, nil
}

// checkSameHeads returns an *ArgumentError unless before and after list the same heads.
func checkSameHeads(fn string, before, after []HeadStat) error {
	if len(before) != len(after) {
		return argErr(fn, "before", "has %d heads, after has %d: want the stats of the same model's heads, before and after training", len(before), len(after))
	}
	for i := range after {
		if before[i].Layer != after[i].Layer || before[i].Head != after[i].Head {
			return argErr(fn, fmt.Sprintf("before[%d]", i), "is block %d head %d, after[%d] is block %d head %d: want the same heads in the same order",
				before[i].Layer, before[i].Head, i, after[i].Layer, after[i].Head)
		}
	}
	return nil
}

// FormatHeadStats lays out before and after (same heads, in order) as a text table, one head per
// line, each with its self / previous / first weights and mean distance before → after. Lists
// of other heads are an *ArgumentError.
func FormatHeadStats(before, after []HeadStat) (string, error) {
	if err := checkSameHeads("FormatHeadStats", before, after); err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %-15s %-15s %-15s %-15s\n", "head", "self", "previous", "first", "distance")
	for i, a := range after {
		o := before[i]
		cell := func(x, y float64) string { return fmt.Sprintf("%.2f → %.2f", x, y) }
		fmt.Fprintf(&b, "%-10s %-15s %-15s %-15s %-15s\n", fmt.Sprintf("L%d H%d", a.Layer, a.Head),
			cell(o.Self, a.Self), cell(o.Previous, a.Previous), cell(o.First, a.First), cell(o.Distance, a.Distance))
	}
	return b.String(), nil
}

// SummarizeHeads names, in a few sentences, the heads of after that stand out compared with before
// (same heads, in order): the largest weight on the token itself, on the previous token, the
// smallest on the first token, and the shortest mean distance. Lists of other heads, or none,
// are an *ArgumentError.
func SummarizeHeads(before, after []HeadStat) (string, error) {
	if err := checkSameHeads("SummarizeHeads", before, after); err != nil {
		return "", err
	}
	if len(after) == 0 {
		return "", argErr("SummarizeHeads", "after", "has no heads to summarize")
	}
	pick := func(better func(a, b HeadStat) bool) int {
		best := 0
		for i := range after {
			if better(after[i], after[best]) {
				best = i
			}
		}
		return best
	}
	name := func(s HeadStat) string { return fmt.Sprintf("block %d head %d", s.Layer, s.Head) }
	var b strings.Builder
	i := pick(func(a, b HeadStat) bool { return a.Self > b.Self })
	fmt.Fprintf(&b, "most on the token itself: %s, %.2f of its weight (%.2f before training)\n", name(after[i]), after[i].Self, before[i].Self)
	i = pick(func(a, b HeadStat) bool { return a.Previous > b.Previous })
	fmt.Fprintf(&b, "most on the previous token: %s, %.2f (%.2f before)\n", name(after[i]), after[i].Previous, before[i].Previous)
	i = pick(func(a, b HeadStat) bool { return a.First < b.First })
	fmt.Fprintf(&b, "least on the first token: %s, %.2f (%.2f before)\n", name(after[i]), after[i].First, before[i].First)
	i = pick(func(a, b HeadStat) bool { return a.Distance < b.Distance })
	fmt.Fprintf(&b, "shortest look back: %s, %.1f tokens on average (%.1f before)\n", name(after[i]), after[i].Distance, before[i].Distance)
	return b.String(), nil
}
