package cai

import "github.com/purearrow/cdevice/abi"

// AllowAnyDevice lets Export and Import accept memory of any device type
// (the CPU, in tests), until restore is called.
func AllowAnyDevice() (restore func()) {
	old := cudaFamily
	cudaFamily = func(abi.DeviceType) bool { return true }
	return func() { cudaFamily = old }
}

// Internals the tests check directly.
var (
	Contiguous  = contiguous
	Permuted    = permuted
	NativeOrder = nativeOrder
)
