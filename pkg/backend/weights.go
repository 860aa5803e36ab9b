package backend

import (
	"maps"

	"github.com/gomlx/gomlx/core/tensors"
	"github.com/gomlx/gomlx/ml/model"
)

// Weights are the values a store's variables hold at one moment, by variable path. A training
// step, LoadStateDict or a checkpoint load gives a variable a new value (a new tensor), so the
// Weights taken before and after differ.
//
// Why it matters: the pure-Go backend (compute v0.1.14) prefers variables as constants
// (Capabilities.PreferConstantsForVariables), and GoMLX then compiles every graph that is not a
// training graph with each variable's current value baked in: a compiled evaluation graph keeps
// computing with the weights it was compiled with. Code that keeps compiled evaluation graphs
// (attention modules, the GPT) keeps them for one Weights and compiles again when they change:
// the cost of a compilation after each weight change, for inference graphs whose constant weights
// the backend can pre-pack. Training graphs are not affected: their variables stay parameters.
type Weights map[string]*tensors.Tensor

// WeightsOf returns store's current Weights (variables without a value are left out).
func WeightsOf(store *model.Store) Weights {
	w := Weights{}
	for v := range store.IterVariables() {
		if v.HasValue() {
			if t, err := v.Value(); err == nil {
				w[v.Path()] = t
			}
		}
	}
	return w
}

// Same reports whether w and other are the same values: same variables, same tensors.
func (w Weights) Same(other Weights) bool { return maps.Equal(w, other) }
