package dlpack

import (
	"strconv"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
)

// The DLPack version this package speaks (DLPACK_MAJOR_VERSION and
// DLPACK_MINOR_VERSION of dlpack.h). A tensor whose major version differs
// cannot be read: Import calls its deleter and refuses it.
const (
	MajorVersion = 1
	MinorVersion = 3
)

// Bits of ManagedTensorVersioned.Flags (DLPACK_FLAG_BITMASK_*).
const (
	// FlagReadOnly: the consumer must not write to the tensor's memory.
	FlagReadOnly uint64 = 1 << 0
	// FlagIsCopied: the producer made a copy for this tensor; the consumer
	// owns it alone until it calls the deleter.
	FlagIsCopied uint64 = 1 << 1
	// FlagIsSubbyteTypePadded: a sub-byte dtype (float4, float6) is stored
	// one element per byte instead of packed.
	FlagIsSubbyteTypePadded uint64 = 1 << 2
)

// DeviceType is DLDeviceType, which is Arrow's ArrowDeviceType: DLPack and
// Arrow number device types alike, so a DLPack device type is an
// abi.DeviceType and abi's constants (abi.DeviceCPU, abi.DeviceCUDA, ...)
// name it. DLPack has two more, DeviceMAIA and DeviceTrn, which Arrow
// lacks: abi.DeviceType's Valid is false for them and its String writes
// "device(17)" and "device(18)", and Import refuses them (no device of this
// module can hold their memory).
type DeviceType = abi.DeviceType

// The DLDeviceType values that Arrow's device types lack.
const (
	DeviceMAIA DeviceType = 17 // kDLMAIA: Microsoft MAIA
	DeviceTrn  DeviceType = 18 // kDLTrn: AWS Trainium
)

// dlName names a DLPack device type for error messages, MAIA and Trn
// included.
func dlName(t DeviceType) string {
	switch t {
	case DeviceMAIA:
		return "maia"
	case DeviceTrn:
		return "trn"
	}
	return t.String()
}

// DataTypeCode is DLDataTypeCode, the kind of a DataType.
type DataTypeCode uint8

// DLDataTypeCode values.
const (
	CodeInt               DataTypeCode = 0  // kDLInt
	CodeUInt              DataTypeCode = 1  // kDLUInt
	CodeFloat             DataTypeCode = 2  // kDLFloat: IEEE floating point
	CodeOpaqueHandle      DataTypeCode = 3  // kDLOpaqueHandle
	CodeBfloat            DataTypeCode = 4  // kDLBfloat
	CodeComplex           DataTypeCode = 5  // kDLComplex
	CodeBool              DataTypeCode = 6  // kDLBool: one byte per element
	CodeFloat8E3M4        DataTypeCode = 7  // kDLFloat8_e3m4
	CodeFloat8E4M3        DataTypeCode = 8  // kDLFloat8_e4m3
	CodeFloat8E4M3B11FNUZ DataTypeCode = 9  // kDLFloat8_e4m3b11fnuz
	CodeFloat8E4M3FN      DataTypeCode = 10 // kDLFloat8_e4m3fn
	CodeFloat8E4M3FNUZ    DataTypeCode = 11 // kDLFloat8_e4m3fnuz
	CodeFloat8E5M2        DataTypeCode = 12 // kDLFloat8_e5m2
	CodeFloat8E5M2FNUZ    DataTypeCode = 13 // kDLFloat8_e5m2fnuz
	CodeFloat8E8M0FNU     DataTypeCode = 14 // kDLFloat8_e8m0fnu
	CodeFloat6E2M3FN      DataTypeCode = 15 // kDLFloat6_e2m3fn
	CodeFloat6E3M2FN      DataTypeCode = 16 // kDLFloat6_e3m2fn
	CodeFloat4E2M1FN      DataTypeCode = 17 // kDLFloat4_e2m1fn
)

var codeNames = [...]string{
	"int", "uint", "float", "opaque_handle", "bfloat", "complex", "bool",
	"float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
	"float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn",
}

