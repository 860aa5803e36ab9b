package gpt

import (
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/attnbook/attnbook/pkg/torchrand"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/train"
)

// Tokenizer is notebook 07's (seed 003's) character tokenizer: every distinct character of the
// training text, sorted by code point, numbered 0, 1, … (Tiny Shakespeare: 65 characters, "\n" is 0,
// " " is 1, "H" is 20).
type Tokenizer struct {
	ids   map[rune]int32
	chars []rune
}

// NewTokenizer is train_from_text: the vocabulary is sorted(set(text)). text must be valid UTF-8
// (a Latin-1 or binary file is an error naming the byte offset of the first bad sequence) and
// not empty.
func NewTokenizer(text string) (*Tokenizer, error) {
	if err := checkUTF8("NewTokenizer", "text", text); err != nil {
		return nil, err
	}
	if text == "" {
		return nil, argErr("NewTokenizer", "text", "is empty: no characters to make a vocabulary of")
	}
	chars := []rune(text)
	slices.Sort(chars)
	chars = slices.Compact(chars)
	t := &Tokenizer{ids: make(map[rune]int32, len(chars)), chars: chars}
	for i, c := range chars {
		t.ids[c] = int32(i)
	}
	return t, nil
}

// checkUTF8 returns an *ArgumentError naming the byte offset (and line) of the first byte of s
// that is not valid UTF-8.
func checkUTF8(fn, arg, s string) error {
	if utf8.ValidString(s) {
		return nil
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return argErr(fn, arg, "is not valid UTF-8: byte 0x%02x at byte offset %d (line %d) starts no UTF-8 character; save the text as UTF-8",
				s[i], i, strings.Count(s[:i], "\n")+1)
		}
		i += size
	}
	return nil
}

// VocabSize is the number of characters.
func (t *Tokenizer) VocabSize() int {
	if t == nil {
		return 0
	}
	return len(t.chars)
}

// Vocabulary returns the characters in id order.
func (t *Tokenizer) Vocabulary() string {
	if t == nil {
		return ""
	}
	return string(t.chars)
}

// checkTokenizer returns an *ArgumentError for a nil or empty tokenizer.
func (t *Tokenizer) check(fn string) error {
	if t == nil || len(t.chars) == 0 {
		return argErr(fn, "t", "is a tokenizer without a vocabulary: make it with gpt.NewTokenizer(text) (and check its error)")
	}
	return nil
}

// Encode returns the ids of text's characters. Text that is not valid UTF-8, or a character
// outside the vocabulary, is an error naming its position.
func (t *Tokenizer) Encode(text string) ([]int32, error) {
	if err := t.check("Tokenizer.Encode"); err != nil {
		return nil, err
	}
	if err := checkUTF8("Tokenizer.Encode", "text", text); err != nil {
		return nil, err
	}
	ids := make([]int32, 0, len(text))
	pos := 0
	for _, c := range text {
		id, ok := t.ids[c]
		if !ok {
			return nil, argErr("Tokenizer.Encode", "text", "has character %q at position %d, which is not in the %d-character vocabulary", c, pos, len(t.chars))
		}
		ids = append(ids, id)
		pos++
	}
	return ids, nil
}

// Decode returns the text of ids; an id outside [0, VocabSize) is an error naming it (as
// Python's itos[i] raises KeyError).
func (t *Tokenizer) Decode(ids []int32) (string, error) {
	if err := t.check("Tokenizer.Decode"); err != nil {
		return "", err
	}
	var b strings.Builder
	for i, id := range ids {
		if id < 0 || int(id) >= len(t.chars) {
			return "", argErr("Tokenizer.Decode", fmt.Sprintf("ids[%d]", i), "= %d is outside the vocabulary [0, %d)", id, len(t.chars))
		}
		b.WriteRune(t.chars[id])
	}
	return b.String(), nil
}

// CorpusName is the file name of the Tiny Shakespeare corpus.
const CorpusName = "tinyshakespeare.txt"

// CorpusURL is where the corpus can be downloaded, once, by hand (nothing here downloads it).
const CorpusURL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"

// CorpusPlaces lists where LoadCorpus looks, as notebook 07 does: only $ATTNBOOK_DATA when it is
// set; otherwise ../shared/data next to the repository root, then the root's data folder. root is
// the repository root ("" means $ATTNBOOK_ROOT, or ".." — the notebooks folder's parent).
func CorpusPlaces(root string) []string {
	if dir := os.Getenv("ATTNBOOK_DATA"); dir != "" {
		return []string{filepath.Join(dir, CorpusName)}
	}
	if root == "" {
		root = os.Getenv("ATTNBOOK_ROOT")
	}
	if root == "" {
		root = ".."
	}
	return []string{filepath.Join(root, "..", "shared", "data", CorpusName), filepath.Join(root, "data", CorpusName)}
}

// ErrNoCorpus is matched (errors.Is) by LoadCorpus's error when the corpus is in none of the places.
var ErrNoCorpus = errors.New("corpus not found")

// LoadCorpus reads the corpus from the first of CorpusPlaces(root) that has it and returns the
// text and its path. When it is nowhere, the error (matching ErrNoCorpus) lists the places looked
// in and how to get the file.
func LoadCorpus(root string) (text, path string, err error) {
	places := CorpusPlaces(root)
	for _, p := range places {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", p, fmt.Errorf("gpt.LoadCorpus: %w", err)
		}
		if len(data) == 0 {
			return "", p, argErr("LoadCorpus", "corpus "+p, "is empty")
		}
		if err := checkUTF8("LoadCorpus", "corpus "+p, string(data)); err != nil {
			return "", p, err
		}
		return string(data), p, nil
	}
	return "", "", fmt.Errorf("gpt.LoadCorpus: %w: %s is not in %s; download it once from %s and save it "+
		"in one of those places (or set ATTNBOOK_DATA to its folder)",
		ErrNoCorpus, CorpusName, strings.Join(places, ", "), CorpusURL)
}

