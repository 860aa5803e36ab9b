package display

import (
	"fmt"
	"strings"
)

// CompareBuilder lays out pictures side by side; create it with Compare.
type CompareBuilder struct {
	title string
	items []compareItem
}

type compareItem struct {
	caption string
	r       Renderer
}

// Compare puts two or more pictures side by side, each with a caption, to contrast two
// routes to the same result (masked_fill(-inf) then softmax vs softmax, multiply by tril,
// renormalise) or a before/after (dropout). The result is HTML: a wrapping flex row of
// <figure> elements.
//
// Example:
//
//	html, err := display.Compare().
//		Add("masked_fill(-inf), then softmax", display.Heatmap(a).Tokens(toks...)).
//		Add("softmax, × tril, renormalise", display.Heatmap(b).Tokens(toks...)).
//		Done()
func Compare() *CompareBuilder { return &CompareBuilder{} }

// Title sets a heading above the row of pictures.
func (b *CompareBuilder) Title(title string) *CompareBuilder { b.title = title; return b }

// Add appends a picture (any builder of this package) with its caption.
func (b *CompareBuilder) Add(caption string, r Renderer) *CompareBuilder {
	b.items = append(b.items, compareItem{caption, r})
	return b
}

// Done renders every picture; the first error is returned, naming the caption.
func (b *CompareBuilder) Done() (string, error) {
	const fn = "display.Compare"
	if len(b.items) < 2 {
		return "", fmt.Errorf("%s: needs at least two pictures to compare, got %d", fn, len(b.items))
	}
	var sb strings.Builder
	sb.WriteString(`<div class="attnbook-compare" style="font-family:sans-serif;color:#1a1a1a;background:#ffffff;padding:4px">`)
	if b.title != "" {
		fmt.Fprintf(&sb, `<div class="compare-title" style="font-weight:bold;font-size:15px;margin:4px 0 8px 0">%s</div>`, esc(clip(b.title, titleRunes)))
	}
	sb.WriteString(`<div style="display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start">`)
	for i, it := range b.items {
		if it.r == nil {
			return "", fmt.Errorf("%s: picture %d (%q) is nil", fn, i, it.caption)
		}
		markup, err := it.r.Done()
		if err != nil {
			return "", fmt.Errorf("%s: picture %d (%q): %w", fn, i, it.caption, err)
		}
		fmt.Fprintf(&sb, `<figure class="compare-item" style="margin:0;padding:6px;border:1px solid #dddddd;border-radius:4px">%s<figcaption style="font-size:13px;margin-top:4px;max-width:100%%">%s</figcaption></figure>`,
			markup, esc(clip(it.caption, titleRunes)))
	}
	sb.WriteString(`</div></div>`)
	return sb.String(), nil
}
