package gpt

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/checkpoint"
)

// configParam is the store parameter that holds the model's Config (JSON) in a checkpoint.
const configParam = "gpt_config"

// Save writes the model's store — weights, Config, and, after training, the optimizer's moments and
// step, so training can resume — to dir as a GoMLX checkpoint (a JSON index and a binary file).
// dir is replaced as a whole: the checkpoint is first written to a new sibling folder, which then
// takes dir's place, so an interrupted Save never leaves a half-written checkpoint behind.
//
// (GoMLX v0.28.8 reads and writes no safetensors; its own checkpoint format is what it restores
// lazily into a store.)
func (m *Model) Save(dir string) error {
	cfgJSON, err := json.Marshal(m.cfg)
	if err != nil {
		return fmt.Errorf("gpt.Model.Save: %w", err)
	}
	m.store.SetParam(configParam, string(cfgJSON))
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("gpt.Model.Save: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".saving-")
	if err != nil {
		return fmt.Errorf("gpt.Model.Save: %w", err)
	}
	defer os.RemoveAll(tmp)
	// A handler on an empty directory loads nothing into the store.
	h, err := checkpoint.Build(m.store).Dir(tmp).Keep(1).Done()
	if err != nil {
		return fmt.Errorf("gpt.Model.Save: %w", err)
	}
	if err := h.Save(); err != nil {
		return fmt.Errorf("gpt.Model.Save: writing %s: %w", dir, err)
	}
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("gpt.Model.Save: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("gpt.Model.Save: %w", err)
	}
	return os.RemoveAll(old)
}

// HasCheckpoint reports whether dir holds a checkpoint Save could have written (it does not read
// it: Load says whether it is usable).
func HasCheckpoint(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "checkpoint-") && strings.HasSuffix(e.Name(), ".json") {
			return true
		}
	}
	return false
}

// Load reads a checkpoint written by Save. want is the model the caller expects: each of its
// fields that is not zero (VocabSize, BlockSize, NLayer, NHead, NEmbd) must match the
// checkpoint's, so a checkpoint trained with another tokenizer is refused with an error naming
// both vocabulary sizes. A missing folder, a folder without a checkpoint, a corrupt or truncated
// file, or a weight with the wrong shape are errors naming the path and what is wrong.
func Load(dir string, want Config) (*Model, error) {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("gpt.Load: checkpoint folder %s does not exist", dir)
	case err != nil:
		return nil, fmt.Errorf("gpt.Load: %w", err)
	case !info.IsDir():
		return nil, fmt.Errorf("gpt.Load: %s is a file, want the checkpoint folder Save writes", dir)
	case !HasCheckpoint(dir):
		return nil, fmt.Errorf("gpt.Load: %s holds no checkpoint (no checkpoint-*.json)", dir)
	}
	store := model.NewStore()
	var loadErr error
	func() {
		defer func() {
			if r := recover(); r != nil {
				loadErr = fmt.Errorf("%v", r)
			}
		}()
		_, loadErr = checkpoint.Load(store).Dir(dir).Immediate().Done()
	}()
	if loadErr != nil {
		return nil, fmt.Errorf("gpt.Load: checkpoint in %s is corrupt or unreadable: %w", dir, loadErr)
	}
	raw, found := store.GetParam(configParam)
	s, isString := raw.(string)
	if !found || !isString {
		return nil, fmt.Errorf("gpt.Load: checkpoint in %s has no %s parameter: not written by gpt.Model.Save", dir, configParam)
	}
	var cfg Config
	if err := json.Unmarshal([]byte(s), &cfg); err != nil {
		return nil, fmt.Errorf("gpt.Load: checkpoint in %s has a corrupt %s parameter: %w", dir, configParam, err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gpt.Load: checkpoint in %s: %w", dir, err)
	}
	if want.VocabSize != 0 && want.VocabSize != cfg.VocabSize {
		return nil, fmt.Errorf("gpt.Load: checkpoint in %s was trained with a vocabulary of %d tokens, but the tokenizer has %d: "+
			"it belongs to another corpus or tokenizer", dir, cfg.VocabSize, want.VocabSize)
	}
	for _, f := range []struct {
		name      string
		got, want int
	}{{"BlockSize", cfg.BlockSize, want.BlockSize}, {"NLayer", cfg.NLayer, want.NLayer},
		{"NHead", cfg.NHead, want.NHead}, {"NEmbd", cfg.NEmbd, want.NEmbd}} {
		if f.want != 0 && f.want != f.got {
			return nil, fmt.Errorf("gpt.Load: checkpoint in %s has %s %d, want %d", dir, f.name, f.got, f.want)
		}
	}
	for _, p := range cfg.params() {
		path := "/" + strings.ReplaceAll(p.key, ".", "/")
		v := store.GetVariable(path)
		if v == nil {
			return nil, fmt.Errorf("gpt.Load: checkpoint in %s lacks the weight %s", dir, p.key)
		}
		if sh := v.Shape(); sh.DType != dtypes.Float32 || !slices.Equal(sh.Dimensions, p.dims) {
			return nil, fmt.Errorf("gpt.Load: checkpoint in %s has %s of shape %s, want (Float32)%v", dir, p.key, sh, p.dims)
		}
	}
	b, err := backend.Default()
	if err != nil {
		return nil, fmt.Errorf("gpt.Load: %w", err)
	}
	return newModel(cfg, store, b), nil
}
