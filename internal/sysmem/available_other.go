//go:build !linux && !darwin && !windows

package sysmem

// available is not known here.
func available() (int64, bool) { return 0, false }
