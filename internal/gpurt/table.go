package gpurt

import (
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
)

// An API is the shape of a table's calls.
type API int

const (
	// RuntimeAPI is the CUDA runtime's shape (libcudart, and HIP, which
	// copies it): devices named by ordinal, made current by SetDevice.
	RuntimeAPI API = iota
	// DriverAPI is CUDA's driver API (libcuda, which the NVIDIA driver
	// installs, where libcudart comes only with a toolkit): Init before
	// anything, devices named by CUdevice handles, each GPU's primary
	// context made current on the thread (what cudaSetDevice does for the
	// runtime), error texts through out-parameters, and copies by functions
	// of one direction each. api.go holds every difference.
	DriverAPI
)

func (a API) String() string {
	if a == DriverAPI {
		return "driver"
	}
	return "runtime"
}

// An Op is one call of the API that the runtimes have, named without the
// runtime's prefix: GetDeviceCount is cudaGetDeviceCount and
// hipGetDeviceCount. The driver API's names differ more (cuDeviceGetCount,
// cuCtxSetCurrent for SetDevice): its Table names them in Symbols.
type Op int

// The calls a Table names. GetDeviceCount comes first, so that a library
// that is not the runtime at all is reported by it.
const (
	GetDeviceCount    Op = iota
	SetDevice            // (ordinal); DriverAPI: (CUcontext), the GPU's primary context
	RuntimeGetVersion    // RuntimeAPI only
	DriverGetVersion
	GetErrorString
	GetErrorName
	GetDeviceProperties // (prop*, ordinal), RuntimeAPI only; name[256] is the first member, and the only one read
	DeviceGetAttribute  // (int*, attribute, ordinal or CUdevice), for Table.Attributes
	MemGetInfo
	MemcpyAsync // RuntimeAPI: (dst, src, n, kind, stream); DriverAPI: (dst, src, n, stream), the direction inferred
	StreamCreateWithFlags
	StreamSynchronize
	StreamDestroy
	StreamWaitEvent
	EventCreateWithFlags
	EventRecord
	EventSynchronize
	EventDestroy
	EventQuery // done: 0; still running: Codes.NotReady
	// MemcpyBatchAsync copies many pieces in one call (CUDA 12.8 on, HIP 7
	// on); optional (Table.Optional): (dsts, srcs, sizes, count, attrs,
	// attrsIdxs, numAttrs, [failIdx,] stream), failIdx only where
	// Runtime.batchFailIdx says.
	MemcpyBatchAsync

	// DriverAPI only.
	Init              // (flags)
	DeviceGet         // (CUdevice*, ordinal)
	DeviceGetName     // (char*, len, CUdevice)
	PrimaryCtxRetain  // (CUcontext*, CUdevice)
	PrimaryCtxRelease // (CUdevice)
	MemcpyHtoDAsync   // (dst, src, n, stream), and the two below: copies of one direction
	MemcpyDtoHAsync
	MemcpyDtoDAsync
	numOps
)

var opNames = [numOps]string{
	"GetDeviceCount", "SetDevice", "RuntimeGetVersion", "DriverGetVersion",
	"GetErrorString", "GetErrorName", "GetDeviceProperties", "DeviceGetAttribute",
	"MemGetInfo", "MemcpyAsync", "StreamCreateWithFlags", "StreamSynchronize",
	"StreamDestroy", "StreamWaitEvent", "EventCreateWithFlags", "EventRecord",
	"EventSynchronize", "EventDestroy", "EventQuery", "MemcpyBatchAsync",
	"Init", "DeviceGet", "DeviceGetName", "PrimaryCtxRetain", "PrimaryCtxRelease",
	"MemcpyHtoDAsync", "MemcpyDtoHAsync", "MemcpyDtoDAsync",
}

func (op Op) String() string { return opNames[op] }

// Ops returns every call a Table may name, in order.
func Ops() []Op {
	ops := make([]Op, numOps)
	for i := range ops {
		ops[i] = Op(i)
	}
	return ops
}

// of reports whether api has op.
func (op Op) of(api API) bool {
	switch op {
	case RuntimeGetVersion, GetDeviceProperties:
		return api == RuntimeAPI
	}
	return op < Init || api == DriverAPI
}

// Memory is what an allocation of a Kind is.
type Memory int

const (
	// DeviceMemory: device memory; host code must not touch it.
	DeviceMemory Memory = iota
	// HostMemory: pinned host memory, which the device reads over the bus.
	HostMemory
	// ManagedMemory: memory the runtime migrates between host and device.
	ManagedMemory
)

func (m Memory) String() string {
	switch m {
	case HostMemory:
		return "pinned host memory"
	case ManagedMemory:
		return "managed memory"
	}
	return "device memory"
}

// A Kind is one kind of memory a runtime offers; each becomes a Device per
// GPU. Host and managed memory are host-accessible, and copies to or from
// them let the runtime infer the direction from the (unified) addresses.
type Kind struct {
	Memory Memory
	Type   abi.DeviceType
	// Alloc is called as Alloc(void **p, size_t size, AllocArgs...), Free
	// as Free(void *p). OlderAlloc and OlderFree are the names to bind,
	// in order, where a library lacks the preferred ones (a runtime from
	// before they were introduced).
	Alloc, Free           string
	OlderAlloc, OlderFree []string
	AllocArgs             []uintptr
	// Optional: a library lacking every name of Alloc or of Free still
	// binds, without this kind: its Alloc fails with an error wrapping
	// device.ErrMissingSymbol, and the backend's other kinds work.
	Optional bool
}

