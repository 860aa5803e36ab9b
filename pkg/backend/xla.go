//go:build !noxla

package backend

import (
	"sort"

	"github.com/gomlx/go-xla/pkg/pjrt"
	"github.com/gomlx/gomlx/backends/xla" // registers "xla"
)

// XLACompiled reports whether this binary includes GoMLX's XLA backend (false with -tags noxla).
const XLACompiled = true

func init() {
	// GoMLX's XLA backend downloads plugins from the internet by default: never at notebook run time.
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
