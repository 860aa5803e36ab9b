//go:build !amd64

package backend

// installSgemm does nothing: internal/sgemm's kernel is amd64 assembly.
func installSgemm() {}

var sgemmState = sgemmOff + "no kernel for this architecture"
