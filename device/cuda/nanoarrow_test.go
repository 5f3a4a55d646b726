package cuda_test

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	cdevice "github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/cuda"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/sample"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/gpurttest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
	"github.com/purearrow/cdevice/stream"
)

// EnvNanoarrow names a copy of apache/arrow-nanoarrow (its src/ folder
// below it); unset, the tests look in ../shared/nanoarrow beside the
// module, and .ci/gpu-check carries one to the GPU machine.
const EnvNanoarrow = "CDEVICE_NANOARROW"

// TestRealNanoarrow puts nanoarrow, Arrow's C reference implementation,
// with its CUDA backend on the other side of our device arrays and device
// streams (testdata/c/nanoarrow_peer.c): both directions, on the GPU's
// memory and its pinned host memory, through each of our CUDA APIs, with
// the selftest's batches (every type family, sliced, empty, nulls only).
// nanoarrow validates what we export (FULL) and hands back its CPU copy;
// we import what it exports and wait on its sync events; everything must
// equal the original, and the peer must get back all it handed out.
func TestRealNanoarrow(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	all, err := sample.Batches(mem)
	if err != nil {
		t.Fatal(err)
	}
	want, uncopyable := splitCopyable(all)
	defer func() {
		for _, rbs := range [][]arrow.RecordBatch{all, want, uncopyable} {
			for _, rb := range rbs {
				rb.Release()
			}
		}
	}()
	eachAPI(t, func(t *testing.T, rt gpurttest.Runtime) {
		devs := gpurttest.RealDevices(t, rt)
		peer := openNanoarrow(t)
		for _, d := range devs {
			if d.ID() != 0 || (d.Type() != abi.DeviceCUDA && d.Type() != abi.DeviceCUDAHost) {
				continue
			}
			registerFor(t, d)
			t.Run(fmt.Sprint(d), func(t *testing.T) {
				for _, c := range nanoarrowCases {
					t.Run(c.name, func(t *testing.T) {
						if err := c.run(peer, d, want); err != nil {
							t.Errorf("%v%s", err, peer.columnsAtFault(c.run, d, want))
						}
						if n := peer.live(); n != 0 {
							t.Errorf("nanoarrow holds %d arrays or streams it handed out", n)
						}
					})
				}
				// nanoarrow refuses each column it cannot copy, saying why.
				t.Run("Uncopyable", func(t *testing.T) {
					for c, f := range uncopyable[0].Schema().Fields() {
						one := []arrow.RecordBatch{project(uncopyable[0], []int{c})}
						for _, tc := range nanoarrowCases[:2] {
							if err := tc.run(peer, d, one); err == nil || !strings.Contains(err.Error(), "ArrowDeviceArrayViewCopy cannot copy") {
								t.Errorf("%s %s: %v, want nanoarrow's refusal", tc.name, f.Name, err)
							}
						}
						one[0].Release()
					}
				})
			})
		}
	})
}

// splitCopyable splits the batches' columns in two: those nanoarrow's
// ArrowDeviceArrayViewCopy can copy, and those it cannot (nanoarrow_peer.c
// refuses them, saying why): string_view and binary_view data, whose
// variadic buffers it does not copy, and list views, whose sizes buffer
// nanoarrow leaves of unknown length.
func splitCopyable(rbs []arrow.RecordBatch) (copyable, not []arrow.RecordBatch) {
	var in, out []int
	for i, f := range rbs[0].Schema().Fields() {
		if nanoarrowCopies(f.Type) {
			in = append(in, i)
		} else {
			out = append(out, i)
		}
	}
	for _, rb := range rbs {
		copyable = append(copyable, project(rb, in))
		not = append(not, project(rb, out))
	}
	return copyable, not
}

func nanoarrowCopies(dt arrow.DataType) bool {
	switch dt := dt.(type) {
	case *arrow.StringViewType, *arrow.BinaryViewType, *arrow.ListViewType, *arrow.LargeListViewType:
		return false
	case *arrow.DictionaryType:
		return nanoarrowCopies(dt.ValueType)
	case arrow.ExtensionType:
		return nanoarrowCopies(dt.StorageType())
	case arrow.NestedType:
		for _, f := range dt.Fields() {
			if !nanoarrowCopies(f.Type) {
				return false
			}
		}
	}
	return true
}

