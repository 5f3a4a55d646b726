// Package sysmem says how much memory this process may still take, so
// that an allocation sized by input (a tensor's claimed shape, a flag) is
// refused with an error instead of ending the process, which Go does,
// beyond any recover, when an allocation fails.
package sysmem

import "math"

// maxAddressable bounds any allocation: Go's heap assumes 48-bit
// addresses; a 32-bit process has 4 GiB of them for everything (256 MiB).
const maxAddressable = min(1<<48, math.MaxInt/8)

// Available is the memory this process may allocate now, where the
// platform says (available_*.go), else false; never more than a 32-bit
// process can address.
func Available() (int64, bool) {
	n, ok := available()
	return min(n, math.MaxInt/2), ok
}

// Allows reports whether one allocation of n bytes sized by input may be
// made: at most half the memory available (where known) and at most 2^48
// bytes (256 MiB in a 32-bit process). limit is the most it allows,
// always below math.MaxInt: an allowed n is a valid make length.
func Allows(n int64) (limit int64, ok bool) {
	limit = maxAddressable
	if avail, known := Available(); known {
		limit = min(limit, avail/2)
	}
	return limit, n >= 0 && n <= limit
}
