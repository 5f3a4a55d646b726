package main

import (
	"bytes"
	"fmt"
	"go/format"
	"strings"
	"text/template"
)

// A target is what the documentation of a runtime package's methods names.
type target struct {
	Pkg     string // the package, and the prefix of the runtime's names: cudaStream_t
	Props   string // the device properties struct, whose name Name reads
	Example string // a Device's String
	Host    string // the kinds of memory that are host-accessible
	Suffix  string // what Name adds to the GPU's name for them
	Managed string // what HostAccessible's doc adds on managed memory
	Errors  string // what ErrorName's doc adds on another API's names
	CPU     string // when IsCPU is true
	OnHost  string // when device memory is host-accessible after all
}

var targets = map[string]target{
	"cuda": {Pkg: "cuda", Props: "cudaDeviceProp", Example: "cuda_host:0", CPU: "never for CUDA, whose devices are GPUs",
		Host: "pinned host and managed memory", Suffix: `" (pinned host memory)" or " (managed memory)"`,
		Errors:  ` Through the driver API it is the driver's name (cuGetErrorName), e.g. "CUDA_ERROR_NO_DEVICE": its codes are the runtime's for the same conditions.`,
		Managed: " Managed memory is host-accessible only on a GPU whose cudaDevAttrConcurrentManagedAccess (read once at probe) is 1: where it is 0 (every GPU on Windows and WSL, GPUs before Pascal) the host must not touch managed memory while the GPU is busy, even after an array's event, so HostAccessible is false and importers read such memory through copies (CopyToHost)."},
	"hip": {Pkg: "hip", Props: "hipDeviceProp_t", Example: "rocm_host:0",
		Host: "pinned host memory", Suffix: `" (pinned host memory)"`,
		OnHost: " except on a device that IsCPU, whose device memory is the host's (chipStar hands out SVM or USM pointers)",
		CPU:    "true for a HIP on OpenCL's CPU device (chipStar on PoCL), which the probe asks chipStar's hipGetBackendNativeHandles and OpenCL's CL_DEVICE_TYPE; false for AMD's runtime, whose devices are GPUs, and where the runtime cannot tell"},
}

// A method is one method of a runtime package's Device: it calls the
// *gpurt.Device method of the same name with the same arguments. Doc is a
// template on the runtime, written as one paragraph.
type method struct {
	Name, Params, Args, Results string
	Doc                         string
}

