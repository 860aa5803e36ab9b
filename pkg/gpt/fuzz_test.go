package gpt

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/attnbook/attnbook/pkg/torchrand"
)

var updateFuzzSeeds = flag.Bool("update-fuzz-seeds", false, "rewrite testdata/fuzz/FuzzLoad's seeds from a freshly trained micro checkpoint")

// fuzzCheckpointName is the base name FuzzLoad gives its files.
const fuzzCheckpointName = "checkpoint-n0000000-20260101-000000-step-00000002"

// FuzzLoad: whatever bytes the checkpoint's index and binary file hold — a real checkpoint
// (testdata/fuzz/FuzzLoad: with and without training state, truncated, empty), or anything the
// fuzzer makes of them — Load returns a usable model or an error, and never panics or allocates
// more than the files describe.
func FuzzLoad(f *testing.F) {
	f.Fuzz(func(t *testing.T, index, bin []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, fuzzCheckpointName+".json"), index, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fuzzCheckpointName+".bin"), bin, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := Load(dir, Config{})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "gpt.Load: ") {
				t.Fatalf("error does not name gpt.Load: %v", err)
			}
			return
		}
		if err := m.Config().Validate(); err != nil {
			t.Fatalf("Load accepted an invalid config: %v", err)
		}
		if len(m.StateDict()) != len(m.Config().params()) {
			t.Fatalf("Load returned %d weights, want %d", len(m.StateDict()), len(m.Config().params()))
		}
	})
}

// TestFuzzLoadSeeds writes FuzzLoad's seed corpus with -update-fuzz-seeds, and otherwise checks
// that the committed seeds still include a checkpoint that loads (so the fuzzer starts from
// valid files, not only from garbage).
func TestFuzzLoadSeeds(t *testing.T) {
	seedDir := filepath.Join("testdata", "fuzz", "FuzzLoad")
	if *updateFuzzSeeds {
		cfg := Config{VocabSize: 4, BlockSize: 4, NLayer: 1, NHead: 1, NEmbd: 4}
		_, tc := Tiny(4)
		tc.BatchSize, tc.EvalIters = 2, 1
		m, err := New(cfg, torchrand.New(1))
		if err != nil {
			t.Fatal(err)
		}
		data := []int32{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}
		tr, err := m.NewTrainer(tc, data, data)
		if err != nil {
			t.Fatal(err)
		}
		plain, trained := filepath.Join(t.TempDir(), "plain"), filepath.Join(t.TempDir(), "trained")
		if err := m.Save(plain); err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Run(RunOptions{Steps: 2, CheckpointDir: trained}); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(seedDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, s := range []struct{ name, dir string }{{"plain", plain}, {"trained", trained}} {
			base, _ := latestCheckpoint(s.dir)
			index, _ := os.ReadFile(filepath.Join(s.dir, base+".json"))
			bin, _ := os.ReadFile(filepath.Join(s.dir, base+".bin"))
			for _, v := range []struct {
				suffix     string
				index, bin []byte
			}{{"", index, bin}, {"-truncated-bin", index, bin[:len(bin)/2]}, {"-truncated-index", index[:len(index)/2], bin},
				{"-no-bin", index, nil}} {
				content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n[]byte(%q)\n", v.index, v.bin)
				if err := os.WriteFile(filepath.Join(seedDir, s.name+v.suffix), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		random := "go test fuzz v1\n[]byte(\"{\\\"Variables\\\":[{\\\"ParameterName\\\":\\\"var:/wte/weight\\\",\\\"Dimensions\\\":[1099511627776],\\\"DType\\\":\\\"Float32\\\",\\\"Pos\\\":0,\\\"Length\\\":0}]}\")\n[]byte(\"\\x00\\x01\")\n"
		if err := os.WriteFile(filepath.Join(seedDir, "huge-dimension"), []byte(random), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(seedDir)
	if err != nil || len(entries) < 9 {
		t.Fatalf("FuzzLoad's seed corpus: %d files, %v; regenerate with go test -run TestFuzzLoadSeeds -update-fuzz-seeds", len(entries), err)
	}
}

// FuzzTokenizer: on valid UTF-8, Decode(Encode(text)) is text with the tokenizer made from
// text; on invalid UTF-8, NewTokenizer and Encode return an error naming the byte offset, and
// nothing panics.
func FuzzTokenizer(f *testing.F) {
	for _, s := range []string{"hello world\n", "First Citizen:\nBefore we proceed", "é∀😀\x00", "", "to be\xe9", "\xff", "ab\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		tok, err := NewTokenizer(text)
		switch {
		case !utf8.ValidString(text):
			if err == nil || !strings.Contains(err.Error(), "at byte offset") {
				t.Fatalf("NewTokenizer(%q): error %v, want one naming the byte offset", text, err)
			}
			valid := strings.ToValidUTF8(text, "")
			if valid == "" {
				return
			}
			tok, err := NewTokenizer(valid)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tok.Encode(text); err == nil || !strings.Contains(err.Error(), "at byte offset") {
				t.Fatalf("Encode(%q): error %v, want one naming the byte offset", text, err)
			}
		case text == "":
			if err == nil {
				t.Fatal("NewTokenizer(\"\"): no error")
			}
		default:
			if err != nil {
				t.Fatal(err)
			}
			ids, err := tok.Encode(text)
			if err != nil {
				t.Fatal(err)
			}
			back, err := tok.Decode(ids)
			if err != nil || back != text {
				t.Fatalf("Decode(Encode(%q)) = %q, %v", text, back, err)
			}
			if tok.VocabSize() != utf8.RuneCountInString(tok.Vocabulary()) {
				t.Fatalf("vocabulary %q of size %d", tok.Vocabulary(), tok.VocabSize())
			}
		}
	})
}
