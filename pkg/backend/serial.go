package backend

import (
	"os"
	"sync"

	"github.com/gomlx/compute"
)

// SerialConfig is the pure-Go backend without intra-op workers: one executor, and each
// operation computed whole on the goroutine that runs it ("parallelism=1").
const SerialConfig = "go:num_executors=1,parallelism=1"

var (
	serialOnce sync.Once
	serial     compute.Backend
	serialErr  error
)

// Serial returns, for the pure-Go backend b, the process-wide pure-Go backend started with
// [SerialConfig]; for any other backend (XLA), b itself.
//
// It is for graphs of many small operations run one after another, such as generating text a
// token at a time: there the backend's default of splitting each operation over its worker pool
// costs more than the work it splits. Measured on a 2-core Intel Xeon (2026-12-03, pkg/gpt's
// BenchmarkGenerateBlock, notebook 10's model): a block of 64 tokens took 18.2–18.3 ms with the
// key–value cache and 95.3–95.4 ms without on this backend, against 26.8–27.6 and 126–129 ms on the
// default one; 14 % of a cached block went to waking workers (runtime.futex). Training wants the
// workers (a nanoGPT step 61 ms serial against 37 ms), so it stays on b.
//
// A tensor on one backend's device is not an argument on the other (GoMLX refuses it): give each
// its own. Variables are no such argument where the go backend compiles them as constants
// (inference graphs: PreferConstantsForVariables), which is how pkg/gpt's Generate uses it.
func Serial(b compute.Backend) (compute.Backend, error) {
	if !IsGo(b) {
		return b, nil
	}
	serialOnce.Do(func() {
		serial, serialErr = startQuietly(SerialConfig)
	})
	return serial, serialErr
}

// startQuietly is newBackend without the line the go backend prints to standard output when
// given a parallelism ("Go backend: parallelism set to 1"), which would land in a notebook's
// output. Standard output is /dev/null while the backend starts.
func startQuietly(config string) (compute.Backend, error) {
	if null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0); err == nil {
		stdout := os.Stdout
		os.Stdout = null
		defer func() {
			os.Stdout = stdout
			null.Close()
		}()
	}
	return newBackend(config)
}
