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
	"errors"
	"math"
	"os"
	"runtime/debug"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/dlpack"
	"github.com/purearrow/cdevice/internal/ffi"
)

const (
	fzArenaSize = 64 << 10
	fzStoreSize = 64 << 10
)

// fzMem is [guard][arena][guard][store][guard], made once per process.
type fzMem struct {
	arena, store []byte
	used         int
}

var (
	fzOnce sync.Once
	fzM    *fzMem
	fzErr  error
)

func fzMemory(t testing.TB) *fzMem {
	t.Helper()
	fzOnce.Do(func() {
		page := os.Getpagesize()
		arena := (fzArenaSize + page - 1) / page * page
		store := (fzStoreSize + page - 1) / page * page
		total := page + arena + page + store + page
		region, err := syscall.Mmap(-1, 0, total, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			fzErr = err
			return
		}
		for _, g := range []int{0, page + arena, total - page} {
			if err := syscall.Mprotect(region[g:g+page], syscall.PROT_NONE); err != nil {
				fzErr = err
				return
			}
		}
		s0 := page + arena + page
		fzM = &fzMem{arena: region[page : page+arena : page+arena], store: region[s0+store-fzStoreSize : s0+store : s0+store]}
	})
	if fzErr != nil {
		t.Skipf("no guarded mapping: %v", fzErr)
	}
	clear(fzM.arena[:fzM.used])
	clear(fzM.store)
	fzM.used = 0
	return fzM
}

func (m *fzMem) alloc(n int) unsafe.Pointer {
	start := (m.used + 15) &^ 15
	if n <= 0 || start+n > len(m.arena) {
		return nil
	}
	m.used = start + n
	return unsafe.Pointer(&m.arena[start])
}

func (m *fzMem) int64s(n int) []int64 {
	p := m.alloc(n * 8)
	if p == nil {
		return nil
	}
	return unsafe.Slice((*int64)(p), n)
}

func (m *fzMem) base() uintptr { return uintptr(unsafe.Pointer(&m.store[0])) }

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

type fzProg struct {
	b []byte
	i int
}

func (r *fzProg) byte() byte {
	if r.i >= len(r.b) {
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

func (r *fzProg) u16() int { return int(r.byte()) | int(r.byte())<<8 }

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
	fzDevices    = []dlpack.DeviceType{dlpack.DeviceCPU, dlpack.DeviceCUDA, 5, dlpack.DeviceMAIA, 99, 0, -1, dlpack.DeviceCUDAHost}
	fzWithTypes  = []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Boolean, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int32), arrow.FixedSizeListOf(2, arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int16)), arrow.BinaryTypes.String}
	errSentinels = []error{cdevice.ErrInvalid, cdevice.ErrUnsupported, cdevice.ErrNoDevice}
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

