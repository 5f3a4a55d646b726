package loader

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"

	// Every backend registers itself; the loader sees them only through
	// device.Backends().
	_ "github.com/purearrow/cdevice/device/cuda"
	_ "github.com/purearrow/cdevice/device/hip"
	_ "github.com/purearrow/cdevice/device/opencl"
)

// EnvDevice names the environment variable that overrides Default.
const EnvDevice = "CDEVICE_DEVICE"

var (
	// ErrBadDeviceSpec: a device spec (CDEVICE_DEVICE) that does not parse.
	ErrBadDeviceSpec = errors.New("loader: malformed device spec")
	// ErrUnavailable: a device spec names a device this machine does not have.
	ErrUnavailable = errors.New("loader: device not available")
)

// A Report is what discovery found.
type Report struct {
	// Backends sorted by name.
	Backends []BackendReport
	// Default is the device picked without CDEVICE_DEVICE (Default applies
	// the variable), and DefaultReason says why.
	Default       device.Device
	DefaultReason string
}

// A BackendReport is one backend's probe.
type BackendReport struct {
	Name    string
	Library string // the library loaded, when one was
	Version string
	Devices []DeviceReport
	// Err is the probe's error (nil when it found devices); it wraps
	// device.ErrNotFound, ErrNoDevice, ErrMissingSymbol or ErrRuntime.
	Err error
	// Reason is Err in one line without the backend's name, e.g.
	// "not installed: tried libcudart.so.13, …" or
	// "no device (hipErrorNoDevice, 100)"; empty when Err is nil.
	Reason string
	// Skipped are the libraries the backend loaded and passed over for a
	// later candidate, each "path: why" (device.Info.Skipped).
	Skipped []string
	// Note says which of the backend's APIs served and why, e.g. "driver
	// API, as the runtime API cannot serve: not installed: …"
	// (device.Info.Note); "" when the preferred one served unasked.
	Note string
	// Elapsed is the time the probe took, device memory queries included.
	// It is 0 when the probe ended within one tick of the clock: Windows'
	// (and Wine's) clock may advance in steps of about 16 ms, so a probe
	// that finds nothing installed can truly measure 0. Never negative.
	Elapsed time.Duration
}

// A DeviceReport is one device a backend found.
type DeviceReport struct {
	Type                    abi.DeviceType
	ID                      int64
	Name                    string
	TotalMemory, FreeMemory int64 // bytes; 0 when the runtime does not say
	Device                  device.Device
}

// Spec returns the device's CDEVICE_DEVICE spelling, e.g. "cuda:0".
func (d DeviceReport) Spec() string { return spec(d.Type, d.ID) }

func spec(t abi.DeviceType, id int64) string {
	if t == abi.DeviceCPU {
		return "cpu"
	}
	return t.String() + ":" + strconv.FormatInt(id, 10)
}

// discovery is one run of every probe; done is closed when report is set.
type discovery struct {
	done   chan struct{}
	report *Report
}

var cache struct {
	mu sync.Mutex
	d  *discovery
}

// now is the clock that probes are timed by; tests swap in a coarse one.
var now = time.Now

