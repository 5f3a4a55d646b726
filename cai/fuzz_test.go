//go:build linux || darwin

package cai_test

// Fuzz targets for CUDA Array Interface descriptors, in their JSON form
// (what Python's __cuda_array_interface__ serializes to) and their struct
// form: shape, strides, typestr, descr, mask, stream and version fuzzed,
// the data pointers moved into a backing store that ends at a PROT_NONE
// guard page. Only descriptors whose elements (as shape and strides
// address them from the data pointer) lie in the store are imported, on a
// CUDA-typed device whose memory is the host's; any of them must give an
// array or an error wrapping a sentinel, never a panic or a crash, and an
// imported array must be valid and readable.
//
// Run: go test -run XXX -fuzz '^FuzzImportJSON$' -fuzztime 2m ./cai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"unsafe"

	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/cai"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// fzCUDA is a CUDA-typed device whose memory is the host's (the CPU
// device's methods), so that descriptors can point into the store. It
// cannot wait for foreign streams: a descriptor with a stream is refused
// unless the import ignores streams.
type fzCUDA struct{ device.Device }

func (fzCUDA) Type() abi.DeviceType { return abi.DeviceCUDA }
func (fzCUDA) ID() int64            { return 11 }
func (fzCUDA) Name() string         { return "fuzz cuda:11" }

var fzDev = fzCUDA{device.CPU}

var (
	fzTypestrs = []string{"<i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8", "|b1",
		"<M8[ns]", "<m8[us]", "<M8", ">i4", ">f8", "<c8", "|V8", "|S4", "<U2", "|O8", "|i1", "|i4", "<f16",
		"", "<", "<i", "<i0", "<i-4", "<i+4", "<x4", "?i4", "<M8[", "<M8[]", "<m4[ns]", "|b2", "<i99999999999"}
	fzDims    = []int64{-1, 1 << 40, math.MaxInt64, 1 << 31, math.MaxInt32 + 1, 65536}
	fzStrides = []int64{0, -1, 1 << 40, math.MinInt64, math.MaxInt64, 1 << 33, -(1 << 33)}
	fzStreams = []int64{0, 1, 2, -1, 0x1234, math.MinInt64}
)

// fzDescriptor interprets prog as a descriptor: version, shape, strides,
// typestr, descr, data position and read-only flag, stream, and a mask
// (one level: a mask has no mask of its own unless the program says so).
func fzDescriptor(r *testsupport.Prog, store []byte, depth int) *cai.Interface {
	h := r.Byte()
	d := &cai.Interface{Version: 3}
	if h&1 != 0 {
		d.Version = int(int8(r.Byte())) % 6
	}
	nd := int(r.Byte() % 5)
	if h&2 != 0 && nd == 0 {
		d.Shape = []int64{} // a 0-d array
	}
	for range nd {
		if v := r.Byte(); v < 0xf8 {
			d.Shape = append(d.Shape, int64(v%8))
		} else {
			d.Shape = append(d.Shape, fzDims[int(v)%len(fzDims)])
		}
	}
	if h&4 != 0 {
		d.Strides = []int64{}
		n := nd
		if h&8 != 0 {
			n = int(r.Byte() % 5) // maybe not one per dimension
		}
		for range n {
			if v := r.Byte(); v < 0xf8 {
				d.Strides = append(d.Strides, int64(int8(v)%32))
			} else {
				d.Strides = append(d.Strides, fzStrides[int(v)%len(fzStrides)])
			}
		}
	}
	d.Typestr = fzTypestrs[int(r.Byte())%len(fzTypestrs)]
	switch v := r.Byte() % 8; v {
	case 1:
		d.Descr = []cai.Field{{Typestr: d.Typestr}}
	case 2:
		d.Descr = []cai.Field{{Name: "x", Typestr: d.Typestr}}
	case 3:
		d.Descr = []cai.Field{{Typestr: "<f4"}, {Typestr: "<i4"}}
	}
	if h&16 == 0 {
		d.Data.Ptr = uintptr(unsafe.Pointer(&store[0])) + uintptr(r.U16()*8%len(store))
	}
	d.Data.ReadOnly = h&32 != 0
	if h&64 != 0 {
		s := fzStreams[int(r.Byte())%len(fzStreams)]
		d.Stream = &s
	}
	if h&128 != 0 && depth < 2 {
		d.Mask = fzDescriptor(r, store, depth+1)
		if r.Byte()&1 == 0 { // usually a mask of the same shape, one byte each
			d.Mask.Shape = append([]int64(nil), d.Shape...)
			d.Mask.Typestr = "|b1"
			d.Mask.Strides = nil
		}
	}
	return d
}

