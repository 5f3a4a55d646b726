//go:build !linux

package selfexec

// limitAddressSpace: only Linux is limited here.
func limitAddressSpace(int64) error { return nil }

// peakRSS: unknown here.
func peakRSS() int64 { return 0 }
