// Package dlpack converts between cdevice.DeviceArray and DLPack 1.x
// tensors (DLManagedTensorVersioned, and the legacy DLManagedTensor), the
// tensor-exchange structs of PyTorch, JAX, CuPy, NumPy and TensorFlow, on any
// device, zero-copy wherever the layouts allow.
//
// It owns the Go mirrors of dlpack.h's structs and constants (layouts
// asserted against the C compiler's in layout_test.go), Export and Import.
// N-D tensors are Arrow's canonical arrow.fixed_shape_tensor extension type
// (package tensor; any registered implementation is read).
//
// # Types
//
// Rows of an array are the first dimension of the tensor.
//
//	Arrow type                         dtype       shape          Export              Import
//	int8/16/32/64                      int         [n]            zero-copy           zero-copy (default)
//	uint8/16/32/64                     uint        [n]            zero-copy           zero-copy (default)
//	float16/32/64                      float       [n]            zero-copy           zero-copy (default)
//	bool (bits)                        bool 8      [n]            copy (bytes)        copy, WithType(Boolean)
//	arrow.bool8 (bytes)                bool 8      [n]            zero-copy           zero-copy (default for bool)
//	fixed_size_list<T, k>              T           [n, k]         zero-copy           zero-copy, WithType
//	fixed_size_list<f_s_l<T, j>, k>    T           [n, k, j]      zero-copy           zero-copy, WithType
//	fixed_shape_tensor<T, s>           T           [n, s...]      zero-copy           zero-copy (default for N-D)
//	fixed_shape_tensor<T, s, perm p>   T           [n, s[p[i]]..] zero-copy, strides  zero-copy, WithType; or
//	                                                              permuted            WithAllowCopy: a row-major copy
//	any of these with nulls            -           -              refused (ErrNulls); a copy with WithNullFill
//	strings, binary, lists, maps, structs, unions, dictionaries, decimals, temporal
//	types, other extensions: refused (cdevice.ErrUnsupported)
//
// T is one of the fixed-width types above; fixed_size_lists and fixed
// shape tensors nest in each other (a list of tensors, a tensor of lists).
// A fixed shape tensor's dim_names are kept on the Arrow type only: DLPack
// has no dimension names. arrow.bool8 is recognized by its name and int8
// storage, whichever package implements it; Import makes the one
// registered with arrow-go (arrow-go's arrow/extensions registers one when
// a program imports it), else an unregistered one of this module.
// On import, dtypes without an Arrow type (bfloat16, complex, float8/6/4,
// opaque handles, vector lanes) and 0-dimensional tensors are refused.
//
// Zero-copy means the tensor's data pointer is the array's values buffer
// (or the reverse) and byte_offset carries the array's offset, so it works
// for every device, cl_mem handles included. Export retains the array
// until the consumer calls the tensor's deleter; Import wraps the tensor
// with cdevice.NewDeviceArray, whose release calls the deleter once, when
// the last reference goes. Import of a tensor whose strides are not the
// row-major layout of its Arrow type is refused unless WithAllowCopy.
//
// # Devices
//
// DLPack's DLDeviceType numbers are Arrow's device type numbers, so
// DeviceType is abi.DeviceType and abi's constants name DLPack's devices;
// DLPack's DeviceMAIA and DeviceTrn have no Arrow counterpart. CPU memory
// is device_id 0 in DLPack and -1 in Arrow. Import finds the device with device.Lookup; a device with no
// loaded backend is an error wrapping cdevice.ErrUnknownDevice.
//
// # Ownership
//
// Export's struct and its shape and strides live in C memory; its
// manager_ctx is an integer handle. The deleter runs once: a later call
// with the same struct is ignored without reading the freed memory, and
// counted in cdevice.LiveLeaks().StrayDeletes, as long as no later Export
// got the same address from the C allocator (a consumer that deletes twice
// has a bug either way). Exported tensors whose deleter has not run, and
// imported ones whose deleter has not been called, are counted in
// cdevice.LiveLeaks() (ExportedTensors, ImportedTensors). Import takes
// ownership of the tensor even when it fails: the deleter has then been
// called before Import returns.
//
// # Layout
//
// The mirrors' sizes and offsets are C's on every supported architecture.
// On 32-bit ARM, C aligns DLTensor and the managed structs to 8 bytes and
// Go to 4 (Tensor carries C's padding before ByteOffset): structs handed to
// C should come from C memory, as Export's do, or the Go heap, not from Go
// stack variables or the inside of other Go structs.
package dlpack
