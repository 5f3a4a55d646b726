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

// Source is t with the usual Search over platform's list.
func (t *Table) Source(platform func() []string) Source { return Source{t, t.Search(platform)} }

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
// variable env, or "" when env is unset, empty or relative (ffi.EnvDir).
func Under(env string, elem ...string) string { return ffi.EnvDir(env, elem...) }

// A Source is one API of a backend: its table and where its libraries are.
type Source struct {
	Table      *Table
	Candidates Candidates
}

// A Backend is a device.Backend for a runtime described by one Table, or
// by several of the same GPUs (CUDA's runtime and driver APIs), tried in
// turn (see probe).
type Backend struct {
	sources  []Source
	register bool // register the devices found with package device

	mu   sync.Mutex
	done chan struct{} // closed when the one probe has finished
	info device.Info
	err  error
	gpus []*gpu
}

// NewBackend returns an unprobed backend over sources, the preferred
// first; register: its probe registers the devices it finds with package
// device.
func NewBackend(register bool, sources ...Source) *Backend {
	return &Backend{sources: sources, register: register}
}

// Register returns the backend of a runtime package over sources (see
// Table.Source), registering the devices its probe finds, and registers it
// with package device.
func Register(sources ...Source) *Backend {
	b := NewBackend(true, sources...)
	device.RegisterBackend(b)
	return b
}

// Name is the tables' name, e.g. "cuda".
func (b *Backend) Name() string { return b.sources[0].Table.Name }

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
			b.info, b.err = device.Info{}, fmt.Errorf("%w: %s: probe panicked: %v", device.ErrRuntime, b.Name(), p)
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

// probe probes the sources in turn (see chosen) and stops at the first
// that serves; Info.Note says which API served and why, and Info.Skipped
// keeps every source's skipped libraries. When none serves, the error and
// the Info are those of the first that found a library (the first
// source's, when none did).
func (b *Backend) probe() error {
	srcs, why, err := b.chosen()
	if err != nil {
		return err
	}
	type result struct {
		info device.Info
		err  error
	}
	var failed []result
	var skipped []string
	for i, src := range srcs {
		b.info = device.Info{}
		err := b.probeSource(src)
		skipped = append(skipped, b.info.Skipped...)
		if err == nil {
			b.info.Skipped = skipped
			switch {
			case why != "":
				b.info.Note = fmt.Sprintf("%s API, as %s", src.Table.API, why)
			case i > 0:
				b.info.Note = fmt.Sprintf("%s API, as the %s API cannot serve: %s", src.Table.API, srcs[0].Table.API,
					skipReason(b.Name(), failed[0].err))
			}
			return nil
		}
		failed = append(failed, result{b.info, err})
	}
	pick := slices.IndexFunc(failed, func(r result) bool { return !errors.Is(r.err, device.ErrNotFound) })
	if pick < 0 {
		pick = 0
	}
	b.info = failed[pick].info
	b.info.Skipped = skipped
	if pick == 0 && len(failed) > 1 && errors.Is(failed[0].err, device.ErrNotFound) {
		// Nothing found anywhere: say everything that was looked for.
		var also []string
		for i, r := range failed[1:] {
			also = append(also, fmt.Sprintf("%s API: %s", srcs[i+1].Table.API, skipReason(b.Name(), r.err)))
		}
		return &probeError{msg: failed[0].err.Error() + "; " + strings.Join(also, "; "),
			sentinel: device.ErrNotFound, cause: failed[0].err}
	}
	return failed[pick].err
}

// chosen is the sources to probe, and why when not all (for Info.Note):
// the one $EnvAPI names; else those whose library a variable names (so
// that a wrong path is reported, not passed over for another API's
// library); else all.
func (b *Backend) chosen() (srcs []Source, why string, err error) {
	env := b.sources[0].Table.EnvAPI
	if v := os.Getenv(env); env != "" && v != "" {
		var names []string
		for _, s := range b.sources {
			if s.Table.API.String() == v {
				return []Source{s}, fmt.Sprintf("%s=%s asks", env, v), nil
			}
			names = append(names, fmt.Sprintf("%q", s.Table.API.String()))
		}
		return nil, "", &probeError{msg: fmt.Sprintf("%s: %s=%q: want %s", b.Name(), env, v, strings.Join(names, " or ")),
			sentinel: device.ErrInvalid}
	}
	var named []string
	for _, s := range b.sources {
		if os.Getenv(s.Table.EnvLibrary) != "" {
			srcs = append(srcs, s)
			named = append(named, s.Table.EnvLibrary)
		}
	}
	if len(srcs) == 0 || len(srcs) == len(b.sources) {
		return b.sources, "", nil
	}
	return srcs, strings.Join(named, " and ") + " names its library", nil
}

// probeSource tries the candidates of src that load in turn, newest first,
// and stops at the first that serves this machine or fails for a reason an
// older runtime would share (no device, no driver): one that is newer than
// the driver supports, or lacks functions, is skipped, and named with why
// in Info.Skipped. When every one that loaded was skipped, the error and
// the Info are the first's, and the others are in Info.Skipped.
func (b *Backend) probeSource(src Source) error {
	type tried struct {
		info   device.Info
		err    error
		loaded bool
	}
	var passed []tried
	var stop *tried
	err := open(src.Table, src.Candidates, func(lib *ffi.Library) bool {
		b.info = device.Info{Library: lib.Path()}
		err := b.try(src.Table, lib)
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
		b.info.Skipped = append(b.info.Skipped, p.info.Library+": "+skipReason(b.Name(), p.err))
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

// try binds lib as t and lists its devices.
func (b *Backend) try(t *Table, lib *ffi.Library) error {
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
	var gpus []*gpu
	for i := range n {
		g, err := newGPU(r, i)
		if g != nil {
			gpus = append(gpus, g)
		}
		if err != nil {
			// Give back this library's GPUs; one whose release fails
			// stays for Close, but is no device of this backend.
			for _, g := range gpus {
				if g.close() != nil {
					b.gpus = append(b.gpus, g)
				}
			}
			return fmt.Errorf("%w, on device %d", err, i) // err names the runtime
		}
	}
	b.gpus = append(b.gpus, gpus...)
	for _, g := range gpus {
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

// Close destroys the default streams and gives back the primary contexts
// (tests, and a probe that failed half way); the library stays loaded, as
// unloading a GPU runtime is unsafe. The devices it listed then refuse
// every call, as do their streams and events (close those first), with an
// error wrapping device.ErrReleased; the backend does not probe again. A
// GPU whose release failed stays, to close again.
func (b *Backend) Close() error {
	var first error
	var left []*gpu
	for _, g := range b.gpus {
		if err := g.close(); err != nil {
			left = append(left, g)
			if first == nil {
				first = err
			}
		}
	}
	b.gpus = left
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
	load := ffi.Open
	if t.SystemLibrary && !explicit {
		load = ffi.OpenSystem
	}
	for _, p := range paths {
		if strings.ContainsAny(p, "*?[") {
			continue // a pattern that matched nothing
		}
		lib, err := load(p)
		if err == nil {
			if use(lib) {
				return nil
			}
			continue
		}
		switch {
		case !errors.Is(err, ffi.ErrLibraryNotFound):
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
