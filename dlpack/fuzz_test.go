//go:build linux || darwin

package dlpack_test

// FuzzImport: DLPack tensors (versioned and legacy) built from fuzz input
// in memory off the Go heap: ndim, shape, strides, dtype, byte_offset,
// device, version and flags fuzzed, data pointing into a backing store
// that ends at a PROT_NONE guard page. Only tensors whose elements (as
// shape, strides and byte_offset address them, from the data pointer on)
// lie in the store are imported; any of them must give an array or an
// error wrapping a sentinel, never a panic or a crash, an imported array
// must be valid and readable, and the deleter must run exactly once.
//
// Run: go test -run XXX -fuzz '^FuzzImport$' -fuzztime 2m ./dlpack

import (
	"context"
	"math"
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/dlpack"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// The deleter counts its calls per managed tensor address.
var (
	fzMu       sync.Mutex
	fzDeleted  = map[uintptr]int{}
	fzDeleter1 = ffi.NewCallback1("dlpack fuzz_test deleter", func(p uintptr) uintptr {
		fzMu.Lock()
		defer fzMu.Unlock()
		fzDeleted[p]++
		return 0
	})
)

func fzDeletes(p uintptr) int {
	fzMu.Lock()
	defer fzMu.Unlock()
	return fzDeleted[p]
}

var (
	fzDtypes = []dlpack.DataType{
		{Code: dlpack.CodeInt, Bits: 8, Lanes: 1}, {Code: dlpack.CodeInt, Bits: 16, Lanes: 1},
		{Code: dlpack.CodeInt, Bits: 32, Lanes: 1}, {Code: dlpack.CodeInt, Bits: 64, Lanes: 1},
		{Code: dlpack.CodeUInt, Bits: 8, Lanes: 1}, {Code: dlpack.CodeUInt, Bits: 64, Lanes: 1},
		{Code: dlpack.CodeFloat, Bits: 16, Lanes: 1}, {Code: dlpack.CodeFloat, Bits: 32, Lanes: 1},
		{Code: dlpack.CodeFloat, Bits: 64, Lanes: 1}, {Code: dlpack.CodeBool, Bits: 8, Lanes: 1},
		// no Arrow type, or malformed
		{Code: dlpack.CodeBfloat, Bits: 16, Lanes: 1}, {Code: dlpack.CodeComplex, Bits: 64, Lanes: 1},
		{Code: dlpack.CodeFloat, Bits: 32, Lanes: 4}, {Code: dlpack.CodeInt, Bits: 4, Lanes: 1},
		{Code: dlpack.CodeInt, Bits: 0, Lanes: 1}, {Code: dlpack.CodeFloat4E2M1FN, Bits: 4, Lanes: 1},
		{Code: dlpack.CodeBool, Bits: 1, Lanes: 1}, {Code: dlpack.CodeInt, Bits: 32, Lanes: 0},
		{Code: 99, Bits: 8, Lanes: 1}, {Code: dlpack.CodeOpaqueHandle, Bits: 64, Lanes: 1},
	}
	fzDims       = []int64{-1, 1 << 40, math.MaxInt64, 1 << 31, 1 << 20, 65536}
	fzStrides    = []int64{0, -1, -3, 1 << 40, math.MinInt64, math.MaxInt64, 1 << 33}
	fzOffsets    = []uint64{1, 3, 1 << 62, math.MaxUint64, 1 << 63, 65536}
	fzDevices    = []dlpack.DeviceType{abi.DeviceCPU, abi.DeviceCUDA, 5, dlpack.DeviceMAIA, 99, 0, -1, abi.DeviceCUDAHost}
	fzWithTypes  = []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Boolean, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), arrow.FixedSizeListOf(2, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int16)), arrow.BinaryTypes.String}
	errSentinels = []error{cdevice.ErrInvalid, cdevice.ErrUnsupported, cdevice.ErrUnknownDevice}
)

// fzTensor is one built tensor and where its struct is.
type fzTensor struct {
	addr      uintptr
	versioned bool
	v         *dlpack.ManagedTensorVersioned
	l         *dlpack.ManagedTensor
	t         *dlpack.Tensor
	opts      []dlpack.ImportOption
}