// fzEntitled reports whether every element the descriptor (and its mask)
// addresses lies in the store, or the descriptor is refused on its fields
// alone.
func fzEntitled(store []byte, d *cai.Interface) bool {
	if d == nil {
		return true
	}
	if !fzEntitled(store, d.Mask) {
		return false
	}
	item := int64(0)
	if len(d.Typestr) >= 3 {
		var n int64
		if _, err := fmt.Sscanf(d.Typestr[2:], "%d", &n); err == nil && n > 0 {
			item = n
		}
	}
	if item == 0 || item > 1<<20 || d.Data.Ptr == 0 {
		return true // refused before any read (or nothing to read)
	}
	numel := int64(1)
	for _, n := range d.Shape {
		if n < 0 || (n > 0 && numel > math.MaxInt64/n) {
			return true
		}
		numel *= n
	}
	if numel == 0 {
		return true
	}
	if d.Strides != nil && len(d.Strides) != len(d.Shape) {
		return true
	}
	var lo, hi int64 // in bytes, from the data pointer
	for k, n := range d.Shape {
		if n <= 1 {
			continue
		}
		s := item
		if d.Strides != nil {
			s = d.Strides[k]
		} else {
			for _, m := range d.Shape[k+1:] {
				s *= max(m, 1)
				if s > 1<<40 {
					return false
				}
			}
		}
		if s > math.MaxInt32 || s < -math.MaxInt32 || n > math.MaxInt32 {
			return false
		}
		if ext := (n - 1) * s; ext < 0 {
			lo += ext
		} else {
			hi += ext
		}
	}
	if hi > 1<<40 || lo < -(1<<40) || numel > 1<<40 {
		return false
	}
	start, end := lo, max(hi+item, numel*item)
	p := int64(d.Data.Ptr - uintptr(unsafe.Pointer(&store[0])))
	return p+start >= 0 && p+end <= int64(len(store))
}

// fzImport imports d (when its reads stay in the store) and checks the
// result.
func fzImport(t *testing.T, store []byte, d *cai.Interface, opts byte) {
	if !fzEntitled(store, d) {
		return
	}
	var io []cai.ImportOption
	io = append(io, cai.WithDevice(fzDev))
	if opts&1 != 0 {
		io = append(io, cai.WithAllowCopy())
	}
	if opts&2 != 0 {
		io = append(io, cai.WithIgnoreStream())
	}
	owner := 0
	if opts&4 != 0 {
		io = append(io, cai.WithOwner(func() { owner++ }))
	}
	before := cdevice.LiveLeaks()
	var da *cdevice.DeviceArray
	var err error
	testsupport.NoPanic(t, "Import", func() { da, err = cai.Import(context.Background(), d, io...) })
	if err != nil {
		testsupport.WantSentinel(t, "Import", err, cdevice.ErrInvalid, cdevice.ErrUnsupported, cdevice.ErrUnknownDevice)
		return
	}
	testsupport.ReadDeviceArray(t, "an imported descriptor", da)
	da.Release()
	if opts&4 != 0 && owner != 1 {
		t.Fatalf("the owner was released %d times, want 1", owner)
	}
	if l := cdevice.LiveLeaks(); l.DeviceArrays != before.DeviceArrays {
		t.Fatalf("device arrays live: %d, before %d", l.DeviceArrays, before.DeviceArrays)
	}
}

func fzMarshal(t *testing.T, d *cai.Interface) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		t.Fatalf("MarshalJSON: %v", err)
	}
	return b.Bytes()
}