// fzBuild interprets prog: a header byte (versioned, AllowCopy, WithType,
// hostile version), flags, device, ndim, per dimension a shape byte (and,
// with strides, a stride byte), dtype, byte_offset and the data position.
func fzBuild(m *fzMem, prog []byte) *fzTensor {
	r := &fzProg{b: prog}
	h := r.byte()
	ft := &fzTensor{versioned: h&1 == 0}
	if ft.versioned {
		ft.v = (*dlpack.ManagedTensorVersioned)(m.alloc(int(unsafe.Sizeof(dlpack.ManagedTensorVersioned{}))))
		ft.v.Version = dlpack.PackVersion{Major: dlpack.MajorVersion, Minor: uint32(r.byte() % 4)}
		if h&2 != 0 {
			ft.v.Version.Major = uint32(r.byte())
		}
		ft.v.Flags = uint64(r.byte())
		ft.v.Deleter = fzDeleter1.Ptr()
		ft.t, ft.addr = &ft.v.DLTensor, ft.v.Addr()
	} else {
		ft.l = (*dlpack.ManagedTensor)(m.alloc(int(unsafe.Sizeof(dlpack.ManagedTensor{}))))
		ft.l.Deleter = fzDeleter1.Ptr()
		ft.t, ft.addr = &ft.l.DLTensor, uintptr(unsafe.Pointer(ft.l))
	}
	if h&4 != 0 {
		ft.opts = append(ft.opts, dlpack.AllowCopy())
	}
	if h&8 != 0 {
		ft.opts = append(ft.opts, dlpack.WithType(fzWithTypes[int(r.byte())%len(fzWithTypes)]))
	}
	t := ft.t
	if d := r.byte(); d < 0xf0 {
		t.Device = dlpack.Device{DeviceType: dlpack.DeviceCPU}
	} else {
		t.Device = dlpack.Device{DeviceType: fzDevices[int(d)%len(fzDevices)], DeviceID: int32(d & 3)}
	}
	nd := int(r.byte())
	switch {
	case nd < 0xf0:
		nd %= 5 // 0..4
	default:
		nd = []int{-1, 64, 65, 1 << 20}[nd%4]
	}
	t.Ndim = int32(nd)
	withStrides := h&16 != 0
	if nd > 0 && nd <= 65 {
		shape := m.int64s(nd)
		var strides []int64
		if withStrides {
			strides = m.int64s(nd)
		}
		for k := range nd {
			if d := r.byte(); d < 0xf8 {
				shape[k] = int64(d % 8)
			} else {
				shape[k] = fzDims[int(d)%len(fzDims)]
			}
			if withStrides {
				if s := r.byte(); s < 0xf8 {
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
	t.Dtype = fzDtypes[int(r.byte())%len(fzDtypes)]
	if o := r.byte(); o < 0xf8 {
		t.ByteOffset = uint64(o) * 8
	} else {
		t.ByteOffset = fzOffsets[int(o)%len(fzOffsets)]
	}
	if h&32 == 0 {
		t.Data = m.base() + uintptr(r.u16()*8%len(m.store))
	}
	return ft
}

// fzEntitled reports whether every byte of data the tensor addresses lies
// in the store: from the data pointer (the start of the producer's
// allocation, which a zero-copy import wraps from) through byte_offset and
// the elements shape and strides reach, or whether the tensor is refused
// on its fields alone. An overflow counts as outside.
func fzEntitled(m *fzMem, t *dlpack.Tensor) bool {
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
	p := int64(t.Data - m.base())
	return p+start >= 0 && p+end <= int64(len(m.store))
}

// FuzzImport: see the file comment.
func FuzzImport(f *testing.F) {
	// versioned CPU int32 [6], float64 [2,3], strided int16 [3,2] with AllowCopy,
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
		m := fzMemory(t)
		fzMu.Lock()
		clear(fzDeleted)
		fzMu.Unlock()
		copy(m.store, contents)
		ft := fzBuild(m, prog)
		if !fzEntitled(m, ft.t) {
			return
		}
		before := cdevice.LiveLeaks()
		var da *cdevice.DeviceArray
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("import panicked: %v\n%s", p, debug.Stack())
				}
			}()
			if ft.versioned {
				da, err = dlpack.Import(ft.v, ft.opts...)
			} else {
				da, err = dlpack.ImportLegacy(ft.l, ft.opts...)
			}
		}()
		if err != nil {
			ok := false
			for _, s := range errSentinels {
				ok = ok || errors.Is(err, s)
			}
			if !ok {
				t.Fatalf("error %q wraps no sentinel", err)
			}
			if n := fzDeletes(ft.addr); n != 1 {
				t.Fatalf("refused (%v): deleter called %d times, want 1", err, n)
			}
			return
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("reading the imported %s panicked: %v\n%s", da.Type, p, debug.Stack())
				}
			}()
			arr, err := da.ToHost(context.Background())
			if err != nil {
				t.Fatalf("ToHost of an imported tensor: %v", err)
			}
			defer arr.Release()
			if err := cdevice.ValidateFull(arr); err != nil {
				t.Fatalf("the imported %s is not valid: %v", arr.DataType(), err)
			}
			vals := arrow.Array(arr)
			if ext, ok := arr.(array.ExtensionArray); ok {
				vals = ext.Storage() // extension arrays have no ValueStr of their own
			}
			for i := range vals.Len() {
				_ = vals.ValueStr(i)
			}
			_ = arr.String()
			// (Not array.Equal(arr, arr): fuzzed floats are often NaN, and
			// arrow-go's ApproxEqual does not take float16 NaNs as equal.)
		}()
		da.Release()
		if n := fzDeletes(ft.addr); n != 1 {
			t.Fatalf("after release: deleter called %d times, want 1", n)
		}
		if l := cdevice.LiveLeaks(); l.DeviceArrays != before.DeviceArrays || l.Imports != before.Imports {
			t.Fatalf("leak counters moved: %s, before %s", l, before)
		}
	})
}