// fzBuild interprets prog: a header byte (versioned, WithAllowCopy, WithType,
// hostile version), flags, device, ndim, per dimension a shape byte (and,
// with strides, a stride byte), dtype, byte_offset and the data position.
func fzBuild(m *testsupport.GuardedMemory, prog []byte) *fzTensor {
	r := testsupport.NewProg(prog)
	h := r.Byte()
	ft := &fzTensor{versioned: h&1 == 0}
	if ft.versioned {
		ft.v = (*dlpack.ManagedTensorVersioned)(m.Alloc(int(unsafe.Sizeof(dlpack.ManagedTensorVersioned{}))))
		ft.v.Version = dlpack.PackVersion{Major: dlpack.MajorVersion, Minor: uint32(r.Byte() % 4)}
		if h&2 != 0 {
			ft.v.Version.Major = uint32(r.Byte())
		}
		ft.v.Flags = uint64(r.Byte())
		ft.v.Deleter = fzDeleter1.Ptr()
		ft.t, ft.addr = &ft.v.DLTensor, ft.v.Addr()
	} else {
		ft.l = (*dlpack.ManagedTensor)(m.Alloc(int(unsafe.Sizeof(dlpack.ManagedTensor{}))))
		ft.l.Deleter = fzDeleter1.Ptr()
		ft.t, ft.addr = &ft.l.DLTensor, uintptr(unsafe.Pointer(ft.l))
	}
	if h&4 != 0 {
		ft.opts = append(ft.opts, dlpack.WithAllowCopy())
	}
	if h&8 != 0 {
		ft.opts = append(ft.opts, dlpack.WithType(fzWithTypes[int(r.Byte())%len(fzWithTypes)]))
	}
	t := ft.t
	if d := r.Byte(); d < 0xf0 {
		t.Device = dlpack.Device{DeviceType: abi.DeviceCPU}
	} else {
		t.Device = dlpack.Device{DeviceType: fzDevices[int(d)%len(fzDevices)], DeviceID: int32(d & 3)}
	}
	nd := int(r.Byte())
	switch {
	case nd < 0xf0:
		nd %= 5 // 0..4
	default:
		nd = []int{-1, 64, 65, 1 << 20}[nd%4]
	}
	t.Ndim = int32(nd)
	withStrides := h&16 != 0
	if nd > 0 && nd <= 65 {
		shape := m.Int64s(nd)
		var strides []int64
		if withStrides {
			strides = m.Int64s(nd)
		}
		for k := range nd {
			if d := r.Byte(); d < 0xf8 {
				shape[k] = int64(d % 8)
			} else {
				shape[k] = fzDims[int(d)%len(fzDims)]
			}
			if withStrides {
				if s := r.Byte(); s < 0xf8 {
					strides[k] = int64(int8(s) % 16)
				} else {
					strides[k] = fzStrides[int(s)%len(fzStrides)]
				}
			}
		}
		t.Shape = uintptr(unsafe.Pointer(&shape[0]))
		if withStrides {
			t.Strides = uintptr(unsafe.Pointer(&strides[0]))
		}
	}
	t.Dtype = fzDtypes[int(r.Byte())%len(fzDtypes)]
	if o := r.Byte(); o < 0xf8 {
		t.ByteOffset = uint64(o) * 8
	} else {
		t.ByteOffset = fzOffsets[int(o)%len(fzOffsets)]
	}
	if h&32 == 0 {
		t.Data = m.StoreAddr(0) + uintptr(r.U16()*8%len(m.Store))
	}
	return ft
}

