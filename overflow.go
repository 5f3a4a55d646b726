package cdevice

import (
	"math"
	"unsafe"
)

// mulChecked multiplies non-negative a and b. On overflow it reports false
// and returns T's largest value, more than any buffer holds, so a caller may
// also use the result as a saturated size.
func mulChecked[T int | int64](a, b T) (T, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	largest := T(uint64(math.MaxInt64) >> (64 - 8*unsafe.Sizeof(a)))
	if a > largest/b {
		return largest, false
	}
	return a * b, true
}
