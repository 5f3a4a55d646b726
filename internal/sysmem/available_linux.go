package sysmem

import (
	"bufio"
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// available is the kernel's estimate of the memory available without
// swapping (MemAvailable), or this process's address-space limit where that
// is lower.
func available() (int64, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	var avail int64 = -1
	for sc := bufio.NewScanner(bytes.NewReader(b)); sc.Scan(); {
		if f := bytes.Fields(sc.Bytes()); len(f) >= 2 && string(f[0]) == "MemAvailable:" {
			if kb, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
				avail = kb << 10
			}
		}
	}
	if avail < 0 {
		return 0, false
	}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_AS, &rl) == nil && rl.Cur != unix.RLIM_INFINITY && int64(rl.Cur) >= 0 && int64(rl.Cur) < avail {
		avail = int64(rl.Cur)
	}
	return avail, true
}
