package opencl

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
)

// Backend is the OpenCL backend; it registers itself with the device package.
var Backend device.Backend = newBackend(nil)

func init() { device.RegisterBackend(Backend) }

// backend probes once. names nil means "ask the environment at probe time".
type backend struct {
	names    []string
	noSVM    bool // force cl_mem buffers (tests; CDEVICE_OPENCL_SVM=0)
	register bool // register the devices found (false for test instances)

	once sync.Once
	done atomic.Bool
	info device.Info
	err  error
}

func newBackend(names []string) *backend {
	return &backend{names: names, register: names == nil}
}

func (*backend) Name() string { return "opencl" }

// Probe loads the library and opens every device, once. A cancelled ctx
// stops a probe that has not started; it is not cached.
func (b *backend) Probe(ctx context.Context) (device.Info, error) {
	if !b.done.Load() {
		if err := ctx.Err(); err != nil {
			return device.Info{}, err
		}
	}
	b.once.Do(func() {
		b.info, b.err = b.probe()
		b.done.Store(true)
	})
	info := b.info
	info.Devices = append([]device.Device(nil), b.info.Devices...)
	return info, b.err
}

// libraryNames are the libraries to try, and how: the one the user named
// in CDEVICE_OPENCL_LIBRARY (a relative path made absolute, a name alone
// searched for as a program's own library), else the ICD loader, which
// an OpenCL driver installs with the system's libraries (System32 on
// Windows).
func libraryNames() ([]string, func(string) (*ffi.Library, error)) {
	if p := os.Getenv("CDEVICE_OPENCL_LIBRARY"); p != "" {
		return []string{p}, ffi.Open
	}
	return defaultNames, ffi.OpenSystem
}

func (b *backend) probe() (device.Info, error) {
	names, load := b.names, ffi.Open
	if names == nil {
		names, load = libraryNames()
	}
	noSVM := b.noSVM || os.Getenv("CDEVICE_OPENCL_SVM") == "0"
	var lib *ffi.Library
	var tried []string
	for _, n := range names {
		l, err := load(n)
		if err == nil {
			lib = l
			break
		}
		if b.names == nil && os.Getenv("CDEVICE_OPENCL_LIBRARY") != "" {
			tried = append(tried, "CDEVICE_OPENCL_LIBRARY="+n+": "+err.Error())
		} else {
			tried = append(tried, err.Error())
		}
	}
	if lib == nil {
		return device.Info{}, fmt.Errorf("%w: opencl: no OpenCL library (tried %s)", device.ErrNotFound, strings.Join(tried, "; "))
	}
	info := device.Info{Library: lib.Path()}
	a, err := bind(lib)
	if err != nil {
		return info, err
	}
	platforms, err := a.platformIDs()
	if err != nil {
		return info, err
	}
	var versions []string
	var devs []*Device
	fail := func(err error) (device.Info, error) {
		for _, d := range devs {
			d.release()
		}
		return info, err
	}
	for _, p := range platforms {
		v, err := a.infoString(a.getPlatformInfo, "clGetPlatformInfo", p, clPlatformVersion)
		if err != nil {
			return fail(err)
		}
		versions = append(versions, strings.TrimSpace(v))
		ids, err := a.deviceIDs(p)
		if err != nil {
			return fail(err)
		}
		for _, id := range ids {
			d, err := a.openDevice(p, id, int64(len(devs)), noSVM)
			if err != nil {
				return fail(err)
			}
			devs = append(devs, d)
		}
	}
	info.Version = strings.Join(versions, "; ")
	if len(devs) == 0 {
		return info, fmt.Errorf("%w: opencl: %d platform(s), no device", device.ErrNoDevice, len(platforms))
	}
	for _, d := range devs {
		if b.register {
			device.Register(d)
		}
		info.Devices = append(info.Devices, d)
	}
	return info, nil
}

func (a *api) platformIDs() ([]uintptr, error) {
	n, err := calloc(4)
	if err != nil {
		return nil, err
	}
	defer n.free()
	r := int32(ffi.Call(a.getPlatformIDs, 0, 0, n.addr()))
	if r == clPlatformNotFoundKHR || (r == clSuccess && n.uint32() == 0) {
		return nil, fmt.Errorf("%w: opencl: no platform (no ICD installed?)", device.ErrNoDevice)
	}
	if r != clSuccess {
		return nil, clError("clGetPlatformIDs", r)
	}
	count := n.uint32()
	ids, err := calloc(uintptr(count) * wordSize)
	if err != nil {
		return nil, err
	}
	defer ids.free()
	if err := check("clGetPlatformIDs", ffi.Call(a.getPlatformIDs, uintptr(count), ids.addr(), n.addr())); err != nil {
		return nil, err
	}
	out := make([]uintptr, min(count, n.uint32()))
	for i := range out {
		out[i] = ids.word(i)
	}
	return out, nil
}

