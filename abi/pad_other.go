//go:build !arm

package abi

// Elsewhere Go lays int64 fields out as C does; these take no space.
type (
	padInt64 [0]byte
	align8   [0]uint64
)
