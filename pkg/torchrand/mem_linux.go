package torchrand

import (
	"sync"
	"syscall"
)

// totalMemory is the machine's physical memory in bytes (0 if unknown).
var totalMemory = sync.OnceValue(func() uint64 {
	var info syscall.Sysinfo_t
	if err := syscall.Sysinfo(&info); err != nil {
		return 0
	}
	return uint64(info.Totalram) * uint64(info.Unit)
})
