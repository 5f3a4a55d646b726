//go:build arm

package dlpack

import "unsafe"

// On 32-bit ARM the C ABI aligns uint64_t to 8 bytes and Go to 4, so Tensor
// carries C's padding before ByteOffset explicitly (offset 32, size 40).

// Tensor mirrors DLTensor. Data, Shape and Strides are C pointers: Data is
// device memory (a device pointer, an SVM pointer or a cl_mem handle), Shape
// and Strides point to Ndim int64 values each. Strides count elements, not
// bytes, and may be NULL for a row-major compact tensor. ByteOffset is added
// to Data (in bytes) to reach the first element.
type Tensor struct {
	Data       uintptr // void*
	Device     Device
	Ndim       int32
	Dtype      DataType
	Shape      uintptr // int64_t*
	Strides    uintptr // int64_t*, may be NULL
	_          [4]byte
	ByteOffset uint64
}

// Compile-time checks of the armv7hf sizes (layout_test.go checks every
// offset when the tests run on arm).
var (
	_ [40 - unsafe.Sizeof(Tensor{})]struct{}
	_ [unsafe.Sizeof(Tensor{}) - 40]struct{}
	_ [48 - unsafe.Sizeof(ManagedTensor{})]struct{}
	_ [unsafe.Sizeof(ManagedTensor{}) - 48]struct{}
	_ [64 - unsafe.Sizeof(ManagedTensorVersioned{})]struct{}
	_ [unsafe.Sizeof(ManagedTensorVersioned{}) - 64]struct{}
)
