package backend

import "testing"

func TestUseSgemm(t *testing.T) {
	for _, c := range []struct {
		batch, m, n, k int
		want           bool
	}{
		{1, 64, 64, 64, true},      // 2^18 multiply-adds
		{1, 32, 32, 32, false},     // too small
		{96, 1024, 1024, 64, true}, // the chapter's scores at the full size
		{1, 1, 768, 768, false},    // one row: mostly padding
		{1, 8, 768, 768, false},    // eight rows
		{1, 12, 768, 768, true},    // twelve: one full tile
		{1, 768, 8, 768, false},    // eight columns
		{48, 64, 64, 32, true},     // notebook 10's scores
		{16, 16, 16, 63, false},    // just under 2^18
	} {
		if got := useSgemm(c.batch, c.m, c.n, c.k); got != c.want {
			t.Errorf("useSgemm(batch=%d, m=%d, n=%d, k=%d) = %v, want %v", c.batch, c.m, c.n, c.k, got, c.want)
		}
	}
}

func TestMatmulSwitchedOff(t *testing.T) {
	for v, want := range map[string]bool{"": false, "off": true, "OFF": true, "0": true, "false": true, "on": false, "1": false} {
		t.Setenv(MatmulEnv, v)
		if got := matmulSwitchedOff(); got != want {
			t.Errorf("$%s=%q: switched off %v, want %v", MatmulEnv, v, got, want)
		}
	}
}