// allocNames and freeNames are the names of the kind's functions, preferred first.
func (k *Kind) allocNames() []string { return append([]string{k.Alloc}, k.OlderAlloc...) }
func (k *Kind) freeNames() []string  { return append([]string{k.Free}, k.OlderFree...) }

// MemcpyKinds are the values of cudaMemcpyKind / hipMemcpyKind. The
// driver API has no such argument: there they only pick the function
// (MemcpyHtoDAsync for HostToDevice, MemcpyAsync for Default).
type MemcpyKinds struct {
	HostToDevice, DeviceToHost, DeviceToDevice uintptr
	// Default infers the direction from the pointers (unified addressing).
	Default uintptr
}

// Codes are the error codes of GetDeviceCount (and the driver API's Init)
// that say why the runtime cannot be used; 0 where a runtime has no such
// code.
type Codes struct {
	NoDevice           int // there is no device
	InsufficientDriver int // the driver is older than the runtime, or absent (driver version 0)
	StubLibrary        int // the driver library is an SDK's stub, not a driver
	NotReady           int // EventQuery: the event's work is still running
}

// A Table describes one runtime: a library of the CUDA runtime's shape or
// CUDA's driver API (API).
type Table struct {
	Name       string // "cuda": the backend's name, RuntimeError.Runtime, the first word of errors
	Title      string // "CUDA": the runtime as messages name it
	Driver     string // "NVIDIA driver": what the runtime needs installed, for the error when it is not
	EnvLibrary string // the variable naming the one library to load (see Search)
	// SystemLibrary: the library is the device driver's own, which it
	// installs with the operating system's (nvcuda.dll in System32): a
	// name alone is looked for there only (ffi.OpenSystem), unless the
	// user named it in EnvLibrary.
	SystemLibrary bool
	API           API
	// EnvAPI, on the first table of a backend with several (NewBackend),
	// names the variable that picks one by its API's name ("driver").
	EnvAPI string

	// Prefix+op.String() is an op's symbol, except where Symbols names it:
	// alternatives there are tried in order; an empty list leaves the op
	// unbound (a runtime that has no use for it).
	Prefix  string
	Symbols map[Op][]string
	// Optional ops bind where the library has them and are left unbound
	// where it has not (a runtime older than they are): their callers
	// check Runtime.Has first.
	Optional []Op
	// BatchFailIdxBefore is the first runtime version whose
	// MemcpyBatchAsync has no failIdx argument (CUDA 13 dropped it); 0:
	// every version has it. The driver API's is told by the symbol bound
	// (cuMemcpyBatchAsync_v2 has none).
	BatchFailIdxBefore int

	Kinds []Kind // in the order a probe lists them for each GPU
	// Attributes are DeviceGetAttribute numbers read for each GPU at probe;
	// Device.Attribute returns them.
	Attributes []int
	// ConcurrentManagedAttr is the attribute (one of Attributes) that is
	// nonzero where the host may touch managed memory while the GPU works
	// (cudaDevAttrConcurrentManagedAccess); where it reads 0 (Windows, WSL,
	// GPUs before Pascal), a GPU's managed memory is not HostAccessible, so
	// it is read through copies. 0: the table has no such attribute, and
	// managed memory is always host-accessible.
	ConcurrentManagedAttr int

	Memcpy             MemcpyKinds
	StreamNonBlocking  uintptr // StreamCreateWithFlags flag: no implicit sync with the null stream
	EventDisableTiming uintptr // EventCreateWithFlags flag: sync events need no timestamps
	Codes              Codes
	// DriverVersionIsRuntime: DriverGetVersion answers a constant of the
	// runtime's build (HIP), not the installed driver's version, so a
	// probe never reads "no driver" or "driver too old" from it.
	DriverVersionIsRuntime bool

	// HostCPU, where set, asks whether a GPU runs on the host's own
	// processors (a HIP on OpenCL's CPU device), whose device memory is then
	// host memory that the host may read (HostAccessible), as the runtime
	// hands out pointers (chipStar's are SVM or USM), not handles: given
	// the library, it
	// returns nil when the library cannot tell, else the question, which
	// a probe asks once per GPU, with the GPU current, on a stream made
	// for it and destroyed after (the question may change the stream).
	HostCPU func(lib *ffi.Library) func(stream uintptr) bool

	// FormatVersion writes a version as RuntimeGetVersion and
	// DriverGetVersion encode it.
	FormatVersion func(v int) string
	// Wrap returns the runtime package's Device around d: what a probe
	// lists and registers, a type of the package's own with its methods
	// documented in the runtime's names (internal/gpurt/gpurtgen writes
	// them). Required.
	Wrap func(d *Device) device.Device
}

// Names returns the symbols of op, preferred first; none when op is not
// bound for this runtime.
func (t *Table) Names(op Op) []string {
	if !op.of(t.API) {
		return nil
	}
	if names, ok := t.Symbols[op]; ok {
		return names
	}
	return []string{t.Prefix + op.String()}
}
