package gpurt

import (
	"unsafe"

	"github.com/purearrow/cdevice/internal/ffi"
)

// Where CUDA's driver API differs from the runtime's shape (Table.API):
// every difference is here, and the rest of the package calls these.

// versions reads the runtime's version (the driver API has none: it is
// the driver) and the driver's.
func (r *Runtime) versions() error {
	o := newOut()
	defer o.release()
	if r.t.API == RuntimeAPI {
		if err := r.Call(RuntimeGetVersion, o.ptr(0)); err != nil {
			return err
		}
	}
	if err := r.Call(DriverGetVersion, o.ptr(1)); err != nil {
		return err
	}
	r.runtimeVersion, r.driverVersion = o.int(0), o.int(1)
	return nil
}

// Version is "runtime X, driver Y", without the driver when there is none;
// "driver API Y" for the driver API.
func (r *Runtime) Version() string {
	if r.t.API == DriverAPI {
		return "driver API " + r.t.FormatVersion(r.driverVersion)
	}
	v := "runtime " + r.t.FormatVersion(r.runtimeVersion)
	if r.driverVersion > 0 {
		v += ", driver " + r.t.FormatVersion(r.driverVersion)
	}
	return v
}

// initialize readies the library before its devices are counted: the
// driver API's Init, whose codes say why there is no device as the
// runtime's GetDeviceCount does (Table.Codes).
func (r *Runtime) initialize() error {
	if r.t.API == DriverAPI {
		return r.Call(Init, 0)
	}
	return nil
}

// openGPU returns how the API names GPU ordinal (dev: the ordinal, or the
// driver API's CUdevice) and what makes it current on a thread (current,
// SetDevice's argument: the ordinal, or the GPU's primary context, which
// the driver API retains here until closeGPU and which the runtime API
// would use for it).
func (r *Runtime) openGPU(ordinal int) (dev, current uintptr, err error) {
	if r.t.API == RuntimeAPI {
		return uintptr(ordinal), uintptr(ordinal), nil
	}
	o := newOut()
	defer o.release()
	if err := r.Call(DeviceGet, o.ptr(0), uintptr(ordinal)); err != nil {
		return 0, 0, err
	}
	dev = uintptr(o.int(0)) // CUdevice is an int
	if err := r.Call(PrimaryCtxRetain, o.ptr(1), dev); err != nil {
		return 0, 0, err
	}
	return dev, o.uintptr(1), nil
}

// closeGPU gives back what openGPU took.
func (r *Runtime) closeGPU(dev uintptr) error {
	if r.t.API == DriverAPI {
		return r.Call(PrimaryCtxRelease, dev)
	}
	return nil
}

// deviceName writes the NUL-terminated name of GPU dev at the start of
// buf (PropBufSize bytes of C memory): the first member of the runtime's
// properties struct, or the driver API's DeviceGetName.
func (r *Runtime) deviceName(buf unsafe.Pointer, dev uintptr) error {
	if r.t.API == DriverAPI {
		return r.Call(DeviceGetName, uintptr(buf), propNameLen, dev)
	}
	return r.Call(GetDeviceProperties, uintptr(buf), dev)
}

// memcpy queues a copy of n bytes on stream; kind is one of Table.Memcpy's.
// The driver API takes no kind: it has a function per direction, and one
// that infers it from unified addresses (for Default).
func (r *Runtime) memcpy(dst, src, n, kind, stream uintptr) error {
	if r.t.API == RuntimeAPI {
		return r.Call(MemcpyAsync, dst, src, n, kind, stream)
	}
	op := MemcpyAsync
	switch m := r.t.Memcpy; kind {
	case m.HostToDevice:
		op = MemcpyHtoDAsync
	case m.DeviceToHost:
		op = MemcpyDtoHAsync
	case m.DeviceToDevice:
		op = MemcpyDtoDAsync
	}
	return r.Call(op, dst, src, n, stream)
}

// errorText is the library's text for an error code by op (GetErrorString
// or GetErrorName): the runtime API returns it; the driver API writes it
// through an out-parameter and fails for a code it does not know ("").
func (r *Runtime) errorText(op Op, code int) string {
	fn := r.fn[op].fn
	if r.t.API == RuntimeAPI {
		return ffi.GoString(ffi.Call(fn, uintptr(uint32(code))))
	}
	o := newOut()
	defer o.release()
	if int32(ffi.Call(fn, uintptr(uint32(code)), o.ptr(0))) != 0 {
		return ""
	}
	return ffi.GoString(o.uintptr(0))
}
