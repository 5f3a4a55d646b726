package cai

import (
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ndarray"
)

// cudaFamily reports whether memory of device type t can be described by
// the interface. Tests widen it (export_test.go) to run on the CPU.
var cudaFamily = func(t abi.DeviceType) bool {
	return t == abi.DeviceCUDA || t == abi.DeviceCUDAHost || t == abi.DeviceCUDAManaged
}

// contiguous reports whether strides describe the row-major layout of
// shape: nil, or equal to the row-major strides in every dimension longer
// than 1 (a dimension of one element has no next element to skip to), or
// an array of no elements.
func contiguous(shape, strides []int64, itemsize int64) bool {
	return strides == nil || ndarray.Matches(shape, strides, ndarray.RowMajor(shape, itemsize))
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
	order := ndarray.Order(st) // physical position → logical dimension
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