// methods are the Device methods common to the runtimes: device.Device,
// device.ForeignStreams and what the runtime adds (Ordinal, DefaultStream,
// ErrorName). TestCoversGPURT checks that every exported method of
// *gpurt.Device is here or in notWrapped.
var methods = []method{
	{"Type", "", "", "abi.DeviceType",
		`Type is the device type of the Device's kind of memory (see Device), as ArrowDeviceArray.device_type carries it.`},
	{"ID", "", "", "int64",
		`ID is the GPU's ordinal, as ArrowDeviceArray.device_id carries it.`},
	{"Ordinal", "", "", "int",
		`Ordinal is the GPU's ordinal as the runtime numbers it ({{.Pkg}}SetDevice takes it): ID, as an int.`},
	{"Name", "", "", "string",
		`Name is the GPU's name ({{.Props}}.name), followed by {{.Suffix}} for {{.Host}}.`},
	{"String", "", "", "string",
		`String is the device type and ordinal, e.g. {{.Example}}, as $CDEVICE_DEVICE names the Device.`},
	{"HostAccessible", "", "", "bool",
		`HostAccessible reports whether host code may read and write the memory through its pointers: true for {{.Host}}, false for device memory{{.OnHost}}.{{.Managed}}`},
	{"IsCPU", "", "", "bool",
		`IsCPU reports whether the GPU is the host's own processors: {{.CPU}}. Such a device does nothing the CPU device cannot, and copies slower, so the loader makes it the default only when named.`},
	{"Alloc", "size int", "size", "(device.Pointer, error)",
		`Alloc returns size bytes (size > 0) of the Device's kind of memory, from the allocator that the documentation of Device names for it.`},
	{"Free", "p device.Pointer", "p", "error",
		`Free gives back memory that Alloc of a Device of the same GPU and kind of memory returned; Free(0) does nothing.`},
	{"CopyToDevice", "dst device.Pointer, off int, src []byte, s device.Stream", "dst, off, src, s", "error",
		`CopyToDevice queues a copy of src to dst+off on s (nil: DefaultStream) with {{.Pkg}}MemcpyAsync, and returns. src must stay reachable and untouched until s, or an event recorded on it later, is synchronized (runtime.Pinner keeps it reachable).`},
	{"CopyToHost", "dst []byte, src device.Pointer, off int, s device.Stream", "dst, src, off, s", "error",
		`CopyToHost queues a copy of len(dst) bytes from src+off to dst on s (nil: DefaultStream) with {{.Pkg}}MemcpyAsync, and returns. dst holds the bytes once s, or an event recorded on it later, is synchronized; until then it must stay reachable and untouched (runtime.Pinner keeps it reachable).`},
	{"CopyOnDevice", "dst device.Pointer, dstOff int, src device.Pointer, srcOff, n int, s device.Stream", "dst, dstOff, src, srcOff, n, s", "error",
		`CopyOnDevice queues a copy of n bytes from src+srcOff to dst+dstOff on s (nil: DefaultStream) with {{.Pkg}}MemcpyAsync, and returns.`},
	{"NewStream", "", "", "(device.Stream, error)",
		`NewStream makes a non-blocking stream of the GPU ({{.Pkg}}StreamCreateWithFlags, {{.Pkg}}StreamNonBlocking), whose Handle is its {{.Pkg}}Stream_t. It serves the Devices of every kind of memory of this GPU; those of other GPUs refuse it.`},
	{"NewEvent", "", "", "(device.Event, error)",
		`NewEvent makes an event without timing ({{.Pkg}}EventCreateWithFlags, {{.Pkg}}EventDisableTiming). Its SyncEvent, what ArrowDeviceArray.sync_event carries, is a {{.Pkg}}Event_t* that stays valid until Close.`},
	{"WaitSyncEvent", "ctx context.Context, syncEvent uintptr, s device.Stream", "ctx, syncEvent, s", "error",
		`WaitSyncEvent waits for the event behind syncEvent, a {{.Pkg}}Event_t* as ArrowDeviceArray.sync_event carries it (0: nothing to wait for). With s nil the host waits, until the event is done or ctx is (the event is polled with {{.Pkg}}EventQuery while ctx can be done); otherwise s waits ({{.Pkg}}StreamWaitEvent), the host does not, and ctx is not used.`},
	{"MakeStreamWait", "foreign, syncEvent uintptr", "foreign, syncEvent", "error",
		`MakeStreamWait makes foreign, a {{.Pkg}}Stream_t of this GPU that other code made (0: the legacy default stream), wait for the event behind syncEvent, a {{.Pkg}}Event_t* (0: nothing to wait for), without blocking the host (device.ForeignStreams).`},
	{"WaitForStream", "foreign uintptr, s device.Stream", "foreign, s", "error",
		`WaitForStream makes s (nil: the host) wait for the work queued so far on foreign, a {{.Pkg}}Stream_t of this GPU that other code made (0: the legacy default stream): the host synchronizes foreign, or s waits for an event recorded on it (device.ForeignStreams).`},
	{"ReadValues", "ctx context.Context, syncEvents []uintptr, reads []device.ValueRead", "ctx, syncEvents, reads", "error",
		`ReadValues sets each read's Value to the integer of its Width bytes at Ptr+Off (device.ValueReader), once the work behind each of syncEvents, {{.Pkg}}Event_t* values (0: none), is done, in one round trip however many there are: the GPU made current once; a stream of its own (kept for reuse, given back when the backend closes) made to wait for the events ({{.Pkg}}StreamWaitEvent); every value copied into page-locked memory of the runtime's with one {{.Pkg}}MemcpyBatchAsync where the runtime has it (else a {{.Pkg}}MemcpyAsync each); one {{.Pkg}}StreamSynchronize. With a ctx that can be done, the host waits for an event still running first ({{.Pkg}}EventQuery, then as WaitSyncEvent does), so that ctx bounds the wait.`},
	{"MemoryInfo", "", "", "(free, total int64, err error)",
		`MemoryInfo is the GPU's free and total memory in bytes ({{.Pkg}}MemGetInfo). Pinned host memory is host RAM, which the runtime does not report: zeros.`},
	{"DefaultStream", "", "", "uintptr",
		`DefaultStream is the {{.Pkg}}Stream_t that a nil device.Stream stands for: a non-blocking stream of the GPU made at probe, shared by the Devices of all its kinds of memory (it is not the legacy default stream, 0).`},
	{"ErrorName", "code int", "code", "string",
		`ErrorName is the runtime's name for an error code ({{.Pkg}}GetErrorName), e.g. "{{.Pkg}}ErrorNoDevice" for 100: the Code of a *device.RuntimeError from this Device.{{.Errors}}`},
}

// notWrapped are the exported methods of *gpurt.Device that no runtime
// package exports as they are, and why.
var notWrapped = map[string]string{
	"Attribute": "a table's attribute numbers are the runtime's; a package exports what it reads (cuda.Device.ComputeCapability)",
}

const header = `// Code generated by gpurtgen (internal/gpurt/gpurtgen) from its method table; DO NOT EDIT.

package {{.Pkg}}

import (
	"context"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
)

var (
	_ device.Device         = (*Device)(nil)
	_ device.ForeignStreams = (*Device)(nil)
	_ device.ValueReader    = (*Device)(nil)
)
`

// generate returns the methods file of the runtime package pkg.
func generate(pkg string) ([]byte, error) {
	rt, ok := targets[pkg]
	if !ok {
		return nil, fmt.Errorf("no runtime %q (want cuda or hip)", pkg)
	}
	var b bytes.Buffer
	if err := template.Must(template.New("header").Parse(header)).Execute(&b, rt); err != nil {
		return nil, err
	}
	for _, m := range methods {
		var doc strings.Builder
		if err := template.Must(template.New(m.Name).Parse(m.Doc)).Execute(&doc, rt); err != nil {
			return nil, err
		}
		b.WriteString("\n")
		for _, line := range wrap(doc.String(), 77) {
			b.WriteString("// " + line + "\n")
		}
		fmt.Fprintf(&b, "func (d *Device) %s(%s) %s { return d.dev.%s(%s) }\n", m.Name, m.Params, m.Results, m.Name, m.Args)
	}
	return format.Source(b.Bytes())
}

// wrap breaks text into lines of at most width bytes, between words.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}
