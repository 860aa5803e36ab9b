// Command mhabench runs the multi-head attention bench of internal/mhabench on its own; it is
// what `go run ./kernel bench` runs, for use before (or without) the kernel command:
//
//	go run ./internal/mhabench/cmd/mhabench --quick
package main

import (
	"os"

	"github.com/attnbook/attnbook/internal/mhabench"
)

func main() {
	os.Exit(mhabench.Main(os.Args[1:], os.Stdout, os.Stderr))
}
