package torchrand

import (
	"encoding/binary"
	"fmt"
	"math"
)

// stateMagic starts every State: the format's name and version.
const stateMagic = "torchrand.MT19937/1\x00"

// stateLen is the length of a State: magic, seed, index, the 624 state words, the cached normal
// value and its flag.
const stateLen = len(stateMagic) + 4 + 4 + 4*mtN + 8 + 1

// State returns g's complete state as bytes — the role of torch.get_rng_state(), in this
// package's own layout (not PyTorch's) — so that a generator can be saved with a checkpoint and
// continued later: SetState(g.State()) on any Generator makes it produce exactly what g produces
// from here on.
func (g *Generator) State() []byte {
	b := make([]byte, 0, stateLen)
	b = append(b, stateMagic...)
	b = binary.LittleEndian.AppendUint32(b, g.seed)
	b = binary.LittleEndian.AppendUint32(b, uint32(g.index))
	for _, w := range g.state {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(g.nextNormal))
	if g.hasNextNormal {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	return b
}

// SetState restores a state returned by State (torch.set_rng_state()). Bytes that State did not
// write — another length, another format, an index outside the engine's 624 words, a flag that
// is not 0 or 1 — are an error, and leave g unchanged.
func (g *Generator) SetState(state []byte) error {
	if len(state) != stateLen {
		return fmt.Errorf("torchrand.Generator.SetState: state has %d bytes, want %d (what Generator.State returns)", len(state), stateLen)
	}
	if string(state[:len(stateMagic)]) != stateMagic {
		return fmt.Errorf("torchrand.Generator.SetState: state does not start with %q: not written by Generator.State", stateMagic[:len(stateMagic)-1])
	}
	b := state[len(stateMagic):]
	var next Generator
	next.seed = binary.LittleEndian.Uint32(b)
	index := binary.LittleEndian.Uint32(b[4:])
	if index > mtN {
		return fmt.Errorf("torchrand.Generator.SetState: state index %d is outside [0, %d]", index, mtN)
	}
	next.index = int(index)
	b = b[8:]
	for i := range next.state {
		next.state[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	b = b[4*mtN:]
	next.nextNormal = math.Float64frombits(binary.LittleEndian.Uint64(b))
	switch b[8] {
	case 0:
	case 1:
		next.hasNextNormal = true
	default:
		return fmt.Errorf("torchrand.Generator.SetState: state's cached-normal flag is %d, want 0 or 1", b[8])
	}
	*g = next
	return nil
}
