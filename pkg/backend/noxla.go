//go:build noxla

package backend

// XLACompiled reports whether this binary includes GoMLX's XLA backend (false with -tags noxla).
const XLACompiled = false

// localPlugins finds nothing: without XLA compiled in, no plugin could be used.
func localPlugins() []string { return nil }
