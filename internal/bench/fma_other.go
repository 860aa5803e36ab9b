//go:build !(goexperiment.simd && amd64)

package bench

// measureFMA needs GOEXPERIMENT=simd on amd64; elsewhere the peak is the nominal formula alone.
func measureFMA() (float64, string) { return 0, "" }