// fzEntitled reports whether every byte of data the tensor addresses lies
// in the store: from the data pointer (the start of the producer's
// allocation, which a zero-copy import wraps from) through byte_offset and
// the elements shape and strides reach, or whether the tensor is refused
// on its fields alone. An overflow counts as outside.
func fzEntitled(m *testsupport.GuardedMemory, t *dlpack.Tensor) bool {
	if t.Ndim <= 0 || t.Ndim > 64 || t.Shape == 0 || t.Dtype.Bits%8 != 0 || t.Dtype.Bits == 0 || t.Dtype.Lanes != 1 {
		return true // nothing of data is read
	}
	shape := unsafe.Slice((*int64)(abi.Pointer(t.Shape)), t.Ndim)
	numel := int64(1)
	for _, n := range shape {
		if n < 0 || (n > 0 && numel > math.MaxInt64/n) {
			return true // refused
		}
		numel *= n
	}
	if numel == 0 || t.Data == 0 {
		return true
	}
	isz := int64(t.Dtype.Bits / 8)
	var lo, hi int64 // in elements
	if t.Strides == 0 {
		if numel > math.MaxInt64/isz {
			return true
		}
		hi = numel - 1
	} else {
		strides := unsafe.Slice((*int64)(abi.Pointer(t.Strides)), t.Ndim)
		for k, n := range shape {
			if n <= 1 {
				continue
			}
			s := strides[k]
			if s > math.MaxInt32 || s < -math.MaxInt32 || n > math.MaxInt32 {
				return false // far outside a 64 KiB store
			}
			if ext := (n - 1) * s; ext < 0 {
				lo += ext
			} else {
				hi += ext
			}
		}
	}
	if t.ByteOffset > 1<<40 || hi > 1<<40 || lo < -(1<<40) || numel > 1<<40 {
		return false
	}
	off := int64(t.ByteOffset)
	start := min(0, off+lo*isz)
	end := max(off+(hi+1)*isz, off+numel*isz)
	p := int64(t.Data - m.StoreAddr(0))
	return p+start >= 0 && p+end <= int64(len(m.Store))
}

// FuzzImport: see the file comment.
func FuzzImport(f *testing.F) {
	// versioned CPU int32 [6], float64 [2,3], strided int16 [3,2] with WithAllowCopy,
	// legacy uint8 [4], bool [5], a byte_offset, an N-D tensor, and a bad version.
	f.Add([]byte{0, 0, 0, 0, 1, 6, 2, 0, 1}, []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Add([]byte{0, 0, 0, 0, 2, 2, 3, 8, 0, 2, 0}, []byte{})
	f.Add([]byte{4 | 16, 0, 0, 0, 2, 3, 2, 2, 3, 1, 2, 2, 4}, []byte{9, 9, 9})
	f.Add([]byte{1, 0, 1, 4, 4, 0, 4, 0}, []byte{0xff})
	f.Add([]byte{0, 0, 0, 0, 1, 5, 9, 0, 0}, []byte{0, 1, 2, 0, 1})
	f.Add([]byte{0, 0, 0, 0, 1, 6, 2, 3, 0}, []byte{})
	f.Add([]byte{0, 0, 0, 0, 3, 2, 2, 2, 2, 0, 0}, []byte{})
	f.Add([]byte{2, 0, 0, 7, 0, 1, 4, 2, 0, 0}, []byte{})
	f.Fuzz(func(t *testing.T, prog []byte, contents []byte) {
		m := testsupport.Guarded(t)
		fzMu.Lock()
		clear(fzDeleted)
		fzMu.Unlock()
		copy(m.Store, contents)
		ft := fzBuild(m, prog)
		if !fzEntitled(m, ft.t) {
			return
		}
		before := cdevice.LiveLeaks()
		var da *cdevice.DeviceArray
		var err error
		testsupport.NoPanic(t, "import", func() {
			if ft.versioned {
				da, err = dlpack.Import(context.Background(), ft.v, ft.opts...)
			} else {
				da, err = dlpack.ImportLegacy(context.Background(), ft.l, ft.opts...)
			}
		})
		if err != nil {
			testsupport.WantSentinel(t, "import", err, errSentinels...)
			if n := fzDeletes(ft.addr); n != 1 {
				t.Fatalf("refused (%v): deleter called %d times, want 1", err, n)
			}
			return
		}
		// (Not array.Equal(arr, arr): fuzzed floats are often NaN, and
		// arrow-go's ApproxEqual does not take float16 NaNs as equal.)
		testsupport.ReadDeviceArray(t, "an imported tensor", da)
		da.Release()
		if n := fzDeletes(ft.addr); n != 1 {
			t.Fatalf("after release: deleter called %d times, want 1", n)
		}
		if l := cdevice.LiveLeaks(); l.DeviceArrays != before.DeviceArrays || l.Imports() != before.Imports() {
			t.Fatalf("leak counters moved: %s, before %s", l, before)
		}
	})
}
