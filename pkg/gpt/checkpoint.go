package gpt

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/attnbook/attnbook/pkg/backend"
	"github.com/gomlx/compute/dtypes"
	"github.com/gomlx/compute/shapes"
	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
	"github.com/gomlx/gomlx/ml/model/checkpoint"
)

// Store parameters this package writes into a checkpoint (JSON strings).
const (
	configParam   = "gpt_config"   // the model's Config
	trainingParam = "gpt_training" // a Trainer's state, for Resume ("" when saved by Model.Save)
)

// Save writes the model's store — weights, Config, and, after training, the optimizer's moments and
// step — to dir as a GoMLX checkpoint (a JSON index and a binary file). It holds no training
// state for Resume: Trainer.Save (and Trainer.Run with RunOptions.CheckpointDir) writes that.
// dir is replaced as a whole: the checkpoint is first written to a new sibling folder, which then
// takes dir's place, so an interrupted Save never leaves a half-written checkpoint behind.
//
// (GoMLX v0.28.16 reads and writes no safetensors; its own checkpoint format is what it restores
// lazily into a store.)
func (m *Model) Save(dir string) error {
	if err := checkModel(m, "Model.Save"); err != nil {
		return err
	}
	return m.save("Model.Save", dir, "")
}

// save writes the checkpoint with training state ts (JSON, or "").
func (m *Model) save(fn, dir, ts string) error {
	if dir == "" {
		return argErr(fn, "dir", "is empty: give the folder to save the checkpoint in")
	}
	cfgJSON, err := json.Marshal(m.cfg)
	if err != nil {
		return fmt.Errorf("gpt.%s: %w", fn, err)
	}
	m.store.SetParam(configParam, string(cfgJSON))
	m.store.SetParam(trainingParam, ts)
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("gpt.%s: %w", fn, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".saving-")
	if err != nil {
		return fmt.Errorf("gpt.%s: %w", fn, err)
	}
	defer os.RemoveAll(tmp)
	// A handler on an empty directory loads nothing into the store.
	h, err := checkpoint.Build(m.store).Dir(tmp).Keep(1).Done()
	if err != nil {
		return fmt.Errorf("gpt.%s: %w", fn, err)
	}
	if err := h.Save(); err != nil {
		return fmt.Errorf("gpt.%s: writing %s: %w", fn, dir, err)
	}
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("gpt.%s: %w", fn, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("gpt.%s: %w", fn, err)
	}
	return os.RemoveAll(old)
}

// HasCheckpoint reports whether dir holds a checkpoint Save could have written (it does not read
// it: Load says whether it is usable).
func HasCheckpoint(dir string) bool {
	_, ok := latestCheckpoint(dir)
	return ok
}

// latestCheckpoint returns the base name (without .json) of dir's newest checkpoint.
func latestCheckpoint(dir string) (string, bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", false
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, "checkpoint-") && strings.HasSuffix(n, checkpoint.JsonNameSuffix) {
			names = append(names, strings.TrimSuffix(n, checkpoint.JsonNameSuffix))
		}
	}
	if len(names) == 0 {
		return "", false
	}
	slices.Sort(names)
	return names[len(names)-1], true
}

// The index of a GoMLX checkpoint (checkpoint-….json), as its Handler.Save writes it.
type ckptIndex struct {
	Params    []ckptParam
	Variables []ckptVar
	BinFormat string
}

type ckptParam struct {
	Scope, Key string
	Value      any
	ValueType  string
}

type ckptVar struct {
	ParameterName string
	Dimensions    []int
	DType         dtypes.DType
	Pos, Length   int
}

// The binary file's header when compressed (GoMLX's checkpoint.getSaveVarFiles).
const (
	gzipBinHeader = "gomlx_checkpointss\x04gzip"
	maxIndexBytes = 16 << 20
)

