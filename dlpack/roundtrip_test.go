package dlpack_test

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/dlpack"
	"github.com/purearrow/cdevice/tensor"
)

// leafOf is the node holding the values buffer.
func leafOf(d *cdevice.DeviceArray) (leaf *cdevice.DeviceArray, base int64) {
	leaf, base = d, d.Offset
	for len(leaf.Children) == 1 {
		st := leaf.Type
		if e, ok := st.(arrow.ExtensionType); ok {
			st = e.StorageType()
		}
		base = base*int64(st.(*arrow.FixedSizeListType).Len()) + leaf.Children[0].Offset
		leaf = leaf.Children[0]
	}
	return leaf, base
}

// want is what a round trip expects of the exported tensor.
type want struct {
	shape, strides []int64
	dtype          dlpack.DataType
	copied         bool
	flags          uint64 // versioned only
}

// roundTrip exports da (versioned or legacy), checks the tensor, imports it
// back with iopts, reads it and compares with wantArr. It checks zero-copy
// both ways and that the deleter runs exactly once, when the imported array
// is released.
func roundTrip(t *testing.T, da *cdevice.DeviceArray, versioned bool, w want, wantArr arrow.Array,
	eopts []dlpack.ExportOption, iopts ...dlpack.ImportOption) {
	t.Helper()
	before := stats()
	var mt *dlpack.ManagedTensorVersioned
	var lt *dlpack.ManagedTensor
	var tensor *dlpack.Tensor
	var err error
	if versioned {
		mt, err = dlpack.Export(context.Background(), da, eopts...)
		must(t, err)
		tensor = &mt.DLTensor
		if mt.Version != (dlpack.PackVersion{Major: 1, Minor: 3}) || mt.Flags != w.flags {
			t.Errorf("version %v flags %#x, want 1.3 and %#x", mt.Version, mt.Flags, w.flags)
		}
	} else {
		lt, err = dlpack.ExportLegacy(context.Background(), da, eopts...)
		must(t, err)
		tensor = &lt.DLTensor
	}
	if s := stats(); s.Exports != before.Exports+1 {
		t.Fatalf("exports %d, want %d", s.Exports, before.Exports+1)
	}
	wantDev := dlpack.Device{DeviceType: dlpack.DeviceType(da.DeviceType), DeviceID: int32(da.DeviceID)}
	if da.DeviceType == abi.DeviceCPU {
		wantDev.DeviceID = 0
	}
	if tensor.Device != wantDev || tensor.Dtype != w.dtype || int(tensor.Ndim) != len(w.shape) ||
		!slices.Equal(tensor.ShapeSlice(), w.shape) || !slices.Equal(tensor.StridesSlice(), w.strides) {
		t.Fatalf("tensor device %v dtype %v shape %v strides %v; want %v %v %v %v", tensor.Device, tensor.Dtype,
			tensor.ShapeSlice(), tensor.StridesSlice(), wantDev, w.dtype, w.shape, w.strides)
	}
	data, off := tensor.Data, tensor.ByteOffset
	if !w.copied {
		leaf, base := leafOf(da)
		if numel := product(w.shape); numel > 0 && (data != uintptr(leaf.Buffers[1].Ptr) || off != uint64(base)*uint64(w.dtype.Bits/8)) {
			t.Fatalf("not zero-copy: data %#x+%d, values buffer %#x, element %d", data, off, leaf.Buffers[1].Ptr, base)
		}
	}
	var back *cdevice.DeviceArray
	if versioned {
		back, err = dlpack.Import(context.Background(), mt, iopts...)
	} else {
		back, err = dlpack.ImportLegacy(context.Background(), lt, iopts...)
	}
	must(t, err)
	if leaf, base := leafOf(back); product(w.shape) > 0 && (uintptr(leaf.Buffers[1].Ptr) != data || uint64(base)*uint64(w.dtype.Bits/8) != off) {
		// Not zero-copy on import: only a copy (WithAllowCopy, Boolean) may do that, and then the tensor is gone.
		if s := stats(); s.Exports != before.Exports {
			t.Fatalf("import copied but kept the tensor (%d exports)", s.Exports)
		}
	} else if s := stats(); s.Exports != before.Exports+1 {
		t.Fatalf("import released the tensor early")
	}
	got := toHost(t, back)
	s := stats()
	if s.Exports != before.Exports || s.DeleterCalls != before.DeleterCalls+1 || s.Imports != before.Imports ||
		s.StrayDeletes != before.StrayDeletes {
		t.Fatalf("after release: %+v, before %+v: want the deleter called exactly once", s, before)
	}
	wantEqual(t, got, wantArr)
}