// FuzzImport: descriptors in struct form (see fzDescriptor). A valid one's
// JSON form also reads back to the same JSON.
func FuzzImport(f *testing.F) {
	// 1-D float64 [6]; 2-D int32 (3,2); strided 3-D int16 with a copy; a
	// masked array; bool bytes; a stream (ignored, and not); version 2.
	f.Add([]byte{0, 1, 6, 10, 0, 0, 0}, byte(0), []byte{1, 2, 3, 4})
	f.Add([]byte{0, 2, 3, 2, 2, 0, 4, 0}, byte(0), []byte{})
	f.Add([]byte{4, 3, 2, 3, 2, 24, 8, 2, 1, 0, 0, 0}, byte(1), []byte{})
	f.Add([]byte{128, 1, 5, 10, 0, 0, 0, 0, 1, 0, 2, 16, 0, 0, 0}, byte(4), []byte{1, 0, 1, 1, 0})
	f.Add([]byte{0, 1, 5, 11, 0, 0, 0}, byte(0), []byte{1, 0, 2, 0, 1})
	f.Add([]byte{64, 1, 4, 2, 0, 0, 0, 1}, byte(2), []byte{})
	f.Add([]byte{64, 1, 4, 2, 0, 0, 0, 1}, byte(0), []byte{})
	f.Add([]byte{1, 2, 1, 3, 3, 0, 0, 0}, byte(0), []byte{})
	f.Fuzz(func(t *testing.T, prog []byte, opts byte, contents []byte) {
		store := testsupport.Guarded(t).Store
		copy(store, contents)
		d := fzDescriptor(testsupport.NewProg(prog), store, 0)
		var verr error
		testsupport.NoPanic(t, "Validate", func() { verr = d.Validate() })
		if verr == nil {
			j := fzMarshal(t, d)
			var back cai.Interface
			if err := json.Unmarshal(j, &back); err != nil {
				t.Fatalf("a valid descriptor's JSON %s does not read back: %v", j, err)
			}
			if j2 := fzMarshal(t, &back); !bytes.Equal(j, j2) {
				t.Fatalf("JSON round trip:\n%s\n%s", j, j2)
			}
		} else {
			testsupport.WantSentinel(t, "Validate", verr, cdevice.ErrInvalid, cdevice.ErrUnsupported)
		}
		fzImport(t, store, d, opts)
	})
}

// FuzzImportJSON: any bytes as a descriptor's JSON. What parses is
// re-encoded and parsed again to the same JSON; its data pointers are
// then moved into the store (offset by the pointer modulo its size) and
// it is imported as FuzzImport does.
func FuzzImportJSON(f *testing.F) {
	f.Add([]byte(`{"shape":[4],"typestr":"<f8","data":[8,false],"version":3,"strides":null}`), byte(0), []byte{})
	f.Add([]byte(`{"shape":[3,2],"typestr":"<i4","data":[64,true],"version":3,"strides":[8,4],"descr":[["","<i4"]]}`), byte(0), []byte{})
	f.Add([]byte(`{"shape":[2,2,2],"typestr":"<u2","data":[8,false],"version":3,"strides":[8,2,4]}`), byte(1), []byte{})
	f.Add([]byte(`{"shape":[5],"typestr":"<i8","data":[16,false],"version":3,"strides":null,"mask":{"shape":[5],"typestr":"|b1","data":[512,false],"version":3,"strides":null},"stream":1}`), byte(2), []byte{})
	f.Add([]byte(`{"shape":[3],"typestr":"|b1","data":[24,false],"version":2}`), byte(0), []byte{1, 0, 1})
	f.Add([]byte(`{"shape":[2],"typestr":"<M8[ns]","data":[40,false],"version":3,"stream":0}`), byte(2), []byte{})
	f.Add([]byte(`{"shape":[],"typestr":"<f4","data":[16,false],"version":3}`), byte(0), []byte{})
	f.Add([]byte(`{"shape":[1e3],"typestr":"<f4","data":[null,false]}`), byte(0), []byte{})
	f.Fuzz(func(t *testing.T, j []byte, opts byte, contents []byte) {
		store := testsupport.Guarded(t).Store
		copy(store, contents)
		var d cai.Interface
		var err error
		testsupport.NoPanic(t, "UnmarshalJSON", func() { err = json.Unmarshal(j, &d) })
		if err != nil {
			return // json's own errors, or the descriptor's
		}
		j1 := fzMarshal(t, &d)
		var back cai.Interface
		if err := json.Unmarshal(j1, &back); err != nil {
			t.Fatalf("our JSON %s of a parsed descriptor does not read back: %v", j1, err)
		}
		if j2 := fzMarshal(t, &back); !bytes.Equal(j1, j2) {
			t.Fatalf("JSON round trip:\n%s\n%s", j1, j2)
		}
		base := uintptr(unsafe.Pointer(&store[0]))
		for x := &d; x != nil; x = x.Mask {
			if x.Data.Ptr != 0 {
				x.Data.Ptr = base + x.Data.Ptr%uintptr(len(store))
			}
		}
		fzImport(t, store, &d, opts)
	})
}
