//go:build linux && amd64

// Command pjrtcpu installs the XLA PJRT CPU plugin with go-xla's own installer, at the plugin
// version that the go-xla module pinned in go.sum was tested with (installer.CPUAutoInstall).
// The classroom image runs it when built with --build-arg WITH_XLA_CPU=1; it downloads from
// GitHub (github.com/gomlx/pjrt-cpu-binaries), so it needs internet.
//
//	go run ./docker/pjrtcpu [DIR]   # DIR defaults to /usr/local/lib/go-xla
//
// go-xla searches ~/.local/lib/go-xla and /usr/local/lib/go-xla (or $PJRT_PLUGIN_LIBRARY_PATH).
package main

import (
	"fmt"
	"os"

	"github.com/gomlx/go-xla/installer"
)

func main() {
	dir := "/usr/local/lib/go-xla"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := installer.CPUAutoInstall(dir, false, installer.Verbose); err != nil {
		fmt.Fprintf(os.Stderr, "pjrtcpu: installing the PJRT CPU plugin into %s: %v\n", dir, err)
		os.Exit(1)
	}
	fmt.Printf("pjrtcpu: PJRT CPU plugin installed in %s\n", dir)
}
