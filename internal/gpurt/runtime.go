package gpurt

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
)

// A Runtime is a loaded runtime library with its table's functions bound.
type Runtime struct {
	t     *Table
	lib   *ffi.Library
	fn    [numOps]symbol
	kinds []kindSymbols // parallel to t.Kinds
	// hostCPU is Table.HostCPU's question for this library; nil: none.
	hostCPU func(stream uintptr) bool

	runtimeVersion, driverVersion int
}

// A symbol is a bound function and the name it was bound by, for errors.
type symbol struct {
	name string
	fn   uintptr
}

// kindSymbols are a kind's functions; missing names those an optional
// kind lacks (the kind is then unusable).
type kindSymbols struct {
	alloc, free symbol
	missing     []string
}

// Bind looks up every function of t in lib. When any is missing the error
// wraps device.ErrMissingSymbol and names all that are missing (the last
// alternative of each), so that an old runtime says everything it lacks.
func Bind(t *Table, lib *ffi.Library) (*Runtime, error) {
	r := &Runtime{t: t, lib: lib, kinds: make([]kindSymbols, len(t.Kinds))}
	var missing []string
	var cause error
	try := func(names ...string) (symbol, error) {
		var first error
		for _, name := range names {
			p, err := lib.Symbol(name)
			if err == nil {
				return symbol{name, p}, nil
			}
			if first == nil {
				first = err
			}
		}
		return symbol{}, first
	}
	bind := func(names ...string) symbol {
		s, err := try(names...)
		if err != nil {
			if cause == nil {
				cause = err
			}
			if last := names[len(names)-1]; !contains(missing, last) {
				missing = append(missing, last)
			}
		}
		return s
	}
	for op := range numOps {
		names := t.Names(op)
		switch {
		case len(names) == 0:
		case slices.Contains(t.Optional, op):
			r.fn[op], _ = try(names...) // unbound where missing: Has says so
		default:
			r.fn[op] = bind(names...)
		}
	}
	for i := range t.Kinds {
		k := &t.Kinds[i]
		if !k.Optional {
			r.kinds[i] = kindSymbols{alloc: bind(k.allocNames()...), free: bind(k.freeNames()...)}
			continue
		}
		ks := &r.kinds[i]
		var errA, errF error
		ks.alloc, errA = try(k.allocNames()...)
		ks.free, errF = try(k.freeNames()...)
		if errA != nil {
			ks.missing = append(ks.missing, strings.Join(k.allocNames(), " or "))
		}
		if errF != nil {
			ks.missing = append(ks.missing, strings.Join(k.freeNames(), " or "))
		}
	}
	if t.HostCPU != nil {
		r.hostCPU = t.HostCPU(lib)
	}
	if len(missing) > 0 {
		return nil, &probeError{
			msg: fmt.Sprintf("%s: %s lacks %s (a %s runtime older than this library supports?)",
				t.Name, lib.Path(), strings.Join(missing, ", "), t.Title),
			sentinel: device.ErrMissingSymbol, cause: cause,
		}
	}
	return r, nil
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// Has reports whether op is bound (an Optional op may not be).
func (r *Runtime) Has(op Op) bool { return r.fn[op].fn != 0 }

// Call calls op, whose result is a cudaError_t / hipError_t; a non-zero
// code is a *device.RuntimeError with the runtime's own message.
func (r *Runtime) Call(op Op, args ...uintptr) error { return r.call(r.fn[op], args...) }

// Ready calls op, a query whose NotReady code is an answer rather than a
// failure (EventQuery): true when done, false while the work runs.
func (r *Runtime) Ready(op Op, args ...uintptr) (bool, error) {
	switch code := code(r.fn[op], args...); code {
	case 0:
		return true, nil
	case r.t.Codes.NotReady:
		return false, nil
	default:
		return false, r.Error(r.fn[op].name, code)
	}
}

// newStream makes a non-blocking stream, and newEvent an event without
// timing, of the current GPU: the only kinds this package makes.
func (r *Runtime) newStream() (uintptr, error) {
	return r.create(StreamCreateWithFlags, r.t.StreamNonBlocking)
}

func (r *Runtime) newEvent() (uintptr, error) {
	return r.create(EventCreateWithFlags, r.t.EventDisableTiming)
}

// create calls op(&handle, flags) and returns the handle.
func (r *Runtime) create(op Op, flags uintptr) (uintptr, error) {
	o := newOut()
	defer o.release()
	err := r.Call(op, o.ptr(0), flags)
	return o.uintptr(0), err
}

// destroy calls op (StreamDestroy, EventDestroy) on h, a handle of our own
// that no caller can release again: when it fails, it tries once more, so
// nothing is left behind, and still returns the first failure (a runtime
// that fails to destroy is not to be trusted quietly).
func (r *Runtime) destroy(op Op, h uintptr) error {
	err := r.Call(op, h)
	if err != nil {
		r.Call(op, h)
	}
	return err
}

func (r *Runtime) call(s symbol, args ...uintptr) error {
	if code := code(s, args...); code != 0 {
		return r.Error(s.name, code)
	}
	return nil
}

// code calls s for its cudaError_t / hipError_t, a C enum (int): only the
// low 32 bits are defined.
func code(s symbol, args ...uintptr) int { return int(int32(ffi.Call(s.fn, args...))) }

// Error is the RuntimeError of call failing with code: the runtime's
// description, or its name for the code where it has no description.
func (r *Runtime) Error(call string, code int) *device.RuntimeError {
	msg := r.errorText(GetErrorString, code)
	if msg == "" {
		msg = r.ErrorName(code)
	}
	return &device.RuntimeError{Runtime: r.t.Name, Call: call, Code: code, Message: msg}
}

// ErrorName is the runtime's name for an error code, e.g.
// "cudaErrorMemoryAllocation" ("CUDA_ERROR_OUT_OF_MEMORY" through the
// driver API).
func (r *Runtime) ErrorName(code int) string { return r.errorText(GetErrorName, code) }

// on runs f with the goroutine locked to its OS thread and a GPU current on
// that thread (current is SetDevice's argument for it, see openGPU): the
// runtimes keep the current device per thread, and a goroutine may move
// between threads between any two calls.
func (r *Runtime) on(current uintptr, f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := r.Call(SetDevice, current); err != nil {
		return err
	}
	return f()
}

// An out is scratch for out-parameters. C writes through its address, so it
// lives on the Go heap (which never moves) and is pinned while in use.
type out struct {
	pin runtime.Pinner
	v   [2]uint64
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

// deviceCount returns how many devices there are, or why none can be used.
func (r *Runtime) deviceCount() (int, error) {
	o := newOut()
	defer o.release()
	err := r.initialize()
	if err == nil {
		err = r.Call(GetDeviceCount, o.ptr(0))
	}
	n := o.int(0)
	t, c := r.t, r.t.Codes
	var re *device.RuntimeError
	if !errors.As(err, &re) {
		if err == nil && n <= 0 {
			return 0, &probeError{msg: fmt.Sprintf("%s: no device (%s): %s found none", t.Name, r.codeName(c.NoDevice), r.fn[GetDeviceCount].name),
				sentinel: device.ErrNoDevice}
		}
		return n, err
	}
	switch re.Code {
	case c.NoDevice:
		msg := fmt.Sprintf("%s: no device (%s)", t.Name, r.codeName(re.Code))
		// Some runtimes (HIP 5) describe codes by their names.
		if re.Message != "" && re.Message != r.ErrorName(re.Code) {
			msg += ": " + re.Message
		}
		return 0, &probeError{msg: msg, sentinel: device.ErrNoDevice, cause: re}
	case c.InsufficientDriver:
		if t.DriverVersionIsRuntime { // the driver's version is unknown: absent, or too old
			return 0, &probeError{msg: fmt.Sprintf("%s: driver too old or absent: the %s runtime %s needs a newer %s than is loaded, or there is none: %v",
				t.Name, t.Title, t.FormatVersion(r.runtimeVersion), t.Driver, re),
				sentinel: device.ErrRuntime, cause: re, tooNew: true}
		}
		if r.driverVersion == 0 {
			return 0, &probeError{msg: fmt.Sprintf("%s: no device: no %s is installed: %v", t.Name, t.Driver, re),
				sentinel: device.ErrNoDevice, cause: re}
		}
		return 0, &probeError{msg: fmt.Sprintf("%s: driver too old: it supports %s %s, the runtime is %s %s: %v", t.Name,
			t.Title, t.FormatVersion(r.driverVersion), t.Title, t.FormatVersion(r.runtimeVersion), re),
			sentinel: device.ErrRuntime, cause: re, tooNew: true}
	case c.StubLibrary:
		return 0, &probeError{msg: fmt.Sprintf("%s: no device: the %s library is an SDK's stub, not a driver: %v", t.Name, t.Driver, re),
			sentinel: device.ErrNoDevice, cause: re}
	}
	return 0, re
}

// codeName is "cudaErrorNoDevice, 100".
func (r *Runtime) codeName(code int) string {
	if name := r.ErrorName(code); name != "" {
		return fmt.Sprintf("%s, %d", name, code)
	}
	return fmt.Sprint(code)
}