// Load reads a checkpoint written by Save (or Trainer.Save). want is the model the caller
// expects: each of its fields that is not zero (VocabSize, BlockSize, NLayer, NHead, NEmbd) must
// match the checkpoint's, so a checkpoint trained with another tokenizer is refused with an error
// naming both vocabulary sizes.
//
// Everything in the checkpoint is checked before it is used, so that no file content makes Load
// panic or allocate more than the files hold: the index (JSON) must list every variable with a
// valid shape at consecutive positions, the binary file (gzip-compressed or not) must hold
// exactly those bytes, the Config must be valid, every weight must have its shape and finite
// values, the optimizer's moments (if any) their weight's shape, the training state (if any)
// must parse. A missing folder, a folder without a checkpoint, or any of these failing is an
// error naming the path and what is wrong.
func Load(dir string, want Config) (*Model, error) {
	for _, f := range []struct {
		name string
		v    int
	}{{"VocabSize", want.VocabSize}, {"BlockSize", want.BlockSize}, {"NLayer", want.NLayer}, {"NHead", want.NHead}, {"NEmbd", want.NEmbd}} {
		if f.v < 0 {
			return nil, argErr("Load", "want."+f.name, "must be >= 0 (0: any), got %d", f.v)
		}
	}
	info, err := os.Stat(dir)
	switch {
	case dir == "":
		return nil, argErr("Load", "dir", "is empty: give the checkpoint folder")
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("gpt.Load: checkpoint folder %s does not exist", dir)
	case err != nil:
		return nil, fmt.Errorf("gpt.Load: %w", err)
	case !info.IsDir():
		return nil, fmt.Errorf("gpt.Load: %s is a file, want the checkpoint folder Save writes", dir)
	}
	base, ok := latestCheckpoint(dir)
	if !ok {
		return nil, fmt.Errorf("gpt.Load: %s holds no checkpoint (no checkpoint-*.json)", dir)
	}
	index, err := readLimited(filepath.Join(dir, base+checkpoint.JsonNameSuffix), maxIndexBytes)
	if err != nil {
		return nil, fmt.Errorf("gpt.Load: checkpoint in %s is corrupt or unreadable: %w", dir, err)
	}
	bin, err := os.Open(filepath.Join(dir, base+checkpoint.BinDataSuffix))
	if err != nil {
		return nil, fmt.Errorf("gpt.Load: checkpoint in %s is corrupt or unreadable: %w", dir, err)
	}
	defer bin.Close()
	m, err := decodeCheckpoint(index, bin, want)
	if err != nil {
		return nil, fmt.Errorf("gpt.Load: checkpoint in %s %w", dir, err)
	}
	return m, nil
}

// readLimited reads a file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes: not a checkpoint index", filepath.Base(path), limit)
	}
	return data, nil
}

// corrupt is decodeCheckpoint's error for damaged files.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("is corrupt or unreadable: "+format, args...)
}

