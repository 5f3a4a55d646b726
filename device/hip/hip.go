package hip

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
)

// EnvLibrary names the environment variable that overrides the library path.
const EnvLibrary = "CDEVICE_HIP_LIBRARY"

// Backend is the HIP runtime. Its Probe returns, even with an error, the
// Info.Library and Info.Version of a library it did load.
var Backend device.Backend = newBackend(true)

func init() { device.RegisterBackend(Backend) }

// HIP constants (hip_runtime_api.h / hip/driver_types.h).
const (
	hipSuccess                 = 0
	hipErrorInsufficientDriver = 35 // the kernel driver (amdgpu/KFD) is older than the runtime needs
	hipErrorNoDevice           = 100

	hipMemcpyHostToDevice   = 1
	hipMemcpyDeviceToHost   = 2
	hipMemcpyDeviceToDevice = 3
	// hipMemcpyDefault lets the runtime infer the direction from the
	// (unified) addresses; used for pinned host memory, where the fixed
	// kinds would misdescribe one side.
	hipMemcpyDefault = 4

	hipStreamDefault      = 0 // blocking: ordered with the null stream we use for a nil Stream
	hipEventDisableTiming = 2 // sync events need no timestamps, and are cheaper without
	hipHostMallocDefault  = 0
)

type backend struct {
	register bool // register the devices found (false for test instances)

	mu   sync.Mutex
	done chan struct{} // closed when the one probe has finished
	info device.Info
	err  error
}

func newBackend(register bool) *backend { return &backend{register: register} }

func (*backend) Name() string { return "hip" }

// Probe loads the library once; concurrent callers wait for that one probe
// (or for their ctx). A ctx already done before the probe starts leaves the
// backend unprobed.
func (b *backend) Probe(ctx context.Context) (device.Info, error) {
	b.mu.Lock()
	if b.done == nil {
		if err := ctx.Err(); err != nil {
			b.mu.Unlock()
			return device.Info{}, err
		}
		b.done = make(chan struct{})
		b.mu.Unlock()
		b.run()
		return b.answer()
	}
	b.mu.Unlock()
	select {
	case <-b.done:
		return b.answer()
	default:
	}
	select {
	case <-b.done:
		return b.answer()
	case <-ctx.Done():
		return device.Info{}, ctx.Err()
	}
}

// run probes and releases the waiters even if the probe panics (a bug),
// which would otherwise leave them waiting forever.
func (b *backend) run() {
	defer close(b.done)
	defer func() {
		if p := recover(); p != nil {
			b.info, b.err = device.Info{}, fmt.Errorf("%w: hip: probe panicked: %v", device.ErrRuntime, p)
		}
	}()
	b.info, b.err = probe(b.register)
}

// answer copies the device list, which callers may change.
func (b *backend) answer() (device.Info, error) {
	info := b.info
	info.Devices = append([]device.Device(nil), b.info.Devices...)
	return info, b.err
}

// probeError carries a one-line message (what the loader shows as the
// reason) and the sentinel callers test with errors.Is.
type probeError struct {
	msg      string
	sentinel error
	cause    error
}

func (e *probeError) Error() string { return e.msg }
func (e *probeError) Unwrap() []error {
	if e.cause != nil {
		return []error{e.sentinel, e.cause}
	}
	return []error{e.sentinel}
}

