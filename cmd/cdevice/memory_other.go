//go:build !linux && !darwin && !windows

package main

// availableMemory is not known here: bench's --size is bounded by
// maxBenchSize alone.
func availableMemory() (int64, bool) { return 0, false }
