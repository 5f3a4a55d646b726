package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
)

// Values from CUDA's driver_types.h and cuda_runtime_api.h.
const (
	errInsufficientDriver = 35  // cudaErrorInsufficientDriver
	errStubLibrary        = 34  // cudaErrorStubLibrary
	errNoDevice           = 100 // cudaErrorNoDevice

	memcpyHostToDevice   = 1 // cudaMemcpyHostToDevice
	memcpyDeviceToHost   = 2 // cudaMemcpyDeviceToHost
	memcpyDeviceToDevice = 3 // cudaMemcpyDeviceToDevice
	memcpyDefault        = 4 // cudaMemcpyDefault: direction from the pointers (UVA)

	memAttachGlobal     = 1 // cudaMemAttachGlobal
	streamNonBlocking   = 1 // cudaStreamNonBlocking
	eventDisableTiming  = 2 // cudaEventDisableTiming
	attrComputeCapMajor = 75
	attrComputeCapMinor = 76

	// propBufSize is far more than any cudaDeviceProp so far (about 1 KiB):
	// the struct's layout changes between versions, and only name[256], its
	// first member, is read.
	propBufSize = 4096
	propNameLen = 256
)

// rt is one loaded libcudart and its bound functions.
type rt struct {
	lib *ffi.Library

	getDeviceCount, setDevice, getDevice           uintptr
	driverGetVersion, runtimeGetVersion            uintptr
	getErrorString, getErrorName                   uintptr
	deviceGetAttribute, getDeviceProperties        uintptr
	memGetInfo, malloc, free, mallocHost, freeHost uintptr
	mallocManaged, memcpyAsync                     uintptr
	streamCreateWithFlags, streamSynchronize       uintptr
	streamDestroy, streamWaitEvent                 uintptr
	eventCreateWithFlags, eventRecord              uintptr
	eventSynchronize, eventDestroy                 uintptr
	runtimeVersion, driverVersion                  int
	getDevicePropertiesName                        string // the variant bound, for errors
}