// project is rb's columns cols, as a batch of their own.
func project(rb arrow.RecordBatch, cols []int) arrow.RecordBatch {
	fields, arrs := make([]arrow.Field, len(cols)), make([]arrow.Array, len(cols))
	for i, c := range cols {
		fields[i], arrs[i] = rb.Schema().Field(c), rb.Column(c)
	}
	md := rb.Schema().Metadata()
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), arrs, rb.NumRows())
}

// registerFor makes d the device that imports of its type and id use
// until t ends, and then the one before it again.
func registerFor(t testing.TB, d device.Device) {
	prev, err := device.Lookup(d.Type(), d.ID())
	device.Register(d)
	if err == nil {
		t.Cleanup(func() { device.Register(prev) })
	}
}

var nanoarrowCases = []struct {
	name string
	run  func(p *nanoarrow, d device.Device, want []arrow.RecordBatch) error
}{
	{"ArrayToNanoarrow", (*nanoarrow).arraysIn},
	{"ArrayFromNanoarrow", (*nanoarrow).arraysOut},
	{"StreamToNanoarrow", (*nanoarrow).streamIn},
	{"StreamFromNanoarrow", (*nanoarrow).streamOut},
}

// nanoarrow is the peer, loaded and open on GPU 0.
type nanoarrow struct {
	t   testing.TB
	lib *ffi.Library
}

// openNanoarrow builds the peer against the CUDA driver library our
// driver API loads (the GPU's libcuda, or the double), opens it on GPU 0,
// and closes it when t ends.
func openNanoarrow(t testing.TB) *nanoarrow {
	t.Helper()
	info, err := cuda.Driver.Real.Probe(context.Background())
	if err != nil {
		t.Skipf("nanoarrow's CUDA backend needs the driver API: %v", err)
	}
	p := &nanoarrow{t: t, lib: buildNanoarrow(t, info.Library)}
	if rc := p.call("na_peer_open", 0); rc != 0 {
		t.Fatalf("na_peer_open: %d: %s", rc, p.error())
	}
	t.Cleanup(func() {
		if rc := p.call("na_peer_close"); rc != 0 {
			t.Errorf("na_peer_close: %d: %s", rc, p.error())
		}
	})
	return p
}

