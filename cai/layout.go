package cai

import (
	"slices"

	"github.com/purearrow/cdevice/abi"
)

// cudaFamily reports whether memory of device type t can be described by
// the interface. Tests widen it (export_test.go) to run on the CPU.
var cudaFamily = func(t abi.DeviceType) bool {
	return t == abi.DeviceCUDA || t == abi.DeviceCUDAHost || t == abi.DeviceCUDAManaged
}

// cStrides returns the row-major (C-contiguous) strides of shape.
func cStrides(shape []int64, itemsize int64) []int64 {
	s := make([]int64, len(shape))
	acc := itemsize
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= max(shape[i], 1)
	}
	return s
}

// contiguous reports whether strides describe the row-major layout of
// shape: nil, or equal to the C strides in every dimension longer than 1
// (a dimension of one element has no next element to skip to), or an array
// of no elements.
func contiguous(shape, strides []int64, itemsize int64) bool {
	if strides == nil {
		return true
	}
	c := cStrides(shape, itemsize)
	for i, n := range shape {
		if n == 0 {
			return true
		}
		if n > 1 && strides[i] != c[i] {
			return false
		}
	}
	return true
}

// permuted finds a zero-copy tensor layout for a strided array of 3 or
// more dimensions: rows (dimension 0) one after another, each a dense
// row-major tensor whose dimensions are a permutation of the logical ones.
// It returns the physical shape of a row and the permutation (logical
// dimension i is physical dimension perm[i]), or ok false. Dimensions of
// one element make the order ambiguous: they are not matched.
func permuted(shape, strides []int64, itemsize int64) (phys, perm []int64, ok bool) {
	inner, st := shape[1:], strides[1:]
	if len(inner) < 2 {
		return nil, nil, false
	}
	for _, n := range inner {
		if n <= 1 {
			return nil, nil, false
		}
	}
	order := make([]int, len(inner)) // physical position → logical dimension
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case st[a] > st[b]:
			return -1
		case st[a] < st[b]:
			return 1
		}
		return 0
	})
	want := itemsize
	for j := len(order) - 1; j >= 0; j-- {
		if st[order[j]] != want {
			return nil, nil, false
		}
		want *= inner[order[j]]
	}
	if shape[0] > 1 && strides[0] != want {
		return nil, nil, false
	}
	phys = make([]int64, len(inner))
	perm = make([]int64, len(inner))
	for j, l := range order {
		phys[j] = inner[l]
		perm[l] = int64(j)
	}
	return phys, perm, true
}

// span is the byte range [lo, hi) around the first element that the
// elements of a non-empty strided array touch (lo <= 0 with negative
// strides).
func span(shape, strides []int64, itemsize int64) (lo, hi int64) {
	for i, n := range shape {
		step := (n - 1) * strides[i]
		if step < 0 {
			lo += step
		} else {
			hi += step
		}
	}
	return lo, hi + itemsize
}

// gather copies the elements of a strided array into dst, visiting the
// dimensions in order (order[0] outermost): src holds the array's span with
// the first element at src[base]. dst receives product(shape) elements.
func gather(dst, src []byte, base int64, shape, strides []int64, order []int, itemsize int64) {
	nd := len(order)
	if nd == 0 {
		copy(dst, src[base:base+itemsize])
		return
	}
	idx := make([]int64, nd)
	inner := order[nd-1]
	n, step := shape[inner], strides[inner]
	off, out := base, int64(0)
	for {
		p := off
		if step == itemsize {
			out += int64(copy(dst[out:out+n*itemsize], src[p:p+n*itemsize]))
		} else {
			for range n {
				out += int64(copy(dst[out:out+itemsize], src[p:p+itemsize]))
				p += step
			}
		}
		// Advance the outer dimensions like an odometer.
		k := nd - 2
		for ; k >= 0; k-- {
			d := order[k]
			idx[k]++
			off += strides[d]
			if idx[k] < shape[d] {
				break
			}
			off -= idx[k] * strides[d]
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// packBits sets bit i of a new bitmap where b[i] is non-zero and returns it
// with the number of zero bytes.
func packBits(b []byte) (bits []byte, zeros int64) {
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

// bit reads bit i of an Arrow bitmap (least significant bit first).
func bit(bits []byte, i int64) bool { return bits[i>>3]>>(i&7)&1 != 0 }