func product(s []int64) int64 {
	n := int64(1)
	for _, d := range s {
		n *= d
	}
	return n
}

func forVersions(t *testing.T, f func(t *testing.T, versioned bool)) {
	t.Run("versioned", func(t *testing.T) { f(t, true) })
	t.Run("legacy", func(t *testing.T) { f(t, false) })
}

func TestRoundTripPrimitive(t *testing.T) {
	for name, dev := range testDevices(t) {
		t.Run(name, func(t *testing.T) {
			for i, dt := range numericTypes {
				t.Run(dt.String(), func(t *testing.T) {
					d := dtypeFor(t, dt)
					full := fromBytes(t, dt, 1000, valueBytes(d, int64(-500+37*i), 1000))
					forVersions(t, func(t *testing.T, versioned bool) {
						for _, c := range []struct{ i, j int }{{0, 1000}, {7, 990}, {5, 5}} {
							a := slice(t, full, c.i, c.j)
							da := onDevice(t, a, dev)
							roundTrip(t, da, versioned, want{shape: []int64{int64(c.j - c.i)}, strides: []int64{1}, dtype: d,
								flags: dlpack.FlagReadOnly}, a, nil)
						}
					})
				})
			}
		})
	}
}

func TestRoundTripFixedSizeList(t *testing.T) {
	for name, dev := range testDevices(t) {
		t.Run(name, func(t *testing.T) {
			forVersions(t, func(t *testing.T, versioned bool) {
				// 2-D: fixed_size_list<float32, 4>, sliced.
				f32 := arrow.PrimitiveTypes.Float32
				fsl := arrow.FixedSizeListOf(4, f32)
				d := dtypeFor(t, f32)
				a := slice(t, fromBytes(t, fsl, 50, valueBytes(d, 3, 200)), 3, 47)
				da := onDevice(t, a, dev)
				w := want{shape: []int64{44, 4}, strides: []int64{4, 1}, dtype: d, flags: dlpack.FlagReadOnly}
				t.Run("as-list", func(t *testing.T) { roundTrip(t, da, versioned, w, a, nil, dlpack.WithType(fsl)) })
				t.Run("default", func(t *testing.T) {
					tt, err := tensor.NewFixedShapeType(f32, []int64{4}, nil, nil)
					must(t, err)
					ext := array.NewExtensionArrayWithStorage(tt, a)
					defer ext.Release()
					roundTrip(t, da, versioned, w, ext, nil)
				})

				// 3-D: fixed_size_list<fixed_size_list<int16, 3>, 2>.
				i16 := arrow.PrimitiveTypes.Int16
				nested := arrow.FixedSizeListOf(2, arrow.FixedSizeListOf(3, i16))
				d16 := dtypeFor(t, i16)
				b := slice(t, fromBytes(t, nested, 20, valueBytes(d16, -40, 120)), 1, 20)
				db := onDevice(t, b, dev)
				wb := want{shape: []int64{19, 2, 3}, strides: []int64{6, 3, 1}, dtype: d16, flags: dlpack.FlagReadOnly}
				t.Run("nested", func(t *testing.T) { roundTrip(t, db, versioned, wb, b, nil, dlpack.WithType(nested)) })
			})
		})
	}
}