// bind looks up every function; a missing one is an ErrMissingSymbol that
// names all that are missing, so an old runtime says what it lacks.
func bind(lib *ffi.Library) (*rt, error) {
	r := &rt{lib: lib}
	syms := []struct {
		names []string // alternatives, preferred first
		p     *uintptr
	}{
		{[]string{"cudaGetDeviceCount"}, &r.getDeviceCount},
		{[]string{"cudaSetDevice"}, &r.setDevice},
		{[]string{"cudaGetDevice"}, &r.getDevice},
		{[]string{"cudaDriverGetVersion"}, &r.driverGetVersion},
		{[]string{"cudaRuntimeGetVersion"}, &r.runtimeGetVersion},
		{[]string{"cudaGetErrorString"}, &r.getErrorString},
		{[]string{"cudaGetErrorName"}, &r.getErrorName},
		{[]string{"cudaDeviceGetAttribute"}, &r.deviceGetAttribute},
		// CUDA 12 headers map cudaGetDeviceProperties to _v2; both start
		// with name[256], the only member read.
		{[]string{"cudaGetDeviceProperties_v2", "cudaGetDeviceProperties"}, &r.getDeviceProperties},
		{[]string{"cudaMemGetInfo"}, &r.memGetInfo},
		{[]string{"cudaMalloc"}, &r.malloc},
		{[]string{"cudaFree"}, &r.free},
		{[]string{"cudaMallocHost"}, &r.mallocHost},
		{[]string{"cudaFreeHost"}, &r.freeHost},
		{[]string{"cudaMallocManaged"}, &r.mallocManaged},
		{[]string{"cudaMemcpyAsync"}, &r.memcpyAsync},
		{[]string{"cudaStreamCreateWithFlags"}, &r.streamCreateWithFlags},
		{[]string{"cudaStreamSynchronize"}, &r.streamSynchronize},
		{[]string{"cudaStreamDestroy"}, &r.streamDestroy},
		{[]string{"cudaStreamWaitEvent"}, &r.streamWaitEvent},
		{[]string{"cudaEventCreateWithFlags"}, &r.eventCreateWithFlags},
		{[]string{"cudaEventRecord"}, &r.eventRecord},
		{[]string{"cudaEventSynchronize"}, &r.eventSynchronize},
		{[]string{"cudaEventDestroy"}, &r.eventDestroy},
	}
	var missing []string
	for _, s := range syms {
		for _, name := range s.names {
			if p, err := lib.Symbol(name); err == nil {
				*s.p = p
				if s.p == &r.getDeviceProperties {
					r.getDevicePropertiesName = name
				}
				break
			}
		}
		if *s.p == 0 {
			missing = append(missing, s.names[len(s.names)-1])
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("cuda: %w: %s lacks %s (a CUDA runtime older than this library supports?)",
			device.ErrMissingSymbol, lib.Path(), strings.Join(missing, ", "))
	}
	return r, nil
}

// call calls a function returning cudaError_t; a non-zero code becomes a
// *device.RuntimeError with the runtime's own message.
func (r *rt) call(name string, fn uintptr, args ...uintptr) error {
	// cudaError_t is a C enum (int): only the low 32 bits are defined.
	if code := int32(ffi.Call(fn, args...)); code != 0 {
		return r.error(name, int(code))
	}
	return nil
}

func (r *rt) error(call string, code int) *device.RuntimeError {
	return &device.RuntimeError{Runtime: "cuda", Call: call, Code: code,
		Message: ffi.GoString(ffi.Call(r.getErrorString, uintptr(code)))}
}

// errorName is cudaGetErrorName's text for code, e.g. "cudaErrorMemoryAllocation".
func (r *rt) errorName(code int) string {
	return ffi.GoString(ffi.Call(r.getErrorName, uintptr(code)))
}

// onDevice runs f with the goroutine locked to its OS thread and ordinal
// the thread's current device: CUDA keeps the current device per thread,
// and a goroutine may move between threads between any two calls.
func (r *rt) onDevice(ordinal int, f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := r.call("cudaSetDevice", r.setDevice, uintptr(ordinal)); err != nil {
		return err
	}
	return f()
}

// An out is scratch for out-parameters. C writes through its address, so it
// lives on the Go heap (which never moves) and is pinned for the call.
type out struct {
	pin runtime.Pinner
	v   [4]uint64
}

func newOut() *out {
	o := new(out)
	o.pin.Pin(&o.v)
	return o
}

func (o *out) ptr(i int) uintptr     { return uintptr(unsafe.Pointer(&o.v[i])) }
func (o *out) int(i int) int         { return int(*(*int32)(unsafe.Pointer(&o.v[i]))) }
func (o *out) uintptr(i int) uintptr { return *(*uintptr)(unsafe.Pointer(&o.v[i])) }
func (o *out) release()              { o.pin.Unpin() }

// getInt calls fn(&int, args...) and releases o.
func (o *out) getInt(r *rt, name string, fn uintptr, args ...uintptr) (int, error) {
	defer o.release()
	if err := r.call(name, fn, append([]uintptr{o.ptr(0)}, args...)...); err != nil {
		return 0, err
	}
	return o.int(0), nil
}

// versions reads the runtime's and the driver's CUDA versions.
func (r *rt) versions() error {
	v, err := newOut().getInt(r, "cudaRuntimeGetVersion", r.runtimeGetVersion)
	if err != nil {
		return err
	}
	r.runtimeVersion = v
	if v, err = newOut().getInt(r, "cudaDriverGetVersion", r.driverGetVersion); err != nil {
		return err
	}
	r.driverVersion = v
	return nil
}

// version formats 1000*major + 10*minor as "major.minor".
func version(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }

// deviceCount returns how many devices there are, or why none can be used.
func (r *rt) deviceCount() (int, error) {
	n, err := newOut().getInt(r, "cudaGetDeviceCount", r.getDeviceCount)
	var re *device.RuntimeError
	switch {
	case errors.As(err, &re) && re.Code == errNoDevice:
		return 0, fmt.Errorf("cuda: %w: %w", device.ErrNoDevice, err)
	case errors.As(err, &re) && re.Code == errInsufficientDriver && r.driverVersion == 0:
		return 0, fmt.Errorf("cuda: %w: no NVIDIA driver is installed: %w", device.ErrNoDevice, err)
	case errors.As(err, &re) && re.Code == errInsufficientDriver:
		return 0, fmt.Errorf("cuda: driver too old: it supports CUDA %s, the runtime is CUDA %s: %w",
			version(r.driverVersion), version(r.runtimeVersion), err)
	case errors.As(err, &re) && re.Code == errStubLibrary:
		return 0, fmt.Errorf("cuda: %w: libcuda is the toolkit's stub, not a driver: %w", device.ErrNoDevice, err)
	case err != nil:
		return 0, err
	case n <= 0:
		return 0, fmt.Errorf("cuda: %w: cudaGetDeviceCount found no CUDA device", device.ErrNoDevice)
	}
	return n, nil
}
