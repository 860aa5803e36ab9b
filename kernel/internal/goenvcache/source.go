package goenvcache

import _ "embed"

// Source is goenvcache.go, which the goimports built for cells compiles in (kernel/internal/thptools).
//
//go:embed goenvcache.go
var Source []byte
