package ffi

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ebitengine/purego"
)

// A Callback is a Go function with a C function pointer. purego has a fixed
// number of callback slots for the whole process and never frees them, so
// every callback is declared once, at package level, and its C pointer is
// made on first use.
//
// A panic in the Go function is recovered: the C caller gets PanicResult and
// the panic is counted (see Panics).
type Callback struct {
	name string
	fn   any // one of the func types accepted by call
	once sync.Once
	ptr  atomic.Uintptr
}

// PanicResult is what a callback returns to C when its Go body panicked.
const PanicResult = ^uintptr(0) // -1 as a C int or int64

var (
	panics    atomic.Int64
	lastPanic atomic.Value // string

	byPtrMu sync.Mutex
	byPtr   atomic.Pointer[map[uintptr]*Callback]
)

// Panics returns how many callback bodies have panicked in this process and
// the text of the last panic.
func Panics() (int64, string) {
	s, _ := lastPanic.Load().(string)
	return panics.Load(), s
}

// NewCallback1, NewCallback2, NewCallback3 and NewCallback4 declare callbacks
// taking one to four integer or pointer arguments. All of them return an
// integer (Windows callbacks must); a void C function type ignores it.
func NewCallback1(name string, fn func(a uintptr) uintptr) *Callback {
	return &Callback{name: name, fn: fn}
}

// NewCallback2: see NewCallback1.
func NewCallback2(name string, fn func(a, b uintptr) uintptr) *Callback {
	return &Callback{name: name, fn: fn}
}

// NewCallback3: see NewCallback1.
func NewCallback3(name string, fn func(a, b, c uintptr) uintptr) *Callback {
	return &Callback{name: name, fn: fn}
}

// NewCallback4: see NewCallback1.
func NewCallback4(name string, fn func(a, b, c, d uintptr) uintptr) *Callback {
	return &Callback{name: name, fn: fn}
}

// Name is the name the callback was declared with.
func (c *Callback) Name() string { return c.name }

// Ptr returns the C function pointer of the callback.
func (c *Callback) Ptr() uintptr {
	c.once.Do(c.make)
	return c.ptr.Load()
}

// Is reports whether fn is this callback's C function pointer, without making
// one if none was made yet.
func (c *Callback) Is(fn uintptr) bool { return fn != 0 && c.ptr.Load() == fn }

func (c *Callback) make() {
	var wrapped any
	switch f := c.fn.(type) {
	case func(uintptr) uintptr:
		wrapped = func(a uintptr) (r uintptr) {
			defer recoverInto(c, &r)
			return f(a)
		}
	case func(uintptr, uintptr) uintptr:
		wrapped = func(a, b uintptr) (r uintptr) {
			defer recoverInto(c, &r)
			return f(a, b)
		}
	case func(uintptr, uintptr, uintptr) uintptr:
		wrapped = func(a, b, d uintptr) (r uintptr) {
			defer recoverInto(c, &r)
			return f(a, b, d)
		}
	case func(uintptr, uintptr, uintptr, uintptr) uintptr:
		wrapped = func(a, b, d, e uintptr) (r uintptr) {
			defer recoverInto(c, &r)
			return f(a, b, d, e)
		}
	}
	p := purego.NewCallback(wrapped)
	byPtrMu.Lock()
	defer byPtrMu.Unlock()
	next := map[uintptr]*Callback{p: c}
	if old := byPtr.Load(); old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	byPtr.Store(&next)
	c.ptr.Store(p)
}

func recoverInto(c *Callback, r *uintptr) {
	if p := recover(); p != nil {
		panics.Add(1)
		lastPanic.Store(fmt.Sprintf("%s: %v", c.name, p))
		*r = PanicResult
	}
}

func lookupCallback(fn uintptr) *Callback {
	if m := byPtr.Load(); m != nil {
		return (*m)[fn]
	}
	return nil
}

// call runs the Go function directly, with the same panic recovery C gets.
func (c *Callback) call(args []uintptr) (r uintptr) {
	defer recoverInto(c, &r)
	arg := func(i int) uintptr {
		if i < len(args) {
			return args[i]
		}
		return 0
	}
	switch f := c.fn.(type) {
	case func(uintptr) uintptr:
		return f(arg(0))
	case func(uintptr, uintptr) uintptr:
		return f(arg(0), arg(1))
	case func(uintptr, uintptr, uintptr) uintptr:
		return f(arg(0), arg(1), arg(2))
	case func(uintptr, uintptr, uintptr, uintptr) uintptr:
		return f(arg(0), arg(1), arg(2), arg(3))
	}
	return PanicResult
}

func (c *Callback) call1(f func(uintptr) uintptr, a uintptr) (r uintptr) {
	defer recoverInto(c, &r)
	return f(a)
}
