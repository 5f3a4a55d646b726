package dlpack_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/device/cuda"
	"github.com/purearrow/cdevice/device/opencl"
	"github.com/purearrow/cdevice/dlpack"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/ndarray"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/gpurttest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
	"github.com/purearrow/cdevice/tensor"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// ---- devices ----

// openclDevice is PoCL's (or any) first OpenCL device and the library the
// backend loaded; absent, the test skips, except in CI.
func openclDevice(t testing.TB) (*opencl.Device, string) {
	t.Helper()
	for _, b := range device.Backends() {
		if b.Name() != "opencl" {
			continue
		}
		info, err := b.Probe(context.Background())
		if err == nil && len(info.Devices) > 0 {
			return info.Devices[0].(*opencl.Device), info.Library
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("OpenCL must be available in CI: %v", err)
		}
		t.Skipf("no OpenCL device (install pocl-opencl-icd ocl-icd-libopencl1): %v", err)
	}
	t.Fatal("the opencl backend is not registered")
	return nil, ""
}

// The CUDA device comes from the C test double (testdata/c/fakecudart.c,
// or under $CDEVICE_CUDA_API=driver the double with both APIs, which the
// backend binds through the driver API: TestDriverAPI) through the
// backend's exported path. When $CDEVICE_CUDA_LIBRARY is set from outside
// (a real runtime on a GPU machine) that library is used instead.
var cudaState struct {
	once   sync.Once
	dev    device.Device
	fake   *ffi.Library // the double, for its counters; nil for a real runtime
	double gpurttest.ProcessDouble
	err    error
}

var realCUDA = os.Getenv(cuda.EnvLibrary) != ""

func cudaDevice(t testing.TB) (device.Device, *ffi.Library) {
	t.Helper()
	var double gpurttest.ProcessDouble
	if !realCUDA {
		double = gpurttest.UseCUDADouble(t) // skips without gcc
	}
	cudaState.once.Do(func() {
		info, err := cuda.Backend.Probe(context.Background())
		if err != nil {
			cudaState.err = err
			return
		}
		for _, d := range info.Devices {
			if d.Type() == dlDeviceCUDA {
				cudaState.dev = d
				break
			}
		}
		if double.Path != "" && info.Library == double.Path {
			cudaState.double = double
			cudaState.fake, cudaState.err = ffi.Open(double.Path)
		}
	})
	if cudaState.err != nil || cudaState.dev == nil {
		if !realCUDA { // the double was asked for: it must serve
			t.Fatalf("the CUDA test double: %v", cudaState.err)
		}
		t.Skipf("no CUDA device: %v", cudaState.err)
	}
	return cudaState.dev, cudaState.fake
}

// TestDriverAPI runs this package's tests again with the CUDA backend on
// the driver API.
func TestDriverAPI(t *testing.T) { gpurttest.RunThroughDriverAPI(t) }

const dlDeviceCUDA = 2

func fakeCalls(t testing.TB, fake *ffi.Library, call string) int64 {
	t.Helper()
	fn, err := fake.Symbol("fake_cuda_call_count")
	must(t, err)
	s, err := ffi.CString(cudaState.double.Call(call))
	must(t, err)
	defer ffi.Free(s)
	return int64(ffi.Call(fn, uintptr(s)))
}

// testDevices are the devices round trips run on: the CPU always, PoCL's
// OpenCL device, HIP's first device (chipStar on PoCL where configured)
// and the CUDA test double when present.
func testDevices(t *testing.T) map[string]device.Device {
	devs := map[string]device.Device{"cpu": device.CPU}
	if d := tryDevice(t, func(t testing.TB) device.Device { d, _ := openclDevice(t); return d }); d != nil {
		devs["opencl"] = d
	}
	if d := tryDevice(t, func(t testing.TB) device.Device { return testsupport.BackendDevice(t, "hip") }); d != nil {
		devs["rocm"] = d
	}
	if d := tryDevice(t, func(t testing.TB) device.Device { d, _ := cudaDevice(t); return d }); d != nil {
		devs["cuda"] = d
	}
	return devs
}

// tryDevice runs get in a subtest so that its skip skips only that device.
func tryDevice(t *testing.T, get func(testing.TB) device.Device) (d device.Device) {
	t.Run("probe", func(t *testing.T) { d = get(t) })
	return d
}

// ---- the C library ----

// Indices of dlpack.c's parameter array.
const (
	pVersioned = iota
	pSVM
	pDevType
	pDevID
	pCode
	pBits
	pLanes
	pNdim
	pOffset
	pFlags
	pSeed
	pHasStrides
	pMajor
	pNoDelete
	pShape  = 16
	pMaxDim = 8
	pCount  = pShape + 2*pMaxDim
)

type clib struct {
	produce, wrap, consume, del, calls, doubles, live, collect, fill func(...uintptr) uintptr
}

