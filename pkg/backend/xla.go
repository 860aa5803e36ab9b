//go:build !noxla

package backend

import (
	"sort"

	"github.com/gomlx/go-xla/compute/xla" // registers "xla"; its auto-installer is not imported
	"github.com/gomlx/go-xla/pjrt"
)

// XLACompiled reports whether this binary includes GoMLX's XLA backend (false with -tags noxla).
const XLACompiled = true

func init() {
	// Nothing is downloaded at notebook run time: go-xla's auto-installer lives in a package
	// (compute/xla/autoinstall) this module never imports; switch the flag off as well.
	xla.EnableAutoInstall(false)
}

// localPlugins lists the PJRT plugin names go-xla finds in its search path
// ($PJRT_PLUGIN_LIBRARY_PATH, ~/.local/lib/go-xla, /usr/local/lib/go-xla, ld.so paths).
func localPlugins() []string {
	var names []string
	for name := range pjrt.AvailablePlugins() {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
