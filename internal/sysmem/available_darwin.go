package sysmem

import "golang.org/x/sys/unix"

// available is the machine's memory (macOS says what is free only in
// pages the system may reclaim at once; the total bounds what can be had).
func available() (int64, bool) {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil || int64(n) <= 0 {
		return 0, false
	}
	return int64(n), true
}
