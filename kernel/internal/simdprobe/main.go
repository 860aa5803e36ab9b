// Command simdprobe prints whether GoMLX's SIMD kernels were compiled in (backend.SIMD):
// `go run ./kernel doctor` builds it with the environment of the attnbook kernel's cells.
//
// Output: one line, "on DETAIL" or "off DETAIL".
package main

import (
	"fmt"

	"github.com/attnbook/attnbook/pkg/backend"
)

func main() {
	on, detail := backend.SIMD()
	state := "off"
	if on {
		state = "on"
	}
	fmt.Println(state, detail)
}
