package ndarray

import (
	"cmp"
	"slices"
)

// MulNonNeg is a*b for a, b >= 0, false when it overflows.
func MulNonNeg(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	if a > (1<<63-1)/b {
		return 0, false
	}
	return a * b, true
}

// Product is the number of elements of shape, false when a dimension is
// negative or the product overflows.
func Product(shape []int64) (int64, bool) {
	n := int64(1)
	for _, d := range shape {
		var ok bool
		if n, ok = MulNonNeg(n, d); d < 0 || !ok {
			return 0, false
		}
	}
	return n, true
}

// RowMajor returns the row-major (C-contiguous) strides of shape in units
// of unit: 1 for elements, the item size for bytes. A dimension of no
// elements counts as one, so that no stride is 0. The product of shape
// times unit must fit an int64.
func RowMajor(shape []int64, unit int64) []int64 {
	s := make([]int64, len(shape))
	acc := unit
	for k := len(shape) - 1; k >= 0; k-- {
		s[k] = acc
		acc *= max(shape[k], 1)
	}
	return s
}

// LogicalStrides are the strides, in units of unit, of rows laid out one
// after another, each a row-major tensor of physical shape phys seen in
// logical order (logical dimension i is phys[logical[i]]): the row stride
// first, then one per logical dimension.
func LogicalStrides(phys []int64, logical []int, unit int64) []int64 {
	ps := RowMajor(append([]int64{1}, phys...), unit)
	s := []int64{ps[0]}
	for _, p := range logical {
		s = append(s, ps[1+p])
	}
	return s
}

// Matches reports whether strides lay out shape as want does: every
// dimension longer than one element has the wanted stride (a dimension of
// one element has no next element to reach). An array of no elements
// matches anything.
func Matches(shape, strides, want []int64) bool {
	if slices.Contains(shape, 0) {
		return true
	}
	for k, n := range shape {
		if n > 1 && strides[k] != want[k] {
			return false
		}
	}
	return true
}

// Extent is the memory an array of shape (not empty) laid out with strides
// in bytes, item bytes an element, reaches from its first element: lo (<=
// 0 with negative strides) is the offset of the lowest byte, size the bytes
// from there to the end of the highest element. ok is false when any of
// it, or hi - lo, overflows: a producer's strides may be anything.
func Extent(shape, strides []int64, item int64) (lo, size int64, ok bool) {
	lo, hi, ok := Span(shape, strides)
	if !ok || item <= 0 || hi-lo > 1<<63-1-item { // hi - lo cannot overflow: Span checked
		return 0, 0, false
	}
	return lo, hi - lo + item, true
}

// Scaled is strides times unit (elements to bytes), false when one
// overflows.
func Scaled(strides []int64, unit int64) ([]int64, bool) {
	b := make([]int64, len(strides))
	for k, s := range strides {
		b[k] = s * unit
		if unit != 0 && b[k]/unit != s {
			return nil, false
		}
	}
	return b, true
}

// Span returns the offsets, from the first element, of the lowest and the
// highest element of a non-empty array of shape laid out with strides (lo
// <= 0 with negative strides), and false when they, or hi - lo, overflow.
func Span(shape, strides []int64) (lo, hi int64, ok bool) {
	for k, n := range shape {
		if n <= 1 {
			continue
		}
		ext := (n - 1) * strides[k]
		if ext/(n-1) != strides[k] {
			return 0, 0, false
		}
		if ext < 0 {
			if lo < -1<<63-ext {
				return 0, 0, false
			}
			lo += ext
		} else {
			if hi > 1<<63-1-ext {
				return 0, 0, false
			}
			hi += ext
		}
	}
	if hi > 1<<63-1+lo { // hi - lo overflows (lo <= 0)
		return 0, 0, false
	}
	return lo, hi, true
}

// Copy copies every element of an array of shape, item bytes each, from
// src, where the element at index i is at srcBase + Σ i[k]·from[k], to dst,
// where it goes to Σ i[k]·to[k] (strides in bytes; to's must be
// non-negative). Dimensions are visited in the order of dst's strides, so
// that dst is written front to back when to is a permuted row-major layout.
func Copy(dst, src []byte, shape, to, from []int64, srcBase, item int64) {
	if slices.Contains(shape, 0) {
		return
	}
	nd := len(shape)
	if nd == 0 {
		copy(dst[:item], src[srcBase:srcBase+item])
		return
	}
	order := Order(to)
	inner := order[nd-1]
	n, ds, ss := shape[inner], to[inner], from[inner]
	idx := make([]int64, nd-1)
	so, do := srcBase, int64(0)
	for {
		if ds == item && ss == item {
			copy(dst[do:do+n*item], src[so:so+n*item])
		} else {
			for i := range n {
				copy(dst[do+i*ds:do+i*ds+item], src[so+i*ss:so+i*ss+item])
			}
		}
		// Advance the outer dimensions like an odometer.
		j := nd - 2
		for ; j >= 0; j-- {
			k := order[j]
			idx[j]++
			so += from[k]
			do += to[k]
			if idx[j] < shape[k] {
				break
			}
			so -= shape[k] * from[k]
			do -= shape[k] * to[k]
			idx[j] = 0
		}
		if j < 0 {
			return
		}
	}
}

// Order is the dimensions of strides by decreasing stride, outermost
// first: a row-major layout's storage order. Equal strides keep their
// order.
func Order(strides []int64) []int {
	order := make([]int, len(strides))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(strides[b], strides[a]) })
	return order
}

// PackBits returns an Arrow bitmap with bit i set where b[i] is not zero,
// and the number of zero bytes.
func PackBits(b []byte) (bits []byte, zeros int64) {
	bits = make([]byte, (len(b)+7)/8)
	for i, v := range b {
		if v != 0 {
			bits[i>>3] |= 1 << (i & 7)
		} else {
			zeros++
		}
	}
	return bits, zeros
}
