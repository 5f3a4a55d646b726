package main

import (
	"fmt"

	"github.com/purearrow/cdevice/internal/sysmem"
)

// maxBenchSize bounds bench's --size where the machine's memory is not
// known: 1 TiB (an allocation past 2^48 bytes panics, one past the
// machine's memory ends the process beyond any recover).
const maxBenchSize = 1 << 40

// benchSizeLimit is the largest --size bench can hold (its source array,
// the device copy and the copy back: three of it) in the memory this
// process may use now (sysmem.Available), and what limits it.
func benchSizeLimit() (int64, string) {
	avail, ok := sysmem.Available()
	if !ok || avail/3 >= maxBenchSize {
		return maxBenchSize, "the most bench takes"
	}
	return avail / 3, fmt.Sprintf("a third of the %d bytes of memory available", avail)
}