// permuted is what WithAllowCopy makes of a fixed shape tensor array with a
// permutation: each row's logical view, row-major.
func permuted(elems []byte, isz, rows int, phys, perm []int64) []byte {
	nd := len(phys)
	ps := make([]int64, nd)
	row := int64(1)
	for k := nd - 1; k >= 0; k-- {
		ps[k] = row
		row *= phys[k]
	}
	logical := make([]int64, nd)
	for i, p := range perm {
		logical[i] = phys[p]
	}
	out := make([]byte, 0, len(elems))
	idx := make([]int64, nd)
	for r := 0; r < rows; r++ {
		for n := int64(0); n < row; n++ {
			rem, src := n, int64(0)
			for i := nd - 1; i >= 0; i-- {
				idx[i] = rem % logical[i]
				rem /= logical[i]
				src += idx[i] * ps[perm[i]]
			}
			at := (int64(r)*row + src) * int64(isz)
			out = append(out, elems[at:at+int64(isz)]...)
		}
	}
	return out
}

func TestRoundTripFixedShapeTensor(t *testing.T) {
	for name, dev := range testDevices(t) {
		t.Run(name, func(t *testing.T) {
			forVersions(t, func(t *testing.T, versioned bool) {
				f64 := arrow.PrimitiveTypes.Float64
				d := dtypeFor(t, f64)
				const rows = 10
				elems := valueBytes(d, 11, rows*24)

				plain, err := tensor.NewFixedShapeType(f64, []int64{2, 3, 4}, nil, nil)
				must(t, err)
				a := slice(t, fromBytes(t, plain, rows, elems), 2, 9)
				w := want{shape: []int64{7, 2, 3, 4}, strides: []int64{24, 12, 4, 1}, dtype: d, flags: dlpack.FlagReadOnly}
				t.Run("plain", func(t *testing.T) { roundTrip(t, onDevice(t, a, dev), versioned, w, a, nil) })

				// Physical [2,3,4], logical dimension i is physical perm[i].
				perm := []int64{2, 0, 1}
				pt, err := tensor.NewFixedShapeType(f64, []int64{2, 3, 4}, perm, []string{"C", "H", "W"})
				must(t, err)
				if got := pt.LogicalShape(); !slices.Equal(got, []int64{4, 2, 3}) {
					t.Fatalf("logical shape %v", got)
				}
				p := fromBytes(t, pt, rows, elems)
				dp := onDevice(t, p, dev)
				wp := want{shape: []int64{rows, 4, 2, 3}, strides: []int64{24, 1, 12, 4}, dtype: d, flags: dlpack.FlagReadOnly}
				t.Run("permuted/as-type", func(t *testing.T) { roundTrip(t, dp, versioned, wp, p, nil, dlpack.WithType(pt)) })
				t.Run("permuted/copy", func(t *testing.T) {
					lt, err := tensor.NewFixedShapeType(f64, []int64{4, 2, 3}, nil, nil)
					must(t, err)
					roundTrip(t, dp, versioned, wp, fromBytes(t, lt, rows, permuted(elems, 8, rows, []int64{2, 3, 4}, perm)),
						nil, dlpack.WithAllowCopy())
				})
				t.Run("permuted/refused", func(t *testing.T) {
					before := stats()
					var err error
					if versioned {
						mt, eerr := dlpack.Export(context.Background(), dp)
						must(t, eerr)
						_, err = dlpack.Import(context.Background(), mt)
					} else {
						mt, eerr := dlpack.ExportLegacy(context.Background(), dp)
						must(t, eerr)
						_, err = dlpack.ImportLegacy(context.Background(), mt)
					}
					wantIs(t, err, dlpack.ErrNotContiguous, cdevice.ErrUnsupported)
					if s := stats(); s.Exports != before.Exports || s.DeleterCalls != before.DeleterCalls+1 {
						t.Fatalf("a refused import must call the deleter once: %+v, before %+v", s, before)
					}
				})
			})
		})
	}
}