// decodeCheckpoint checks and decodes a checkpoint's index and binary data into a Model. Its
// errors read as the rest of a sentence that starts "checkpoint in DIR ".
func decodeCheckpoint(indexJSON []byte, bin io.Reader, want Config) (*Model, error) {
	var index ckptIndex
	dec := json.NewDecoder(bytes.NewReader(indexJSON))
	if err := dec.Decode(&index); err != nil {
		return nil, corrupt("index: %v", err)
	}
	// Shapes and positions, before any allocation.
	total := 0
	seen := map[string]bool{}
	for i, v := range index.Variables {
		if !strings.HasPrefix(v.ParameterName, "var:/") || seen[v.ParameterName] {
			return nil, corrupt("index: variable %d has a bad or repeated name %q", i, v.ParameterName)
		}
		seen[v.ParameterName] = true
		if v.DType != dtypes.Float32 && v.DType != dtypes.Int64 {
			return nil, corrupt("index: %s has dtype %s, want Float32 or Int64", v.ParameterName, v.DType)
		}
		n := 1
		for _, d := range v.Dimensions {
			if d < 0 || (d > 0 && n > maxParams/d) || len(v.Dimensions) > 8 {
				return nil, corrupt("index: %s has impossible dimensions %v", v.ParameterName, v.Dimensions)
			}
			n *= d
		}
		if v.Pos != total || v.Length != n*v.DType.Size() || total > 4*maxParams*8 {
			return nil, corrupt("index: %s at byte %d with %d bytes, want byte %d and %d bytes for %s%v",
				v.ParameterName, v.Pos, v.Length, total, n*v.DType.Size(), v.DType, v.Dimensions)
		}
		total += v.Length
	}
	data, err := readBin(bin, total)
	if err != nil {
		return nil, err
	}
	// Parameters.
	params := map[string]string{}
	for _, p := range index.Params {
		if p.Key == configParam || p.Key == trainingParam {
			s, ok := p.Value.(string)
			if !ok {
				return nil, corrupt("index: parameter %s is a %T, want a string", p.Key, p.Value)
			}
			params[p.Key] = s
		}
	}
	cfgJSON, found := params[configParam]
	if !found {
		return nil, fmt.Errorf("has no %s parameter: not written by gpt.Model.Save", configParam)
	}
	var cfg Config
	if err := strictJSON(cfgJSON, &cfg); err != nil {
		return nil, fmt.Errorf("has a corrupt %s parameter: %w", configParam, err)
	}
	if err := cfg.check("Load", "cfg."); err != nil {
		return nil, fmt.Errorf("has an impossible Config: %w", err)
	}
	if want.VocabSize != 0 && want.VocabSize != cfg.VocabSize {
		return nil, fmt.Errorf("was trained with a vocabulary of %d tokens, but the tokenizer has %d: "+
			"it belongs to another corpus or tokenizer", cfg.VocabSize, want.VocabSize)
	}
	for _, f := range []struct {
		name      string
		got, want int
	}{{"BlockSize", cfg.BlockSize, want.BlockSize}, {"NLayer", cfg.NLayer, want.NLayer},
		{"NHead", cfg.NHead, want.NHead}, {"NEmbd", cfg.NEmbd, want.NEmbd}} {
		if f.want != 0 && f.want != f.got {
			return nil, fmt.Errorf("has %s %d, want %d", f.name, f.got, f.want)
		}
	}
	if n := cfg.paramTensors(); n > len(index.Variables) {
		return nil, fmt.Errorf("lacks weights: its Config has %d, its index lists %d variables", n, len(index.Variables))
	}
	// Variables: the weights and their moments strictly, the rest (GoMLX's step counters) as
	// they are; the trainer's metrics are dropped.
	vars := map[string]ckptVar{}
	for _, v := range index.Variables {
		vars[strings.TrimPrefix(v.ParameterName, "var:")] = v
	}
	store := model.NewStore()
	add := func(path string, v ckptVar, trainable bool) {
		t := tensors.FromShape(shapes.Make(v.DType, v.Dimensions...))
		_ = t.MutableBytes(func(b []byte) { copy(b, data[v.Pos:v.Pos+v.Length]) })
		store.VariableWithValue(path, t).SetTrainable(trainable)
		delete(vars, path)
	}
	weights := map[string]bool{}
	for _, p := range cfg.params() {
		path := "/" + strings.ReplaceAll(p.key, ".", "/")
		weights[path] = true
		v, ok := vars[path]
		if !ok {
			return nil, fmt.Errorf("lacks the weight %s", p.key)
		}
		if v.DType != dtypes.Float32 || !slices.Equal(v.Dimensions, p.dims) {
			return nil, fmt.Errorf("has %s of shape (%s)%v, want (Float32)%v", p.key, v.DType, v.Dimensions, p.dims)
		}
		if i := firstNonFinite(data[v.Pos : v.Pos+v.Length]); i >= 0 {
			return nil, fmt.Errorf("has a non-finite value in %s (element %d): the run that saved it diverged, or the file is damaged", p.key, i)
		}
		add(path, v, true)
	}
	for _, path := range slices.Sorted(maps.Keys(vars)) {
		v := vars[path]
		if rest, ok := strings.CutPrefix(path, "/"+adamWScope+"/"); ok {
			kind, w, _ := strings.Cut(rest, "/")
			w = "/" + w
			wv, isWeight := index.variable("var:" + w)
			if !weights[w] || !isWeight || (kind != "m" && kind != "v") || v.DType != dtypes.Float32 || !slices.Equal(v.Dimensions, wv.Dimensions) {
				return nil, corrupt("optimizer moment %s matches no weight of the model", path)
			}
			if i := firstNonFinite(data[v.Pos : v.Pos+v.Length]); i >= 0 {
				return nil, fmt.Errorf("has a non-finite value in the optimizer moment %s (element %d)", path, i)
			}
			add(path, v, false)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(vars)) {
		v := vars[path]
		switch {
		case strings.HasPrefix(path, "/metrics/"):
		case v.DType == dtypes.Int64 && len(v.Dimensions) == 0:
			add(path, v, false) // /global_step, /trainer/train_last_global_step
		default:
			return nil, corrupt("unexpected variable %s (%s)%v", path, v.DType, v.Dimensions)
		}
	}
	b, err := backend.Default()
	if err != nil {
		return nil, fmt.Errorf("cannot get a backend: %w", err)
	}
	m := newModel(cfg, store, b)
	if ts := params[trainingParam]; ts != "" {
		state, err := decodeTrainState(ts, cfg)
		if err != nil {
			return nil, err
		}
		m.saved = state
	}
	return m, nil
}

// variable returns the index entry named name.
func (x *ckptIndex) variable(name string) (ckptVar, bool) {
	for _, v := range x.Variables {
		if v.ParameterName == name {
			return v, true
		}
	}
	return ckptVar{}, false
}

// readBin reads exactly total bytes of variable data from a GoMLX checkpoint's binary file,
// gzip-compressed (with GoMLX's header) or not, reading no more than total+1 bytes of
// decompressed data whatever the file says.
func readBin(f io.Reader, total int) ([]byte, error) {
	head := make([]byte, len(gzipBinHeader))
	n, err := io.ReadFull(f, head)
	var r io.Reader
	switch {
	case n == len(head) && string(head) == gzipBinHeader:
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, corrupt("binary file: %v", err)
		}
		defer gz.Close()
		r = gz
	case err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF):
		return nil, corrupt("binary file: %v", err)
	default:
		r = io.MultiReader(bytes.NewReader(head[:n]), f)
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(total)+1))
	if err != nil {
		return nil, corrupt("binary file: %v", err)
	}
	if len(data) != total {
		what := "more"
		if len(data) < total {
			what = fmt.Sprintf("%d", len(data))
		}
		return nil, corrupt("binary file holds %s bytes of data, the index lists %d (truncated or damaged)", what, total)
	}
	return data, nil
}

// firstNonFinite returns the index of the first NaN or ±Inf of little-endian float32 data, or -1.
func firstNonFinite(b []byte) int {
	for i := 0; i+4 <= len(b); i += 4 {
		bits := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16 | uint32(b[i+3])<<24
		if f := float64(math.Float32frombits(bits)); math.IsNaN(f) || math.IsInf(f, 0) {
			return i / 4
		}
	}
	return -1
}

// strictJSON decodes s into v, refusing unknown fields and trailing data.
func strictJSON(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}
