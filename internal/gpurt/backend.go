package gpurt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
)

// Candidates lists the libraries a Backend tries, in order, and whether
// they were named explicitly (by the table's EnvLibrary).
type Candidates func() (paths []string, explicit bool)

// Search is the usual search: the path in $EnvLibrary alone when it is set
// (so that a wrong path is reported instead of another runtime silently
// loading), else platform's list.
func (t *Table) Search(platform func() []string) Candidates {
	return func() ([]string, bool) {
		if p := os.Getenv(t.EnvLibrary); p != "" {
			return []string{p}, true
		}
		return platform(), false
	}
}

// Paths tries exactly paths (tests).
func Paths(paths ...string) Candidates {
	return func() ([]string, bool) { return paths, false }
}

// Libraries is a platform's list of libraries: names, for the system
// loader's search path, then the files matching each of globs (skipping
// empty ones), highest name first (so that libcudart.so.13 comes before
// libcudart.so.12). A glob that matches nothing stays in the list: a
// Backend reports it as looked at, and does not open it.
func Libraries(names []string, globs ...string) []string {
	for _, g := range globs {
		if g == "" {
			continue
		}
		m, _ := filepath.Glob(g)
		if len(m) == 0 {
			m = []string{g}
		}
		sort.Sort(sort.Reverse(sort.StringSlice(m)))
		names = append(names, m...)
	}
	return names
}

// Under is the path elem... in the directory named by the environment
// variable env, or "" when env is not set.
func Under(env string, elem ...string) string {
	dir := os.Getenv(env)
	if dir == "" {
		return ""
	}
	return filepath.Join(append([]string{dir}, elem...)...)
}

// A Backend is a device.Backend for a runtime described by a Table.
type Backend struct {
	t          *Table
	candidates Candidates
	register   bool // register the devices found with package device

	mu   sync.Mutex
	done chan struct{} // closed when the one probe has finished
	info device.Info
	err  error
	gpus []*gpu
}

// NewBackend returns an unprobed backend; register: its probe registers
// the devices it finds with package device.
func NewBackend(t *Table, c Candidates, register bool) *Backend {
	return &Backend{t: t, candidates: c, register: register}
}

// Register returns the backend of a runtime package (the usual Search for
// its library, registering the devices its probe finds) and registers it
// with package device.
func Register(t *Table, platform func() []string) *Backend {
	b := NewBackend(t, t.Search(platform), true)
	device.RegisterBackend(b)
	return b
}

// Name is the table's name, e.g. "cuda".
func (b *Backend) Name() string { return b.t.Name }