func loadC(t testing.TB) *clib {
	t.Helper()
	lib := ctest.Library(t, "dlpack")
	f := func(name string) func(...uintptr) uintptr { return ctest.Func(t, lib, name) }
	return &clib{
		produce: f("dl_produce"), wrap: f("dl_wrap"), consume: f("dl_consume"), del: f("dl_delete"),
		calls: f("dl_deleter_calls"), doubles: f("dl_double_deletes"), live: f("dl_live"),
		collect: f("dl_collect"), fill: f("dl_fill_expected"),
	}
}

// loadCOpenCL is loadC with the C side's OpenCL functions bound to the
// library the backend loaded.
func loadCOpenCL(t testing.TB) (*clib, *opencl.Device) {
	t.Helper()
	dev, path := openclDevice(t)
	c := loadC(t)
	lib := ctest.Library(t, "dlpack")
	ctest.InitRuntime(t, lib, "dl_cl_init", path) // again is harmless: dlopen counts
	return c, dev
}

// A spec describes a tensor to dlpack.c (its parameter array).
type spec struct {
	versioned      bool
	svm            bool
	devType        dlpack.DeviceType
	devID          int32
	dtype          dlpack.DataType
	shape, strides []int64 // strides nil: none given (NULL)
	offset, flags  uint64
	seed           int64
	major          uint32
	noDelete       bool
}

// params writes s into C memory, freed when the test ends.
func (s spec) params(t testing.TB) uintptr {
	t.Helper()
	p, err := ffi.Calloc(8 * pCount)
	must(t, err)
	t.Cleanup(func() { ffi.Free(p) })
	v := unsafe.Slice((*int64)(p), pCount)
	b := func(x bool) int64 {
		if x {
			return 1
		}
		return 0
	}
	v[pVersioned], v[pSVM], v[pDevType], v[pDevID] = b(s.versioned), b(s.svm), int64(s.devType), int64(s.devID)
	v[pCode], v[pBits], v[pLanes], v[pNdim] = int64(s.dtype.Code), int64(s.dtype.Bits), int64(s.dtype.Lanes), int64(len(s.shape))
	v[pOffset], v[pFlags], v[pSeed], v[pHasStrides] = int64(s.offset), int64(s.flags), s.seed, b(s.strides != nil)
	v[pMajor], v[pNoDelete] = int64(s.major), b(s.noDelete)
	copy(v[pShape:], s.shape)
	copy(v[pShape+pMaxDim:], s.strides)
	return uintptr(p)
}

func (s spec) numel() int {
	n := 1
	for _, d := range s.shape {
		n *= int(d)
	}
	return n
}

// cbytes copies b into C memory freed when the test ends.
func cbytes(t testing.TB, b []byte) uintptr {
	t.Helper()
	p, err := ffi.Calloc(uintptr(len(b)))
	must(t, err)
	t.Cleanup(func() { ffi.Free(p) })
	copy(unsafe.Slice((*byte)(p), len(b)), b)
	return uintptr(p)
}

// ---- values ----

// valueBytes are the n elements dlpack.c's value() makes: seed+i for
// integers, (seed+i)/2 for floats, (seed+i)%3 == 0 for bool; computed here
// independently of the C code.
func valueBytes(d dlpack.DataType, seed int64, n int) []byte {
	isz := int(d.Bits) / 8
	out := make([]byte, n*isz)
	ne := binary.NativeEndian
	for i := 0; i < n; i++ {
		v := seed + int64(i)
		b := out[i*isz : (i+1)*isz]
		switch {
		case d.Code == dlpack.CodeBool:
			if v%3 == 0 {
				b[0] = 1
			}
		case d.Code == dlpack.CodeFloat && d.Bits == 16:
			ne.PutUint16(b, float16.New(float32(v)/2).Uint16())
		case d.Code == dlpack.CodeFloat && d.Bits == 32:
			ne.PutUint32(b, math.Float32bits(float32(v)/2))
		case d.Code == dlpack.CodeFloat:
			ne.PutUint64(b, math.Float64bits(float64(v)/2))
		default:
			for k := range b {
				b[k] = byte(uint64(v) >> (8 * k))
			}
		}
	}
	return out
}

// fromBytes builds an array of type dt (a leaf type, fixed_size_lists of
// one, or a fixed shape tensor) with rows rows over elems, the leaf
// elements in storage order (bytes; bits for Boolean are packed here).
func fromBytes(t testing.TB, dt arrow.DataType, rows int, elems []byte) arrow.Array {
	t.Helper()
	var chain []arrow.DataType
	var sizes []int
	for cur := dt; ; {
		chain = append(chain, cur)
		st := cur
		if e, ok := cur.(arrow.ExtensionType); ok && e.ExtensionName() == tensor.ExtensionName {
			st = e.StorageType()
		}
		fsl, ok := st.(*arrow.FixedSizeListType)
		if !ok {
			break
		}
		sizes = append(sizes, int(fsl.Len()))
		cur = fsl.Elem()
	}
	lens := []int{rows}
	for _, s := range sizes {
		lens = append(lens, lens[len(lens)-1]*s)
	}
	leaf := chain[len(chain)-1]
	n := lens[len(lens)-1]
	buf := elems
	if leaf.ID() == arrow.BOOL {
		buf = make([]byte, bitutil.BytesForBits(int64(n)))
		for i := 0; i < n; i++ {
			if elems[i] != 0 {
				bitutil.SetBit(buf, i)
			}
		}
	}
	data := array.NewData(leaf, n, []*memory.Buffer{nil, memory.NewBufferBytes(buf)}, nil, 0, 0)
	for i := len(chain) - 2; i >= 0; i-- {
		p := array.NewData(chain[i], lens[i], []*memory.Buffer{nil}, []arrow.ArrayData{data}, 0, 0)
		data.Release()
		data = p
	}
	a := array.MakeFromData(data)
	data.Release()
	t.Cleanup(a.Release)
	return a
}

