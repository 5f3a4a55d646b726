package abi_test

import (
	"fmt"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
)

// Device types print as DLPack/Arrow names.
func ExampleDeviceType() {
	fmt.Println(abi.DeviceCUDA, abi.DeviceOpenCL, abi.DeviceType(5), abi.DeviceType(5).Valid())
	// Output: cuda opencl device(5) false
}

// A C function called through purego returns a struct's address as a
// uintptr; At gives the typed struct.
func ExampleAt() {
	var s abi.ArrayStream // stands for a C library's struct
	p := uintptr(unsafe.Pointer(&s))
	fmt.Println(abi.At[abi.ArrayStream](p) == &s, abi.At[abi.ArrayStream](0) == nil)
	// Output: true true
}

// Pointer follows any other address field, here the schema's C string.
func ExamplePointer() {
	format := []byte("i\x00") // stands for a C library's string
	s := abi.Schema{Format: uintptr(unsafe.Pointer(&format[0]))}
	fmt.Println(unsafe.String((*byte)(abi.Pointer(s.Format)), 1))
	// Output: i
}
