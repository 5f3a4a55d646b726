// Package cuda is the CUDA backend: libcudart loaded at run time through
// internal/ffi, no cgo and no CUDA toolkit needed to build.
//
// Each CUDA device ordinal n gives three devices: cuda:n (cudaMalloc),
// cuda_host:n (cudaMallocHost, pinned host memory) and cuda_managed:n
// (cudaMallocManaged). The sync_event of their arrays is a cudaEvent_t*.
//
// The library is found, in order: the path in $CDEVICE_CUDA_LIBRARY (alone
// when set), then the sonames of CUDA 13, 12 and 11 and $CUDA_PATH (see
// candidates_*.go). Nothing is loaded before Backend.Probe.
package cuda

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/ffi"
)

// EnvLibrary names the environment variable with the path of the libcudart
// to load. When set, no other library is tried, so a wrong path is reported
// instead of silently loading another runtime.
const EnvLibrary = "CDEVICE_CUDA_LIBRARY"

// Backend is the CUDA runtime; it registers itself with package device, and
// its probe registers the devices it finds.
var Backend device.Backend = newBackend(candidates, true)

func init() { device.RegisterBackend(Backend) }

type backend struct {
	candidates func() []string
	register   bool // register found devices with package device

	once sync.Once
	info device.Info
	err  error
	gpus []*gpu
}

func newBackend(candidates func() []string, register bool) *backend {
	return &backend{candidates: candidates, register: register}
}

func (*backend) Name() string { return "cuda" }

// Probe loads libcudart and lists its devices, once; later calls return the
// first answer. When the library loaded but cannot be used (no device, a
// driver too old) the Info still names the library and its version.
func (b *backend) Probe(ctx context.Context) (device.Info, error) {
	if err := ctx.Err(); err != nil {
		return device.Info{}, err
	}
	b.once.Do(b.probe)
	info := b.info
	info.Devices = slices.Clone(info.Devices)
	return info, b.err
}

func (b *backend) probe() {
	lib, err := open(b.candidates())
	if err != nil {
		b.err = err
		return
	}
	b.info.Library = lib.Path()
	r, err := bind(lib)
	if err != nil {
		b.err = err
		return
	}
	if err := r.versions(); err != nil {
		b.err = fmt.Errorf("cuda: %s: %w", lib.Path(), err)
		return
	}
	b.info.Version = fmt.Sprintf("runtime %s, driver %s", version(r.runtimeVersion), version(r.driverVersion))
	n, err := r.deviceCount()
	if err != nil {
		b.err = err
		return
	}
	for i := range n {
		g, err := newGPU(r, i)
		if err != nil {
			b.close()
			b.err = fmt.Errorf("cuda: device %d: %w", i, err)
			return
		}
		b.gpus = append(b.gpus, g)
	}
	for _, g := range b.gpus {
		for _, k := range []abi.DeviceType{abi.DeviceCUDA, abi.DeviceCUDAHost, abi.DeviceCUDAManaged} {
			d := &Device{g: g, kind: k}
			b.info.Devices = append(b.info.Devices, d)
			if b.register {
				device.Register(d)
			}
		}
	}
}

// close destroys the default streams (tests, and a probe that failed half
// way); the library stays loaded, as unloading a CUDA runtime is unsafe.
func (b *backend) close() error {
	var errs []error
	for _, g := range b.gpus {
		if err := g.close(); err != nil {
			errs = append(errs, err)
		}
	}
	b.gpus = nil
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// open loads the first candidate that loads. The error lists what was
// tried, and says why for each library that exists but would not load.
func open(paths []string) (*ffi.Library, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("cuda: %w: no CUDA runtime is known on this system (set %s)", device.ErrNotFound, EnvLibrary)
	}
	var broken []string
	for _, p := range paths {
		lib, err := ffi.Open(p)
		if err == nil {
			return lib, nil
		}
		if msg := err.Error(); !absent(msg) {
			if !strings.Contains(msg, p) {
				msg = p + ": " + msg
			}
			broken = append(broken, "cannot load "+msg)
		}
	}
	msg := "tried " + strings.Join(paths, ", ")
	if len(broken) > 0 {
		msg += "; " + strings.Join(broken, "; ")
	}
	return nil, fmt.Errorf("cuda: %w: %s", device.ErrNotFound, msg)
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

// candidates lists the libraries to try, in order.
func candidates() []string {
	if p := os.Getenv(EnvLibrary); p != "" {
		return []string{p}
	}
	return platformCandidates()
}

// globNewestFirst returns the files matching pattern, in reverse name
// order, so that libcudart.so.13 comes before libcudart.so.12.
func globNewestFirst(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	sort.Sort(sort.Reverse(sort.StringSlice(m)))
	return m
}

// gpu is one device ordinal, shared by its three Devices.
type gpu struct {
	rt               *rt
	ordinal          int
	name             string
	ccMajor, ccMinor int
	stream           uintptr // default stream for nil: non-blocking, so it does not serialize with other streams
}

func newGPU(r *rt, ordinal int) (*gpu, error) {
	g := &gpu{rt: r, ordinal: ordinal}
	// cudaDeviceProp changes size between versions: give it far more room
	// than it needs, off the Go heap, and read only name.
	props, err := ffi.Calloc(propBufSize)
	if err != nil {
		return nil, err
	}
	defer ffi.Free(props)
	o := newOut()
	defer o.release()
	err = r.onDevice(ordinal, func() error {
		if err := r.call(r.getDevicePropertiesName, r.getDeviceProperties, uintptr(props), uintptr(ordinal)); err != nil {
			return err
		}
		if err := r.call("cudaDeviceGetAttribute", r.deviceGetAttribute, o.ptr(0), attrComputeCapMajor, uintptr(ordinal)); err != nil {
			return err
		}
		if err := r.call("cudaDeviceGetAttribute", r.deviceGetAttribute, o.ptr(1), attrComputeCapMinor, uintptr(ordinal)); err != nil {
			return err
		}
		return r.call("cudaStreamCreateWithFlags", r.streamCreateWithFlags, o.ptr(2), streamNonBlocking)
	})
	if err != nil {
		return nil, err
	}
	name := unsafe.Slice((*byte)(props), propNameLen)
	if i := bytes.IndexByte(name, 0); i >= 0 {
		name = name[:i]
	}
	g.name = string(name)
	g.ccMajor, g.ccMinor = o.int(0), o.int(1)
	g.stream = o.uintptr(2)
	return g, nil
}

func (g *gpu) close() error {
	if g.stream == 0 {
		return nil
	}
	err := g.rt.onDevice(g.ordinal, func() error {
		return g.rt.call("cudaStreamDestroy", g.rt.streamDestroy, g.stream)
	})
	if err == nil {
		g.stream = 0
	}
	return err
}
