package main

import (
	"fmt"
	"math"

	"github.com/purearrow/cdevice/internal/sysmem"
)

// maxBenchSize bounds bench's --size where the machine's memory is not
// known: 1 TiB (an allocation past 2^48 bytes panics, one past the
// machine's memory ends the process beyond any recover), or in a 32-bit
// process, whose three arrays share 4 GiB of addresses, 256 MiB.
const maxBenchSize = min(1<<40, math.MaxInt/8)

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