// buildNanoarrow compiles nanoarrow_peer.c with nanoarrow's sources,
// against CUDA's cuda.h where the toolkit is installed (else our
// cudashim), linked with driverLib.
func buildNanoarrow(t testing.TB, driverLib string) *ffi.Library {
	t.Helper()
	root, err := ctest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := os.Getenv(EnvNanoarrow)
	if src == "" {
		src = filepath.Join(root, "..", "shared", "nanoarrow")
	}
	na := filepath.Join(src, "src")
	in, err := os.ReadFile(filepath.Join(na, "nanoarrow", "nanoarrow_config.h.in"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("nanoarrow's sources: %v", err)
		}
		t.Skipf("nanoarrow's sources not found (set %s to a copy of apache/arrow-nanoarrow): %v", EnvNanoarrow, err)
	}
	// nanoarrow's build generates its config header; any version will do.
	gen := t.TempDir()
	config := strings.NewReplacer("@NANOARROW_VERSION_MAJOR@", "0", "@NANOARROW_VERSION_MINOR@", "0",
		"@NANOARROW_VERSION_PATCH@", "0", "@NANOARROW_VERSION@", "0.0.0-cdevice", "@NANOARROW_NAMESPACE_DEFINE@", "").Replace(string(in))
	if err := os.MkdirAll(filepath.Join(gen, "nanoarrow"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gen, "nanoarrow", "nanoarrow_config.h"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	// A toolkit's header may deprecate what nanoarrow calls: a warning, not
	// a failure of the build.
	o := ctest.Options{Define: []string{"NANOARROW_DEVICE_WITH_CUDA"}, Include: []string{gen, na},
		Flags: []string{"-Wno-error=deprecated-declarations"}}
	for _, f := range []string{"common/array.c", "common/array_stream.c", "common/schema.c", "common/utils.c", "device/device.c", "device/cuda.c"} {
		o.Sources = append(o.Sources, filepath.Join(na, "nanoarrow", f))
	}
	toolkit := cudaToolkit()
	if toolkit != "" {
		o.Include = append(o.Include, filepath.Join(toolkit, "include"))
	} else {
		o.Include = append(o.Include, filepath.Join(root, "testdata", "c", "cudashim"))
	}
	if filepath.IsAbs(driverLib) {
		o.Link = []string{driverLib}
	} else {
		// The toolkit's stub names libcuda.so.1, which the process has loaded.
		o.Link = []string{"-L" + filepath.Join(toolkit, "lib64", "stubs"), "-lcuda"}
	}
	lib, err := ffi.Open(ctest.Build(t, "nanoarrow_peer", o))
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

// cudaToolkit is $CUDA_HOME or /usr/local/cuda where it has cuda.h, else "".
func cudaToolkit() string {
	for _, dir := range []string{os.Getenv("CUDA_HOME"), "/usr/local/cuda"} {
		if _, err := os.Stat(filepath.Join(dir, "include", "cuda.h")); dir != "" && err == nil {
			return dir
		}
	}
	return ""
}

func (p *nanoarrow) call(name string, args ...uintptr) int32 {
	return int32(ctest.Func(p.t, p.lib, name)(args...))
}

func (p *nanoarrow) error() string {
	return ffi.GoString(ctest.Func(p.t, p.lib, "na_peer_error")())
}

func (p *nanoarrow) live() int { return int(p.call("na_peer_live")) }

// check is a peer call's result as an error.
func (p *nanoarrow) check(name string, rc int32) error {
	if rc != 0 {
		return fmt.Errorf("%s: %d: %s", name, rc, p.error())
	}
	return nil
}

func ptr[T any](v *T) uintptr { return uintptr(unsafe.Pointer(v)) }

// arraysIn: each batch copied to d and exported; nanoarrow copies it to
// the CPU and validates it; its copy, imported, equals the batch.
func (p *nanoarrow) arraysIn(d device.Device, want []arrow.RecordBatch) error {
	for i, rb := range want {
		db, err := cdevice.CopyRecordBatchToDevice(context.Background(), rb, d)
		if err != nil {
			return err
		}
		arr, sch, cpu := testsupport.OffHeap[abi.DeviceArray](p.t), testsupport.OffHeap[abi.Schema](p.t), testsupport.OffHeap[abi.Array](p.t)
		err = db.Export(arr, sch)
		db.Release()
		if err != nil {
			return err
		}
		if arr.SyncEvent == 0 {
			cdevice.ReleaseSchema(sch)
			cdevice.ReleaseDeviceArray(arr)
			return fmt.Errorf("batch %d: our export has no sync_event", i)
		}
		if err := p.check("na_peer_import_array", p.call("na_peer_import_array", ptr(sch), ptr(arr), ptr(cpu))); err != nil {
			cdevice.ReleaseSchema(sch)
			return fmt.Errorf("batch %d: %w", i, err)
		}
		if err := importedEqual(i, rb)(cdevice.ImportRecordBatch(cpu, sch, cdevice.WithFullValidation())); err != nil {
			return err
		}
	}
	return nil
}

// arraysOut: each batch exported on the CPU; nanoarrow copies it to d's
// device type with a sync event; imported, it equals the batch.
func (p *nanoarrow) arraysOut(d device.Device, want []arrow.RecordBatch) error {
	for i, rb := range want {
		cpu, sch, arr := testsupport.OffHeap[abi.Array](p.t), testsupport.OffHeap[abi.Schema](p.t), testsupport.OffHeap[abi.DeviceArray](p.t)
		if err := cdevice.ExportRecordBatch(rb, cpu, sch); err != nil {
			return err
		}
		if err := p.check("na_peer_export_array", p.call("na_peer_export_array", ptr(sch), ptr(cpu), uintptr(d.Type()), ptr(arr))); err != nil {
			cdevice.ReleaseSchema(sch)
			return fmt.Errorf("batch %d: %w", i, err)
		}
		if arr.DeviceType != d.Type() || arr.DeviceID != d.ID() || arr.SyncEvent == 0 {
			cdevice.ReleaseSchema(sch)
			cdevice.ReleaseDeviceArray(arr)
			return fmt.Errorf("batch %d: nanoarrow's array is on %v:%d, sync_event %#x", i, arr.DeviceType, arr.DeviceID, arr.SyncEvent)
		}
		if err := importedEqual(i, rb)(cdevice.ImportDeviceRecordBatch(context.Background(), arr, sch, cdevice.WithFullValidation())); err != nil {
			return err
		}
	}
	return nil
}

// streamIn: the batches as our device stream on d; nanoarrow reads it to
// the end, and its CPU copies, imported, equal the batches.
func (p *nanoarrow) streamIn(d device.Device, want []arrow.RecordBatch) error {
	rdr, err := array.NewRecordReader(want[0].Schema(), want)
	if err != nil {
		return err
	}
	defer rdr.Release()
	ds, cs := testsupport.OffHeap[abi.DeviceArrayStream](p.t), testsupport.OffHeap[abi.ArrayStream](p.t)
	if err := stream.ExportReaderToDevice(context.Background(), rdr, d, ds); err != nil {
		return err
	}
	if err := p.check("na_peer_consume_stream", p.call("na_peer_consume_stream", ptr(ds), ptr(cs))); err != nil {
		return err
	}
	got, err := stream.ImportReader(cs, stream.WithImportOptions(cdevice.WithFullValidation()))
	if err != nil {
		return err
	}
	defer got.Release()
	return equalAll(want, got.All(context.Background()))
}

// streamOut: the batches as our CPU stream; nanoarrow hands them out as a
// device stream on d's device type; read through ours, they are equal.
func (p *nanoarrow) streamOut(d device.Device, want []arrow.RecordBatch) error {
	rdr, err := array.NewRecordReader(want[0].Schema(), want)
	if err != nil {
		return err
	}
	defer rdr.Release()
	cs, ds := testsupport.OffHeap[abi.ArrayStream](p.t), testsupport.OffHeap[abi.DeviceArrayStream](p.t)
	if err := stream.ExportReader(rdr, cs); err != nil {
		return err
	}
	if err := p.check("na_peer_produce_stream", p.call("na_peer_produce_stream", ptr(cs), uintptr(d.Type()), ptr(ds))); err != nil {
		return err
	}
	got, err := stream.ImportDeviceStream(ds, stream.WithImportOptions(cdevice.WithFullValidation()))
	if err != nil {
		return err
	}
	defer got.Release()
	if got.DeviceType() != d.Type() {
		return fmt.Errorf("nanoarrow's stream is on %v", got.DeviceType())
	}
	return equalAll(want, got.HostRecords(context.Background()))
}

// equalAll reads a stream to its end: its batches must equal want's.
func equalAll(want []arrow.RecordBatch, got iter.Seq2[arrow.RecordBatch, error]) error {
	var i int
	for rb, err := range got {
		if err != nil {
			return err
		}
		if i >= len(want) {
			return fmt.Errorf("more than %d batches", len(want))
		}
		if err := equal(i, want[i], rb); err != nil {
			return err
		}
		i++
	}
	if i != len(want) {
		return fmt.Errorf("%d batches, want %d", i, len(want))
	}
	return nil
}

// importedEqual checks batch i as an import gave it (or its error), and
// releases it.
func importedEqual(i int, want arrow.RecordBatch) func(arrow.RecordBatch, error) error {
	return func(got arrow.RecordBatch, err error) error {
		if err != nil {
			return fmt.Errorf("batch %d: %w", i, err)
		}
		defer got.Release()
		return equal(i, want, got)
	}
}

func equal(i int, want, got arrow.RecordBatch) error {
	if !array.RecordEqual(want, got) || !want.Schema().Equal(got.Schema()) {
		return fmt.Errorf("batch %d differs:\n got %v\nwant %v", i, got, want)
	}
	return nil
}

// columnsAtFault reruns a failed case column by column and names the
// columns that fail alone, with why.
func (p *nanoarrow) columnsAtFault(run func(*nanoarrow, device.Device, []arrow.RecordBatch) error, d device.Device, want []arrow.RecordBatch) string {
	var b strings.Builder
	for c, f := range want[0].Schema().Fields() {
		one := make([]arrow.RecordBatch, len(want))
		for i, rb := range want {
			one[i] = project(rb, []int{c})
		}
		if err := run(p, d, one); err != nil {
			fmt.Fprintf(&b, "\n  column %s (%v): %v", f.Name, f.Type, err)
		}
		for _, rb := range one {
			rb.Release()
		}
	}
	if b.Len() == 0 {
		return "\n  (no column fails alone)"
	}
	return "\n columns at fault:" + b.String()
}