func probe(register bool) (device.Info, error) {
	r, err := load()
	if err != nil {
		return device.Info{}, err
	}
	info := device.Info{Library: r.lib.Path(), Version: r.version()}
	np := out[int32]()
	code := r.code(r.getDeviceCount, uintptr(unsafe.Pointer(np)))
	n := *np
	switch {
	case code == hipSuccess && n <= 0:
		return info, &probeError{msg: "hip: no device (hipErrorNoDevice, 100): hipGetDeviceCount found none", sentinel: device.ErrNoDevice}
	case code == hipErrorNoDevice:
		rerr := r.error("hipGetDeviceCount", code)
		msg := "hip: no device (hipErrorNoDevice, 100)"
		// HIP 5 describes codes by their names; newer runtimes in words.
		if rerr.Message != "" && rerr.Message != "hipErrorNoDevice" {
			msg += ": " + rerr.Message
		}
		return info, &probeError{msg: msg, sentinel: device.ErrNoDevice, cause: rerr}
	case code == hipErrorInsufficientDriver:
		rerr := r.error("hipGetDeviceCount", code)
		return info, &probeError{msg: "hip: driver too old for " + info.Version + ": " + rerr.Error(), sentinel: device.ErrRuntime, cause: rerr}
	case code != hipSuccess:
		rerr := r.error("hipGetDeviceCount", code)
		return info, &probeError{msg: rerr.Error(), sentinel: device.ErrRuntime, cause: rerr}
	}
	for i := range int(n) {
		name := r.deviceName(i)
		gpu := &hipDevice{rt: r, typ: abi.DeviceROCm, ordinal: i, name: name}
		host := &hipDevice{rt: r, typ: abi.DeviceROCmHost, ordinal: i, name: name + " (pinned host memory)"}
		if register {
			device.Register(gpu)
			device.Register(host)
		}
		info.Devices = append(info.Devices, gpu, host)
	}
	return info, nil
}

// candidates returns what load tries, in order.
func candidates() (names []string, explicit bool) {
	if p := os.Getenv(EnvLibrary); p != "" {
		return []string{p}, true
	}
	names = append(names, sonames...)
	for _, g := range globs() {
		m, _ := filepath.Glob(g)
		if len(m) == 0 {
			names = append(names, g) // reported as tried, never opened
			continue
		}
		names = append(names, m...)
	}
	return names, false
}

func load() (*hipRT, error) {
	names, explicit := candidates()
	var tried []string
	var detail error // the first dlopen error worth showing
	present := false // a candidate file exists but did not load
	for _, name := range names {
		tried = append(tried, name)
		if strings.ContainsAny(name, "*?[") {
			continue
		}
		lib, err := ffi.Open(name)
		if err == nil {
			return bind(lib)
		}
		// A library that exists but fails to load (wrong architecture, a
		// missing dependency) says more than "not installed".
		if exists(name) {
			if !present {
				detail = err
			}
			present = true
		} else if explicit {
			detail = err
		}
	}
	what := "not installed"
	if present {
		what = "cannot load it"
	}
	list := strings.Join(tried, ", ")
	if explicit {
		list = EnvLibrary + "=" + names[0]
	}
	msg := "hip: " + what + ": tried " + list
	if detail != nil {
		msg += " (" + oneLine(detail.Error()) + ")"
	}
	return nil, &probeError{msg: msg, sentinel: device.ErrNotFound, cause: detail}
}

func bind(lib *ffi.Library) (*hipRT, error) {
	r := &hipRT{lib: lib}
	for _, s := range r.symbols() {
		p, err := lib.Symbol(s.name)
		if err != nil {
			if s.optional {
				continue
			}
			return nil, &probeError{
				msg:      fmt.Sprintf("hip: %s lacks %s (runtime too old)", lib.Path(), s.name),
				sentinel: device.ErrMissingSymbol, cause: err,
			}
		}
		*s.fn = p
	}
	return r, nil
}

