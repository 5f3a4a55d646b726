//go:build !arm

package dlpack

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
	ByteOffset uint64
}