func TestRoundTripBool(t *testing.T) {
	for name, dev := range testDevices(t) {
		t.Run(name, func(t *testing.T) {
			forVersions(t, func(t *testing.T, versioned bool) {
				d := dlpack.DataType{Code: dlpack.CodeBool, Bits: 8, Lanes: 1}
				bytes := valueBytes(d, 1, 300)
				full := fromBytes(t, arrow.FixedWidthTypes.Boolean, 300, bytes)
				a := slice(t, full, 3, 299) // a bit offset that is not a byte
				da := onDevice(t, a, dev)
				w := want{shape: []int64{296}, strides: []int64{1}, dtype: d, copied: true, flags: dlpack.FlagIsCopied}
				t.Run("to-boolean", func(t *testing.T) {
					roundTrip(t, da, versioned, w, a, nil, dlpack.WithType(arrow.FixedWidthTypes.Boolean))
				})
				t.Run("to-bool8", func(t *testing.T) {
					roundTrip(t, da, versioned, w, fromBytes(t, bool8, 296, bytes[3:299]), nil)
				})
				// bool8 (bytes) is zero-copy both ways.
				b8 := slice(t, fromBytes(t, bool8, 300, bytes), 10, 300)
				w8 := want{shape: []int64{290}, strides: []int64{1}, dtype: d, flags: dlpack.FlagReadOnly}
				t.Run("bool8", func(t *testing.T) { roundTrip(t, onDevice(t, b8, dev), versioned, w8, b8, nil) })
				// A fixed shape tensor of booleans is a copy too.
				bt, err := tensor.NewFixedShapeType(arrow.FixedWidthTypes.Boolean, []int64{3, 2}, nil, nil)
				must(t, err)
				ba := fromBytes(t, bt, 50, bytes)
				wb := want{shape: []int64{50, 3, 2}, strides: []int64{6, 2, 1}, dtype: d, copied: true, flags: dlpack.FlagIsCopied}
				t.Run("tensor", func(t *testing.T) { roundTrip(t, onDevice(t, ba, dev), versioned, wb, ba, nil, dlpack.WithType(bt)) })
			})
		})
	}
}

// fillNulls is the expected array: a's nulls (and the elements of null
// lists) replaced by fill, without a validity bitmap.
func fillNulls(t testing.TB, a arrow.Array, fill []byte) arrow.Array {
	t.Helper()
	return fromBytes(t, a.DataType(), a.Len(), filledElems(a, fill))
}

// filledElems are a's leaf elements in storage order, nulls replaced by fill.
func filledElems(a arrow.Array, fill []byte) []byte {
	var elems []byte
	var walk func(d arrow.ArrayData, start, n int, null bool)
	walk = func(d arrow.ArrayData, start, n int, null bool) {
		st := d.DataType()
		if e, ok := st.(arrow.ExtensionType); ok {
			st = e.StorageType()
		}
		for i := start; i < start+n; i++ {
			isNull := null || len(d.Buffers()) > 0 && d.Buffers()[0] != nil && !bitIsSet(d.Buffers()[0].Bytes(), d.Offset()+i)
			switch st := st.(type) {
			case *arrow.FixedSizeListType:
				k := int(st.Len())
				walk(d.Children()[0], (d.Offset()+i)*k, k, isNull)
			default:
				w := st.(arrow.FixedWidthDataType).BitWidth() / 8
				if isNull {
					elems = append(elems, fill...)
				} else {
					at := (d.Offset() + i) * w
					elems = append(elems, d.Buffers()[1].Bytes()[at:at+w]...)
				}
			}
		}
	}
	walk(a.Data(), 0, a.Len(), false)
	return elems
}

func bitIsSet(b []byte, i int) bool { return b[i/8]&(1<<(i%8)) != 0 }

