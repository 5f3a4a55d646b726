//go:build !linux && !darwin

package main

// availableMemory is not known here (Windows: GlobalMemoryStatusEx is not
// in x/sys): bench's --size is bounded by maxBenchSize alone.
func availableMemory() (int64, bool) { return 0, false }