// Probe loads the library and lists its devices, once: later and concurrent
// callers get the first answer (or give up with their ctx). A ctx already
// done before the probe starts leaves the backend unprobed. When the
// library loaded but cannot be used (no device, a driver too old) the Info
// still names the library, and its version when it could be read; the
// candidates tried in turn and passed over are in Info.Skipped (see probe).
func (b *Backend) Probe(ctx context.Context) (device.Info, error) {
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

// run probes, and releases the waiters even if the probe panics (a bug),
// which would otherwise leave them waiting forever.
func (b *Backend) run() {
	defer close(b.done)
	defer func() {
		if p := recover(); p != nil {
			b.info, b.err = device.Info{}, fmt.Errorf("%w: %s: probe panicked: %v", device.ErrRuntime, b.t.Name, p)
		}
	}()
	b.err = b.probe()
}

// answer copies the device list, which callers may change.
func (b *Backend) answer() (device.Info, error) {
	info := b.info
	info.Devices = slices.Clone(info.Devices)
	return info, b.err
}

// probe tries the candidates that load in turn, newest first, and stops at
// the first that serves this machine or fails for a reason an older runtime
// would share (no device, no driver): one that is newer than the driver
// supports, or lacks functions, is skipped, and named with why in
// Info.Skipped. When every one that loaded was skipped, the error and the
// Info are the first's, and the others are in Info.Skipped.
func (b *Backend) probe() error {
	type tried struct {
		info   device.Info
		err    error
		loaded bool
	}
	var passed []tried
	var stop *tried
	err := open(b.t, b.candidates, func(lib *ffi.Library) bool {
		b.info = device.Info{Library: lib.Path()}
		err := b.try(lib)
		if err == nil || !skippable(err) {
			stop = &tried{b.info, err, true}
			return true
		}
		passed = append(passed, tried{b.info, err, true})
		return false
	}, func(path string, err error) {
		passed = append(passed, tried{device.Info{Library: path}, err, false})
	})
	i := slices.IndexFunc(passed, func(t tried) bool { return t.loaded })
	if err != nil && i < 0 {
		return err
	}
	if stop == nil {
		first := passed[i]
		stop, passed = &first, slices.Delete(passed, i, i+1)
	}
	b.info = stop.info
	for _, p := range passed {
		b.info.Skipped = append(b.info.Skipped, p.info.Library+": "+skipReason(b.t.Name, p.err))
	}
	return stop.err
}

// skippable: the library cannot serve, but an older one might.
func skippable(err error) bool {
	var pe *probeError
	return errors.Is(err, device.ErrMissingSymbol) || errors.As(err, &pe) && pe.tooNew
}

// skipReason is err without the backend's name.
func skipReason(name string, err error) string {
	return strings.TrimPrefix(oneLine(err.Error()), name+": ")
}

// try binds lib and lists its devices.
func (b *Backend) try(lib *ffi.Library) error {
	t := b.t
	r, err := Bind(t, lib)
	if err != nil {
		return err
	}
	if err := r.versions(); err != nil {
		return &probeError{msg: fmt.Sprintf("%s: %s: %v", t.Name, lib.Path(), err), sentinel: device.ErrRuntime, cause: err}
	}
	b.info.Version = r.Version()
	n, err := r.deviceCount()
	if err != nil {
		return err
	}
	for i := range n {
		g, err := newGPU(r, i)
		if err != nil {
			b.Close()
			return fmt.Errorf("%s: device %d: %w", t.Name, i, err)
		}
		b.gpus = append(b.gpus, g)
	}
	for _, g := range b.gpus {
		for k := range t.Kinds {
			d := t.Wrap(&Device{g: g, kind: k})
			b.info.Devices = append(b.info.Devices, d)
			if b.register {
				device.Register(d)
			}
		}
	}
	return nil
}

// Close destroys the default streams (tests, and a probe that failed half
// way); the library stays loaded, as unloading a GPU runtime is unsafe.
func (b *Backend) Close() error {
	var first error
	for _, g := range b.gpus {
		if err := g.close(); err != nil && first == nil {
			first = err
		}
	}
	b.gpus = nil
	return first
}

// open loads the candidates in turn and gives each that loads to use,
// until use returns true (done); unloadable hears of each that exists but
// does not load. The error, when none was done, lists what
// was tried, and says why when a library exists but would not load (or
// when the one library named explicitly is absent).
func open(t *Table, c Candidates, use func(*ffi.Library) bool, unloadable func(path string, err error)) error {
	paths, explicit := c()
	if len(paths) == 0 {
		return &probeError{msg: fmt.Sprintf("%s: not installed: no %s runtime is known on this system (set %s)", t.Name, t.Title, t.EnvLibrary),
			sentinel: device.ErrNotFound}
	}
	var detail error // the first loader error worth showing
	present := false // a candidate exists but did not load
	for _, p := range paths {
		if strings.ContainsAny(p, "*?[") {
			continue // a pattern that matched nothing
		}
		lib, err := ffi.Open(p)
		if err == nil {
			if use(lib) {
				return nil
			}
			continue
		}
		switch {
		case !absent(err.Error()):
			unloadable(p, fmt.Errorf("cannot load it: %s", oneLine(err.Error())))
			if !present {
				detail = err
			}
			present = true
		case explicit:
			detail = err
		}
	}
	what, list := "not installed", strings.Join(paths, ", ")
	if present {
		what = "cannot load it"
	}
	if explicit {
		list = t.EnvLibrary + "=" + paths[0]
	}
	msg := fmt.Sprintf("%s: %s: tried %s", t.Name, what, list)
	if detail != nil {
		msg += " (" + oneLine(detail.Error()) + ")"
	}
	return &probeError{msg: msg, sentinel: device.ErrNotFound, cause: detail}
}

// absent reports whether a loader error says only that the file is not
// there (glibc and musl, Windows, macOS wordings).
func absent(msg string) bool {
	for _, s := range []string{"No such file or directory", "could not be found", "image not found", "no such file"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// probeError carries a one-line message (what the loader shows as the
// reason) and the sentinel that callers test with errors.Is.
type probeError struct {
	msg      string
	sentinel error
	cause    error
	tooNew   bool // the runtime needs a newer driver than is installed
}

func (e *probeError) Error() string { return e.msg }

func (e *probeError) Unwrap() []error {
	if e.cause != nil {
		return []error{e.sentinel, e.cause}
	}
	return []error{e.sentinel}
}