// String returns DLPack's name of the code without the kDL prefix, in
// lower case, or "code(N)".
func (c DataTypeCode) String() string {
	if int(c) < len(codeNames) {
		return codeNames[c]
	}
	return "code(" + strconv.Itoa(int(c)) + ")"
}

// PackVersion mirrors DLPackVersion.
type PackVersion struct {
	Major uint32
	Minor uint32
}

// Device mirrors DLDevice. DeviceID is 0 for CPU memory (Arrow says -1).
type Device struct {
	DeviceType DeviceType
	DeviceID   int32
}

// DataType mirrors DLDataType: Code (a DataTypeCode), Bits per lane and
// Lanes (1 for scalars).
type DataType struct {
	Code  DataTypeCode
	Bits  uint8
	Lanes uint16
}

// String is e.g. "float64", "int8", "bool8" or "float32x4".
func (d DataType) String() string {
	s := d.Code.String() + strconv.Itoa(int(d.Bits))
	if d.Lanes != 1 {
		s += "x" + strconv.Itoa(int(d.Lanes))
	}
	return s
}

// ManagedTensor mirrors the legacy DLManagedTensor (DLPack before 1.0). It
// has no version and no flags. Deleter has the C type
// void (*)(struct DLManagedTensor*); it frees the struct.
type ManagedTensor struct {
	DLTensor   Tensor
	ManagerCtx uintptr // void*
	Deleter    uintptr // void (*)(DLManagedTensor*)
}

// ManagedTensorVersioned mirrors DLManagedTensorVersioned, the exchange
// struct of DLPack 1.x. Deleter has the C type
// void (*)(struct DLManagedTensorVersioned*); it frees the struct.
type ManagedTensorVersioned struct {
	Version    PackVersion
	ManagerCtx uintptr // void*
	Deleter    uintptr // void (*)(DLManagedTensorVersioned*)
	Flags      uint64
	DLTensor   Tensor
}

// ExchangeAPIHeader mirrors DLPackExchangeAPIHeader, the stable head of
// the Python fast-exchange function table (DLPack 1.3).
type ExchangeAPIHeader struct {
	Version PackVersion
	PrevAPI uintptr // struct DLPackExchangeAPIHeader*
}

// ExchangeAPI mirrors DLPackExchangeAPI: C function pointers a Python
// array library publishes as __c_dlpack_exchange_api__. This package does
// not call them; the mirror is here for code that does.
type ExchangeAPI struct {
	Header                          ExchangeAPIHeader
	ManagedTensorAllocator          uintptr
	ManagedTensorFromPyObjectNoSync uintptr
	ManagedTensorToPyObjectNoSync   uintptr
	DLTensorFromPyObjectNoSync      uintptr
	CurrentWorkStream               uintptr
}

// ShapeSlice returns the Ndim values at Shape (nil when Shape is NULL or
// Ndim is not positive). The slice aliases C memory.
func (t *Tensor) ShapeSlice() []int64 { return int64s(t.Shape, t.Ndim) }

// StridesSlice returns the Ndim values at Strides, or nil when Strides is
// NULL (a row-major compact tensor). The slice aliases C memory.
func (t *Tensor) StridesSlice() []int64 { return int64s(t.Strides, t.Ndim) }

func int64s(p uintptr, n int32) []int64 {
	if p == 0 || n <= 0 {
		return nil
	}
	return unsafe.Slice((*int64)(abi.Pointer(p)), n)
}

// ManagedTensorVersionedAt returns the struct at address p (a pointer a C
// producer handed over), or nil for 0.
func ManagedTensorVersionedAt(p uintptr) *ManagedTensorVersioned {
	return (*ManagedTensorVersioned)(abi.Pointer(p))
}

// ManagedTensorAt returns the legacy struct at address p, or nil for 0.
func ManagedTensorAt(p uintptr) *ManagedTensor {
	return (*ManagedTensor)(abi.Pointer(p))
}

// Addr is the address of t, to hand to C.
func (t *ManagedTensorVersioned) Addr() uintptr { return uintptr(unsafe.Pointer(t)) }

// Addr is the address of t, to hand to C.
func (t *ManagedTensor) Addr() uintptr { return uintptr(unsafe.Pointer(t)) }