// exists reports whether name is a path to a file; a soname is searched
// for by the system loader, not here.
func exists(name string) bool {
	if !strings.ContainsAny(name, `/\`) {
		return false
	}
	_, err := os.Stat(name)
	return err == nil
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// hipRT is a loaded libamdhip64: one function pointer per bound call.
type hipRT struct {
	lib *ffi.Library

	getDeviceCount, setDevice, driverGetVersion, runtimeGetVersion uintptr
	getErrorString, getErrorName, deviceGetName, memGetInfo        uintptr
	malloc, free, hostMalloc, hostFree, memcpyAsync                uintptr
	streamCreateWithFlags, streamSynchronize, streamDestroy        uintptr
	eventCreateWithFlags, eventRecord, eventSynchronize            uintptr
	streamWaitEvent, eventDestroy                                  uintptr
}

type symbol struct {
	name     string
	fn       *uintptr
	optional bool
}

func (r *hipRT) symbols() []symbol {
	return []symbol{
		{"hipGetDeviceCount", &r.getDeviceCount, false},
		{"hipSetDevice", &r.setDevice, false},
		{"hipDriverGetVersion", &r.driverGetVersion, false},
		{"hipRuntimeGetVersion", &r.runtimeGetVersion, false},
		{"hipGetErrorString", &r.getErrorString, false},
		{"hipGetErrorName", &r.getErrorName, false},
		{"hipDeviceGetName", &r.deviceGetName, true},
		{"hipMemGetInfo", &r.memGetInfo, false},
		{"hipMalloc", &r.malloc, false},
		{"hipFree", &r.free, false},
		{"hipHostMalloc", &r.hostMalloc, false},
		{"hipHostFree", &r.hostFree, false},
		{"hipMemcpyAsync", &r.memcpyAsync, false},
		{"hipStreamCreateWithFlags", &r.streamCreateWithFlags, false},
		{"hipStreamSynchronize", &r.streamSynchronize, false},
		{"hipStreamDestroy", &r.streamDestroy, false},
		{"hipEventCreateWithFlags", &r.eventCreateWithFlags, false},
		{"hipEventRecord", &r.eventRecord, false},
		{"hipEventSynchronize", &r.eventSynchronize, false},
		{"hipStreamWaitEvent", &r.streamWaitEvent, false},
		{"hipEventDestroy", &r.eventDestroy, false},
	}
}

// code calls fn and returns its hipError_t. The enum is a C int: the upper
// half of the return register is not part of it.
func (r *hipRT) code(fn uintptr, args ...uintptr) int32 {
	return int32(ffi.Call(fn, args...))
}

// call calls fn and turns a failure into a *device.RuntimeError.
func (r *hipRT) call(name string, fn uintptr, args ...uintptr) error {
	if c := int32(ffi.Call(fn, args...)); c != hipSuccess {
		return r.error(name, c)
	}
	return nil
}

func (r *hipRT) error(call string, code int32) *device.RuntimeError {
	return &device.RuntimeError{Runtime: "hip", Call: call, Code: int(code), Message: r.errorString(code)}
}

// errorString is hipGetErrorString's text, or hipGetErrorName's where the
// runtime has no description.
func (r *hipRT) errorString(code int32) string {
	if s := ffi.GoString(ffi.Call(r.getErrorString, uintptr(uint32(code)))); s != "" {
		return s
	}
	return ffi.GoString(ffi.Call(r.getErrorName, uintptr(uint32(code))))
}

// version reads the runtime and driver versions; HIP encodes them as
// major*10000000 + minor*100000 + patch.
func (r *hipRT) version() string {
	v := out[[2]int32]()
	var parts []string
	if r.code(r.runtimeGetVersion, uintptr(unsafe.Pointer(&v[0]))) == hipSuccess {
		parts = append(parts, "runtime "+hipVersion(v[0]))
	}
	if r.code(r.driverGetVersion, uintptr(unsafe.Pointer(&v[1]))) == hipSuccess && v[1] > 0 {
		parts = append(parts, "driver "+hipVersion(v[1]))
	}
	return strings.Join(parts, ", ")
}

func hipVersion(v int32) string {
	if v < 10000000 {
		return fmt.Sprint(v)
	}
	return fmt.Sprintf("%d.%d.%d", v/10000000, v/100000%100, v%100000)
}

func (r *hipRT) deviceName(ordinal int) string {
	fallback := fmt.Sprintf("hip:%d", ordinal)
	if r.deviceGetName == 0 {
		return fallback
	}
	buf := out[[256]byte]()
	if r.code(r.deviceGetName, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(ordinal)) != hipSuccess {
		return fallback
	}
	n := 0
	for n < len(buf) && buf[n] != 0 {
		n++
	}
	if n == 0 {
		return fallback
	}
	return string(buf[:n])
}

// out returns a zeroed T on the Go heap for C to write into. A stack
// variable would not do: its address travels as a uintptr, which a stack
// move (in any call before C runs) would leave dangling.
//
//go:noinline
func out[T any]() *T { return new(T) }

var errClosed = errors.New("hip: use after Close")
