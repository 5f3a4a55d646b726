package abi

import "unsafe"

// ArrayStream mirrors struct ArrowArrayStream.
type ArrayStream struct {
	GetSchema    uintptr // int (*)(struct ArrowArrayStream*, struct ArrowSchema* out)
	GetNext      uintptr // int (*)(struct ArrowArrayStream*, struct ArrowArray* out)
	GetLastError uintptr // const char* (*)(struct ArrowArrayStream*)
	Release      uintptr // void (*)(struct ArrowArrayStream*)
	PrivateData  uintptr // void*
}

// DeviceType is ArrowDeviceType: where an array's buffers live. The values
// are DLPack's DLDeviceType numbers.
type DeviceType int32

// DeviceArray mirrors struct ArrowDeviceArray.
type DeviceArray struct {
	Array      Array
	DeviceID   int64
	DeviceType DeviceType
	SyncEvent  uintptr // void*: cudaEvent_t*, hipEvent_t*, cl_event*, or NULL
	Reserved   [3]int64
}

// DeviceArrayStream mirrors struct ArrowDeviceArrayStream.
type DeviceArrayStream struct {
	DeviceType   DeviceType
	GetSchema    uintptr // int (*)(struct ArrowDeviceArrayStream*, struct ArrowSchema*)
	GetNext      uintptr // int (*)(struct ArrowDeviceArrayStream*, struct ArrowDeviceArray*)
	GetLastError uintptr // const char* (*)(struct ArrowDeviceArrayStream*)
	Release      uintptr // void (*)(struct ArrowDeviceArrayStream*)
	PrivateData  uintptr // void*
}

// AsyncTask mirrors struct ArrowAsyncTask. ExtractData has the C type
// int (*)(struct ArrowAsyncTask*, struct ArrowDeviceArray* out).
type AsyncTask struct {
	ExtractData uintptr
	PrivateData uintptr
}

// AsyncProducer mirrors struct ArrowAsyncProducer. It has no release member:
// the producer frees it after calling the handler's release.
type AsyncProducer struct {
	DeviceType         DeviceType
	Request            uintptr // void (*)(struct ArrowAsyncProducer*, int64_t n)
	Cancel             uintptr // void (*)(struct ArrowAsyncProducer*)
	AdditionalMetadata uintptr // const char*
	PrivateData        uintptr // void*
}

// AsyncDeviceStreamHandler mirrors struct ArrowAsyncDeviceStreamHandler.
type AsyncDeviceStreamHandler struct {
	OnSchema    uintptr // int (*)(handler*, struct ArrowSchema*)
	OnNextTask  uintptr // int (*)(handler*, struct ArrowAsyncTask*, const char* metadata)
	OnError     uintptr // void (*)(handler*, int code, const char* message, const char* metadata)
	Release     uintptr // void (*)(handler*)
	Producer    uintptr // struct ArrowAsyncProducer*
	PrivateData uintptr // void*
}

// Schema flags (ArrowSchema.flags).
const (
	FlagDictionaryOrdered int64 = 1
	FlagNullable          int64 = 2
	FlagMapKeysSorted     int64 = 4
)

// Device types (ArrowDeviceType). Numbers 5 and 6 are unused, as in DLPack.
const (
	DeviceCPU         DeviceType = 1
	DeviceCUDA        DeviceType = 2
	DeviceCUDAHost    DeviceType = 3
	DeviceOpenCL      DeviceType = 4
	DeviceVulkan      DeviceType = 7
	DeviceMetal       DeviceType = 8
	DeviceVPI         DeviceType = 9
	DeviceROCm        DeviceType = 10
	DeviceROCmHost    DeviceType = 11
	DeviceExtDev      DeviceType = 12
	DeviceCUDAManaged DeviceType = 13
	DeviceOneAPI      DeviceType = 14
	DeviceWebGPU      DeviceType = 15
	DeviceHexagon     DeviceType = 16
)

var deviceTypeNames = map[DeviceType]string{
	DeviceCPU: "cpu", DeviceCUDA: "cuda", DeviceCUDAHost: "cuda_host",
	DeviceOpenCL: "opencl", DeviceVulkan: "vulkan", DeviceMetal: "metal",
	DeviceVPI: "vpi", DeviceROCm: "rocm", DeviceROCmHost: "rocm_host",
	DeviceExtDev: "ext_dev", DeviceCUDAManaged: "cuda_managed",
	DeviceOneAPI: "oneapi", DeviceWebGPU: "webgpu", DeviceHexagon: "hexagon",
}

// String returns the lower-case name of the device type, or "device(N)".
func (t DeviceType) String() string {
	if s, ok := deviceTypeNames[t]; ok {
		return s
	}
	return "device(" + itoa(int64(t)) + ")"
}

// Valid reports whether t is one of the defined device types.
func (t DeviceType) Valid() bool {
	_, ok := deviceTypeNames[t]
	return ok
}

func itoa(v int64) string {
	var b [20]byte
	i := len(b)
	neg := v < 0
	if neg {
		v = -v
	}
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// Released reports whether the struct has been released (or moved from).
func (s *Schema) Released() bool { return s.Release == 0 }

// Released reports whether the struct has been released (or moved from).
func (a *Array) Released() bool { return a.Release == 0 }

// Released reports whether the struct has been released (or moved from).
func (s *ArrayStream) Released() bool { return s.Release == 0 }

// Released reports whether the struct has been released (or moved from).
func (s *DeviceArrayStream) Released() bool { return s.Release == 0 }

// Child returns children[i]. It does not check i against NChildren.
func (s *Schema) Child(i int) *Schema {
	return (*Schema)(index(s.Children, i))
}

// Child returns children[i]. It does not check i against NChildren.
func (a *Array) Child(i int) *Array {
	return (*Array)(index(a.Children, i))
}

// Buffer returns buffers[i]. It does not check i against NBuffers.
func (a *Array) Buffer(i int) unsafe.Pointer {
	return index(a.Buffers, i)
}

// Struct is the set of the eight C interface structs.
type Struct interface {
	Schema | Array | ArrayStream | DeviceArray | DeviceArrayStream |
		AsyncTask | AsyncProducer | AsyncDeviceStreamHandler
}

// At returns the struct at address p, as a C function called through
// purego returns it or a C API hands it over (a struct's address in a
// uintptr): abi.At[abi.ArrayStream](p). At(0) is nil. The memory must be C
// memory or pinned Go memory, and stay so while the result is used.
func At[T Struct](p uintptr) *T { return (*T)(Pointer(p)) }

// index reads element i of a C array of pointers (T**) at base.
func index(base uintptr, i int) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Add(Pointer(base), uintptr(i)*unsafe.Sizeof(uintptr(0))))
}

// Pointer turns an address held in a uintptr field into an unsafe.Pointer.
// The address must be C memory or pinned Go memory.
func Pointer(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}
