// Command kernel installs, launches, runs and checks attnbook's Jupyter setup:
//
//	go run ./kernel setup              install GoNB, goimports, gopls, Jupyter; register the kernel
//	go run ./kernel up                 setup, then open Jupyter on notebooks/
//	go run ./kernel run NOTEBOOK...    execute notebooks headless (copies in out/executed/)
//	go run ./kernel doctor             versions, backend, plugins, GPU; what is missing
//	go run ./kernel test [ARGS]        setup, then go test ./... (ARGS go to go test)
//
// Run `go run ./kernel help` for the flags of each.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