func TestRoundTripNullFill(t *testing.T) {
	for name, dev := range testDevices(t) {
		t.Run(name, func(t *testing.T) {
			forVersions(t, func(t *testing.T, versioned bool) {
				i32 := arrow.PrimitiveTypes.Int32
				d := dtypeFor(t, i32)
				a := slice(t, withNulls(t, fromBytes(t, i32, 100, valueBytes(d, 0, 100)), 7), 2, 98)
				da := onDevice(t, a, dev)
				_, err := dlpack.Export(context.Background(), da)
				wantIs(t, err, dlpack.ErrNulls, cdevice.ErrUnsupported)
				_, err = dlpack.ExportLegacy(context.Background(), da)
				wantIs(t, err, dlpack.ErrNulls)
				w := want{shape: []int64{96}, strides: []int64{1}, dtype: d, copied: true, flags: dlpack.FlagIsCopied}
				roundTrip(t, da, versioned, w, fillNulls(t, a, valueBytes(d, -1, 1)), []dlpack.ExportOption{dlpack.WithNullFill(-1)})

				// float16 with a fractional fill.
				f16 := arrow.FixedWidthTypes.Float16
				dh := dtypeFor(t, f16)
				h := withNulls(t, fromBytes(t, f16, 64, valueBytes(dh, 5, 64)), 3)
				wh := want{shape: []int64{64}, strides: []int64{1}, dtype: dh, copied: true, flags: dlpack.FlagIsCopied}
				roundTrip(t, onDevice(t, h, dev), versioned, wh, fillNulls(t, h, valueBytes(dh, 0, 2)[2:]),
					[]dlpack.ExportOption{dlpack.WithNullFill(0.5)})

				// fixed_size_list with null lists and null elements.
				u16 := arrow.PrimitiveTypes.Uint16
				du := dtypeFor(t, u16)
				fsl := arrow.FixedSizeListOf(3, u16)
				inner := withNulls(t, fromBytes(t, u16, 90, valueBytes(du, 100, 90)), 4)
				ld := array.NewData(fsl, 30, []*memory.Buffer{nil}, []arrow.ArrayData{inner.Data()}, 0, 0)
				lists := withNulls(t, array.MakeFromData(ld), 5)
				ld.Release()
				wl := want{shape: []int64{30, 3}, strides: []int64{3, 1}, dtype: du, copied: true, flags: dlpack.FlagIsCopied}
				roundTrip(t, onDevice(t, lists, dev), versioned, wl, fillNulls(t, lists, valueBytes(du, 7, 1)),
					[]dlpack.ExportOption{dlpack.WithNullFill(7)}, dlpack.WithType(fsl))

				// Booleans with nulls: bytes with the fill.
				db := dlpack.DataType{Code: dlpack.CodeBool, Bits: 8, Lanes: 1}
				bb := valueBytes(db, 0, 40)
				bools := withNulls(t, fromBytes(t, arrow.FixedWidthTypes.Boolean, 40, bb), 6)
				for i := range bb {
					if i%6 == 1 {
						bb[i] = 1
					}
				}
				wbo := want{shape: []int64{40}, strides: []int64{1}, dtype: db, copied: true, flags: dlpack.FlagIsCopied}
				roundTrip(t, onDevice(t, bools, dev), versioned, wbo, fromBytes(t, bool8, 40, bb),
					[]dlpack.ExportOption{dlpack.WithNullFill(1)})

				// An array without nulls stays zero-copy with a fill.
				clean := fromBytes(t, i32, 10, valueBytes(d, 0, 10))
				roundTrip(t, onDevice(t, clean, dev), versioned, want{shape: []int64{10}, strides: []int64{1}, dtype: d,
					flags: dlpack.FlagReadOnly}, clean, []dlpack.ExportOption{dlpack.WithNullFill(3)})
			})
		})
	}
}

func TestNullFillNotRepresentable(t *testing.T) {
	i8 := arrow.PrimitiveTypes.Int8
	a := withNulls(t, fromBytes(t, i8, 10, valueBytes(dtypeFor(t, i8), 0, 10)), 2)
	da := onDevice(t, a, cpuDev)
	for _, v := range []float64{0.5, 128, -129} {
		_, err := dlpack.Export(context.Background(), da, dlpack.WithNullFill(v))
		wantIs(t, err, cdevice.ErrInvalid)
	}
	u8 := arrow.PrimitiveTypes.Uint8
	b := withNulls(t, fromBytes(t, u8, 10, valueBytes(dtypeFor(t, u8), 0, 10)), 2)
	_, err := dlpack.Export(context.Background(), onDevice(t, b, cpuDev), dlpack.WithNullFill(-1))
	wantIs(t, err, cdevice.ErrInvalid)
}