// Discover probes every registered backend, once per process: later calls
// return the same report, and concurrent callers wait for the one probe.
// A cancelled ctx stops the wait, not the probes, which finish for the next
// caller; the only error is ctx's.
func Discover(ctx context.Context) (*Report, error) {
	cache.mu.Lock()
	d := cache.d
	if d == nil {
		// Lazy to the end: a caller that gave up before anything started
		// loads nothing.
		if err := ctx.Err(); err != nil {
			cache.mu.Unlock()
			return nil, err
		}
		d = &discovery{done: make(chan struct{})}
		cache.d = d
		go func() {
			bs := device.Backends()
			// Registration follows package initialization, which is not an
			// order to show; names are.
			slices.SortStableFunc(bs, func(a, b device.Backend) int { return strings.Compare(a.Name(), b.Name()) })
			d.report = discover(bs)
			close(d.done)
		}()
	}
	cache.mu.Unlock()
	select {
	case <-d.done:
		return d.report, nil
	default:
	}
	select {
	case <-d.done:
		return d.report, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// discover probes the backends one after another. Concurrent probes were
// slower here (dlopen holds one process-wide lock while a runtime's
// constructors run, and HIP and PoCL both start LLVM) and made each probe's
// Elapsed include its wait for the others.
func discover(backends []device.Backend) *Report {
	r := &Report{Backends: make([]BackendReport, len(backends))}
	for i, b := range backends {
		r.Backends[i] = probe(b)
	}
	r.Default, r.DefaultReason = pick(r.Backends)
	return r
}

func probe(b device.Backend) (br BackendReport) {
	br.Name = b.Name()
	start := now()
	defer func() { br.Elapsed = max(now().Sub(start), 0) }()
	// A backend is a plugin: its panic becomes its report, not ours.
	defer func() {
		if p := recover(); p != nil {
			br.Devices = nil
			br.Err = fmt.Errorf("%w: %s: probe panicked: %v", device.ErrRuntime, br.Name, p)
			br.Reason = reason(br.Name, br.Err)
		}
	}()
	info, err := b.Probe(context.Background())
	br.Library, br.Version, br.Skipped, br.Note = info.Library, info.Version, info.Skipped, info.Note
	if err == nil && len(info.Devices) == 0 {
		err = fmt.Errorf("%w: %s: the probe found no devices", device.ErrNoDevice, br.Name)
	}
	if err != nil {
		br.Err, br.Reason = err, reason(br.Name, err)
		return br
	}
	for _, d := range info.Devices {
		dr := DeviceReport{Type: d.Type(), ID: d.ID(), Name: d.Name(), Device: d}
		if free, total, err := d.MemoryInfo(); err == nil {
			dr.FreeMemory, dr.TotalMemory = free, total
		}
		br.Devices = append(br.Devices, dr)
	}
	return br
}

// reason turns a probe error into one line without the sentinel's text
// (which "%w: …" or "…: %w" puts at either end) and the backend's name,
// saying the kind of failure when the text does not.
func reason(name string, err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	for prev := ""; prev != s; {
		prev = s
		s = strings.TrimPrefix(s, name+": ")
		for _, sentinel := range []error{device.ErrNotFound, device.ErrNoDevice, device.ErrMissingSymbol, device.ErrRuntime} {
			s = strings.TrimPrefix(s, sentinel.Error()+": ")
			s = strings.TrimSuffix(s, ": "+sentinel.Error())
		}
	}
	switch {
	case errors.Is(err, device.ErrNotFound):
		if !strings.HasPrefix(s, "not installed") && !strings.HasPrefix(s, "cannot load") {
			s = "not installed: " + s
		}
	case errors.Is(err, device.ErrNoDevice):
		if !strings.HasPrefix(s, "no device") {
			s = "no device: " + s
		}
	}
	return s
}

// rank orders devices for the automatic default; -1 is never picked.
func rank(d *DeviceReport) int {
	if onHostCPU(d) {
		return -1
	}
	switch d.Type {
	case abi.DeviceCUDA:
		return 0
	case abi.DeviceROCm:
		return 1
	case abi.DeviceMetal, abi.DeviceVulkan, abi.DeviceOneAPI, abi.DeviceWebGPU:
		return 2
	case abi.DeviceOpenCL:
		return 3
	}
	return -1 // host memory flavours and accelerators one names explicitly
}

// hostProcessor is a device that may run on the host's own processors
// (opencl.Device: CL_DEVICE_TYPE_CPU, such as PoCL; hip.Device: chipStar on
// such a device). It does nothing the CPU device cannot, and copies at a
// fraction of its speed.
type hostProcessor interface{ IsCPU() bool }

func onHostCPU(d *DeviceReport) bool {
	c, ok := d.Device.(hostProcessor)
	return ok && c.IsCPU()
}

func pick(backends []BackendReport) (device.Device, string) {
	var best *DeviceReport
	bestRank := -1
	for i := range backends {
		for j := range backends[i].Devices {
			d := &backends[i].Devices[j]
			if r := rank(d); r >= 0 && (best == nil || r < bestRank) {
				best, bestRank = d, r
			}
		}
	}
	var why []string // why there is no (better) accelerator
	for _, b := range backends {
		switch {
		case b.Err != nil:
			why = append(why, b.Name+": "+b.Reason)
		case best == nil:
			why = append(why, b.Name+": "+notPicked(b.Devices))
		}
	}
	if len(why) == 0 {
		why = append(why, "no backend registered")
	}
	switch {
	case best == nil:
		return device.CPU, "no GPU: " + strings.Join(why, "; ")
	case bestRank < 3:
		return best.Device, fmt.Sprintf("first GPU: %s (%s)", best.Spec(), best.Name)
	}
	return best.Device, fmt.Sprintf("no CUDA or HIP GPU (%s); first OpenCL device: %s (%s)",
		strings.Join(why, "; "), best.Spec(), best.Name)
}

// notPicked says why none of devs is a default: they are the host's own
// processors, which one can still name, or host memory.
func notPicked(devs []DeviceReport) string {
	var cpus []string
	for i := range devs {
		if onHostCPU(&devs[i]) {
			cpus = append(cpus, devs[i].Spec())
		}
	}
	if len(cpus) > 0 {
		return fmt.Sprintf("only the host's CPU (%s: slower than the CPU device; %s=%s picks it)", strings.Join(cpus, ", "), EnvDevice, cpus[0])
	}
	return "only host-memory devices"
}

// Default returns the device to use and why: the one CDEVICE_DEVICE names,
// or else the report's default (see the package documentation).
func Default(ctx context.Context) (device.Device, string, error) {
	s, set := os.LookupEnv(EnvDevice)
	if set && strings.TrimSpace(s) != "" {
		// Parse before discovering: a typo fails without loading anything.
		t, id, err := ParseDeviceSpec(s)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", EnvDevice, err)
		}
		if t == abi.DeviceCPU {
			return device.CPU, EnvDevice + "=" + s, nil
		}
		r, err := Discover(ctx)
		if err != nil {
			return nil, "", err
		}
		d, err := r.find(t, id)
		if err != nil {
			return nil, "", fmt.Errorf("%s=%s: %w", EnvDevice, s, err)
		}
		return d, EnvDevice + "=" + s, nil
	}
	r, err := Discover(ctx)
	if err != nil {
		return nil, "", err
	}
	return r.Default, r.DefaultReason, nil
}

// find returns the device of type t and id, or says why there is none: the
// reason of the backend the spec's family names (hip for rocm), else every
// failed backend's.
func (r *Report) find(t abi.DeviceType, id int64) (device.Device, error) {
	var ids []string
	for _, b := range r.Backends {
		for _, d := range b.Devices {
			if d.Type == t {
				if d.ID == id {
					return d.Device, nil
				}
				ids = append(ids, d.Spec())
			}
		}
	}
	if len(ids) > 0 {
		return nil, fmt.Errorf("%w: %s: this machine has %s", ErrUnavailable, spec(t, id), strings.Join(ids, ", "))
	}
	family, _, _ := strings.Cut(t.String(), "_")
	if family == "rocm" {
		family = "hip"
	}
	e := &unavailableError{errs: []error{ErrUnavailable}}
	var why []string
	for _, b := range r.Backends {
		if b.Err != nil && (b.Name == family || !r.has(family)) {
			why = append(why, b.Name+": "+b.Reason)
			e.errs = append(e.errs, b.Err)
		}
	}
	if len(why) == 0 {
		why = append(why, "no backend offers "+t.String()+" devices")
	}
	e.msg = fmt.Sprintf("%v: %s: %s", ErrUnavailable, spec(t, id), strings.Join(why, "; "))
	return nil, e
}

// unavailableError wraps ErrUnavailable and the backends' errors, so that
// errors.Is(err, device.ErrNotFound) and the like answer for the cause.
type unavailableError struct {
	msg  string
	errs []error
}

func (e *unavailableError) Error() string   { return e.msg }
func (e *unavailableError) Unwrap() []error { return e.errs }

func (r *Report) has(name string) bool {
	return slices.ContainsFunc(r.Backends, func(b BackendReport) bool { return b.Name == name })
}

// aliases are the spec names that are not abi.DeviceType's own.
var aliases = map[string]abi.DeviceType{
	"hip":      abi.DeviceROCm,
	"hip_host": abi.DeviceROCmHost,
}

// ParseDeviceSpec parses "cpu", or "TYPE:N" (or bare "TYPE", meaning
// TYPE:0), where TYPE is a device type's name (cuda, cuda_host,
// cuda_managed, rocm, rocm_host, opencl, vulkan, …, case-insensitive) or hip
// and hip_host for rocm and rocm_host, and N a device id ≥ 0. The CPU's id is
// -1, as in an ArrowDeviceArray.
func ParseDeviceSpec(s string) (abi.DeviceType, int64, error) {
	name, num, hasNum := strings.Cut(strings.ToLower(strings.TrimSpace(s)), ":")
	t, ok := aliases[name]
	if !ok {
		t, ok = typeByName(name)
	}
	if !ok {
		return 0, 0, fmt.Errorf("%w: %q: unknown device type %q (want cpu, cuda:N, cuda_host:N, cuda_managed:N, hip:N, opencl:N, …)", ErrBadDeviceSpec, s, name)
	}
	if t == abi.DeviceCPU {
		if hasNum {
			return 0, 0, fmt.Errorf("%w: %q: cpu takes no device id", ErrBadDeviceSpec, s)
		}
		return t, -1, nil
	}
	if !hasNum {
		return t, 0, nil
	}
	id, err := strconv.ParseInt(num, 10, 64)
	if err != nil || id < 0 {
		return 0, 0, fmt.Errorf("%w: %q: device id %q is not an integer ≥ 0", ErrBadDeviceSpec, s, num)
	}
	return t, id, nil
}

// typeByName looks through abi's names, so a device type added there needs
// no change here.
func typeByName(name string) (abi.DeviceType, bool) {
	if name == "" {
		return 0, false
	}
	for t := abi.DeviceType(1); t < 64; t++ {
		if t.Valid() && t.String() == name {
			return t, true
		}
	}
	return 0, false
}