// SplitTrainVal cuts ids into the first 90% (training) and the last 10% (validation), as nanoGPT's
// prepare.py does: n = int(0.9·len).
func SplitTrainVal(ids []int32) (trainIDs, valIDs []int32) {
	n := int(0.9 * float64(len(ids)))
	return ids[:n], ids[n:]
}

// Batches draws nanoGPT's random batches from a token sequence: offsets
// torch.randint(len(data) − T, (B,)) from a torchrand.Generator, x = data[i : i+T],
// y = data[i+1 : i+1+T]. It is a train.Dataset. With limit 0 (training) its Iter never ends and
// continues the stream; like nanoGPT's train.py it draws each batch one step ahead, the next one
// before the current one is yielded. With limit > 0 (loss estimates) every Iter yields limit
// batches: the same ones each time when the Batches has a seed of its own (NewBatches), fresh
// ones from a shared generator otherwise.
type Batches struct {
	name      string
	data      []int32
	blockSize int
	batchSize int
	limit     int
	seed      int64 // reseeds gen at every Iter when fixed
	fixed     bool
	gen       *torchrand.Generator
	ahead     *batch // the next training batch, already drawn
}

type batch struct {
	x, y    *tensors.Tensor
	offsets []int64
}

// NewBatches returns a batch source over data with a generator of its own, seeded with seed. It
// is an error if data has no more than blockSize tokens.
func NewBatches(name string, data []int32, blockSize, batchSize int, seed int64, limit int) (*Batches, error) {
	b, err := newBatches(name, data, blockSize, batchSize, torchrand.New(seed), limit)
	if err != nil {
		return nil, err
	}
	b.seed, b.fixed = seed, true
	return b, nil
}

// newBatches returns a batch source drawing from gen, which it may share with others.
func newBatches(name string, data []int32, blockSize, batchSize int, gen *torchrand.Generator, limit int) (*Batches, error) {
	const fn = "NewBatches"
	switch {
	case blockSize <= 0:
		return nil, argErr(fn, "blockSize", "must be > 0, got %d", blockSize)
	case batchSize <= 0:
		return nil, argErr(fn, "batchSize", "must be > 0, got %d", batchSize)
	case limit < 0:
		return nil, argErr(fn, "limit", "must be >= 0 (0: an endless training stream), got %d", limit)
	case len(data) <= blockSize:
		return nil, argErr(fn, "data", "(%s) has %d tokens, need more than block_size %d", name, len(data), blockSize)
	}
	for i, id := range data {
		if id < 0 {
			return nil, argErr(fn, fmt.Sprintf("data[%d]", i), "= %d is not a token id (ids are >= 0)", id)
		}
	}
	return &Batches{name: name, data: data, blockSize: blockSize, batchSize: batchSize, limit: limit, gen: gen}, nil
}

// Name implements train.Dataset.
func (b *Batches) Name() string { return b.name }

// Next returns the next batch: x and y `[B, T]` (int32) and the B offsets. A training source
// (limit 0) then draws the batch after it.
func (b *Batches) Next() (x, y *tensors.Tensor, offsets []int64) {
	if b.limit > 0 {
		next := b.draw()
		return next.x, next.y, next.offsets
	}
	if b.ahead == nil {
		b.ahead = b.draw()
	}
	next := b.ahead
	b.ahead = b.draw()
	return next.x, next.y, next.offsets
}

// prime draws a training source's first batch now (nanoGPT draws it before the first estimate).
func (b *Batches) prime() {
	if b.limit == 0 && b.ahead == nil {
		b.ahead = b.draw()
	}
}

func (b *Batches) draw() *batch {
	offsets := make([]int64, b.batchSize)
	b.gen.FillRandint(offsets, 0, int64(len(b.data)-b.blockSize))
	return b.batchAt(offsets)
}

// batchAt is the batch of the windows at offsets (each in [0, len(data) − T)).
func (b *Batches) batchAt(offsets []int64) *batch {
	T := b.blockSize
	xs := make([]int32, 0, len(offsets)*T)
	ys := make([]int32, 0, len(offsets)*T)
	for _, i := range offsets {
		xs = append(xs, b.data[i:int(i)+T]...)
		ys = append(ys, b.data[i+1:int(i)+1+T]...)
	}
	return &batch{tensors.FromFlatDataAndDimensions(xs, len(offsets), T), tensors.FromFlatDataAndDimensions(ys, len(offsets), T), offsets}
}

// Iter implements train.Dataset: inputs [x], labels [y].
func (b *Batches) Iter() iter.Seq2[train.Batch, error] {
	return func(yield func(train.Batch, error) bool) {
		if b.fixed && b.limit > 0 {
			b.gen = torchrand.New(b.seed)
		}
		for n := 0; b.limit == 0 || n < b.limit; n++ {
			x, y, _ := b.Next()
			if !yield(train.Batch{Inputs: []*tensors.Tensor{x}, Labels: []*tensors.Tensor{y}}, nil) {
				return
			}
		}
	}
}