var bool8 = ndarray.Bool8()

var cpuDev = device.CPU

// onDevice copies a to dev; released when the test ends.
func onDevice(t testing.TB, a arrow.Array, dev device.Device) *cdevice.DeviceArray {
	t.Helper()
	d, err := cdevice.CopyToDevice(context.Background(), a, dev)
	must(t, err)
	t.Cleanup(d.Release)
	return d
}

// toHost reads d back and releases it.
func toHost(t testing.TB, d *cdevice.DeviceArray) arrow.Array {
	t.Helper()
	h, err := d.ToHost(context.Background())
	d.Release()
	must(t, err)
	t.Cleanup(h.Release)
	return h
}

func wantEqual(t testing.TB, got, want arrow.Array) {
	t.Helper()
	if !array.Equal(got, want) {
		t.Fatalf("arrays differ:\n got %s %v\nwant %s %v", got.DataType(), got, want.DataType(), want)
	}
}

func wantIs(t testing.TB, err error, targets ...error) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", targets)
	}
	for _, target := range targets {
		if !errors.Is(err, target) {
			t.Fatalf("error %q is not %v", err, target)
		}
	}
	t.Logf("refused: %v", err)
}

// ---- Arrow arrays ----

var numericTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
	arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
	arrow.FixedWidthTypes.Float16, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
}

func dtypeFor(t testing.TB, dt arrow.DataType) dlpack.DataType {
	t.Helper()
	code := map[arrow.Type]dlpack.DataTypeCode{
		arrow.INT8: dlpack.CodeInt, arrow.INT16: dlpack.CodeInt, arrow.INT32: dlpack.CodeInt, arrow.INT64: dlpack.CodeInt,
		arrow.UINT8: dlpack.CodeUInt, arrow.UINT16: dlpack.CodeUInt, arrow.UINT32: dlpack.CodeUInt, arrow.UINT64: dlpack.CodeUInt,
		arrow.FLOAT16: dlpack.CodeFloat, arrow.FLOAT32: dlpack.CodeFloat, arrow.FLOAT64: dlpack.CodeFloat,
	}
	if dt.ID() == arrow.BOOL || dt.ID() == arrow.EXTENSION {
		return dlpack.DataType{Code: dlpack.CodeBool, Bits: 8, Lanes: 1}
	}
	c, ok := code[dt.ID()]
	if !ok {
		t.Fatalf("no dtype for %s", dt)
	}
	return dlpack.DataType{Code: c, Bits: uint8(dt.(arrow.FixedWidthDataType).BitWidth()), Lanes: 1}
}

// withNulls returns a copy of a (a leaf or fixed_size_list array) whose
// elements at i%every == 1 are null.
func withNulls(t testing.TB, a arrow.Array, every int) arrow.Array {
	t.Helper()
	d := a.Data()
	valid := make([]byte, bitutil.BytesForBits(int64(d.Len()+d.Offset())))
	nulls := 0
	for i := 0; i < d.Len(); i++ {
		if i%every == 1 {
			nulls++
		} else {
			bitutil.SetBit(valid, d.Offset()+i)
		}
	}
	bufs := append([]*memory.Buffer{memory.NewBufferBytes(valid)}, d.Buffers()[1:]...)
	nd := array.NewData(d.DataType(), d.Len(), bufs, d.Children(), nulls, d.Offset())
	out := array.MakeFromData(nd)
	nd.Release()
	t.Cleanup(out.Release)
	return out
}

// slice is array.NewSlice released when the test ends.
func slice(t testing.TB, a arrow.Array, i, j int) arrow.Array {
	s := array.NewSlice(a, int64(i), int64(j))
	t.Cleanup(s.Release)
	return s
}

// counts are the DLPack counters the tests watch: cdevice.LiveLeaks()'s
// DLPack tensors and stray deleter calls, and every deleter call.
type counts struct{ Exports, Imports, DeleterCalls, StrayDeletes int64 }

func stats() counts {
	l := cdevice.LiveLeaks()
	return counts{Exports: l.ExportedTensors, Imports: l.ImportedTensors, DeleterCalls: dlpack.DeleterCalls(), StrayDeletes: l.StrayDeletes}
}