// deviceIDs lists a platform's devices; none is not an error here.
func (a *api) deviceIDs(p uintptr) ([]uintptr, error) {
	n, err := calloc(4)
	if err != nil {
		return nil, err
	}
	defer n.free()
	call := func(count, ids uintptr) int32 {
		args := ffi.AppendUint64([]uintptr{p}, clDeviceTypeAll)
		return int32(ffi.Call(a.getDeviceIDs, append(args, count, ids, n.addr())...))
	}
	r := call(0, 0)
	if r == clDeviceNotFound {
		return nil, nil
	}
	if r != clSuccess {
		return nil, clError("clGetDeviceIDs", r)
	}
	count := n.uint32()
	if count == 0 {
		return nil, nil
	}
	ids, err := calloc(uintptr(count) * wordSize)
	if err != nil {
		return nil, err
	}
	defer ids.free()
	if r := call(uintptr(count), ids.addr()); r != clSuccess {
		return nil, clError("clGetDeviceIDs", r)
	}
	out := make([]uintptr, min(count, n.uint32()))
	for i := range out {
		out[i] = ids.word(i)
	}
	return out, nil
}

// infoString reads a string parameter through clGetPlatformInfo or
// clGetDeviceInfo (same signature).
func (a *api) infoString(fn uintptr, call string, obj uintptr, param uint32) (string, error) {
	size, err := calloc(wordSize)
	if err != nil {
		return "", err
	}
	defer size.free()
	if err := check(call, ffi.Call(fn, obj, uintptr(param), 0, 0, size.addr())); err != nil {
		return "", err
	}
	n := size.word(0)
	buf, err := calloc(n + 1)
	if err != nil {
		return "", err
	}
	defer buf.free()
	if err := check(call, ffi.Call(fn, obj, uintptr(param), n, buf.addr(), 0)); err != nil {
		return "", err
	}
	return ffi.GoString(buf.addr()), nil
}

// infoUint64 reads a cl_ulong or cl_bitfield device parameter.
func (a *api) infoUint64(id uintptr, param uint32) (uint64, error) {
	v, err := calloc(8)
	if err != nil {
		return 0, err
	}
	defer v.free()
	if err := check("clGetDeviceInfo", ffi.Call(a.getDeviceInfo, id, uintptr(param), 8, v.addr(), 0)); err != nil {
		return 0, err
	}
	return v.uint64(), nil
}

// openDevice reads a device's properties and makes its context and queue.
func (a *api) openDevice(platform, id uintptr, n int64, noSVM bool) (*Device, error) {
	d := &Device{api: a, id: n, platform: platform, device: id, allocs: map[device.Pointer]int{}, streams: map[*stream]struct{}{}}
	var err error
	str := func(param uint32) string {
		var s string
		if err == nil {
			s, err = a.infoString(a.getDeviceInfo, "clGetDeviceInfo", id, param)
		}
		return strings.TrimSpace(s)
	}
	d.name, d.vendor, d.version = str(clDeviceName), str(clDeviceVendor), str(clDeviceVersion)
	if err != nil {
		return nil, err
	}
	if d.clType, err = a.infoUint64(id, clDeviceType); err != nil {
		return nil, err
	}
	mem, err := a.infoUint64(id, clDeviceGlobalMemSize)
	if err != nil {
		return nil, err
	}
	d.globalMem = int64(mem)
	var major, minor int
	fmt.Sscanf(d.version, "OpenCL %d.%d", &major, &minor)
	cl2 := major >= 2
	if cl2 && a.hasSVM() {
		caps, err := a.infoUint64(id, clDeviceSVMCapabilities)
		if err != nil {
			return nil, err
		}
		d.svmCaps = caps
		d.svm = caps&clSVMCoarseGrainBuffer != 0 && !noSVM
	}

	// properties {CL_CONTEXT_PLATFORM, platform, 0}, the device list, errcode
	scratch, err := calloc(5 * wordSize)
	if err != nil {
		return nil, err
	}
	defer scratch.free()
	scratch.setWord(0, clContextPlatform)
	scratch.setWord(1, platform)
	scratch.setWord(3, id)
	errcode := scratch.addr() + 4*wordSize
	d.context = ffi.Call(a.createContext, scratch.addr(), 1, scratch.addr()+3*wordSize, 0, 0, errcode)
	if d.context == 0 {
		return nil, clError("clCreateContext", *(*int32)(abi.Pointer(errcode)))
	}
	if d.queue, err = a.newQueue(d.context, id, cl2); err != nil {
		a.releaseContextQuiet(d.context)
		return nil, err
	}
	d.cl2 = cl2
	return d, nil
}

func (a *api) releaseContextQuiet(c uintptr) { ffi.Call(a.releaseContext, c) }

// newQueue makes an in-order command queue with default properties.
func (a *api) newQueue(ctx, dev uintptr, cl2 bool) (uintptr, error) {
	errcode, err := calloc(4)
	if err != nil {
		return 0, err
	}
	defer errcode.free()
	var q uintptr
	call := "clCreateCommandQueueWithProperties"
	if cl2 && a.createQueueWithProperties != 0 || a.createCommandQueue == 0 {
		q = ffi.Call(a.createQueueWithProperties, ctx, dev, 0, errcode.addr())
	} else {
		call = "clCreateCommandQueue"
		args := ffi.AppendUint64([]uintptr{ctx, dev}, 0)
		q = ffi.Call(a.createCommandQueue, append(args, errcode.addr())...)
	}
	if q == 0 {
		return 0, clError(call, errcode.int32())
	}
	return q, nil
}
