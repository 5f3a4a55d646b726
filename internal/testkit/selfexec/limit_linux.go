package selfexec

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// limitAddressSpace sets RLIMIT_AS to the address space the process has
// now (VmSize) plus extra bytes.
func limitAddressSpace(extra int64) error {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return err
	}
	pages, err := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
	if err != nil {
		return err
	}
	n := uint64(pages*int64(os.Getpagesize()) + extra)
	return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: n, Max: n})
}

// peakRSS is this process's largest resident set so far, in bytes
// (VmHWM), 0 where it cannot be read.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
