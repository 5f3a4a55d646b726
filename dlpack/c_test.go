package dlpack_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/dlpack"
	"github.com/purearrow/cdevice/tensor"
)

var (
	dtF64  = dlpack.DataType{Code: dlpack.CodeFloat, Bits: 64, Lanes: 1}
	dtF32  = dlpack.DataType{Code: dlpack.CodeFloat, Bits: 32, Lanes: 1}
	dtF16  = dlpack.DataType{Code: dlpack.CodeFloat, Bits: 16, Lanes: 1}
	dtI64  = dlpack.DataType{Code: dlpack.CodeInt, Bits: 64, Lanes: 1}
	dtI32  = dlpack.DataType{Code: dlpack.CodeInt, Bits: 32, Lanes: 1}
	dtI16  = dlpack.DataType{Code: dlpack.CodeInt, Bits: 16, Lanes: 1}
	dtU8   = dlpack.DataType{Code: dlpack.CodeUInt, Bits: 8, Lanes: 1}
	dtBool = dlpack.DataType{Code: dlpack.CodeBool, Bits: 8, Lanes: 1}
)

// A producer case: a tensor dlpack.c makes, and how Import must take it.
type prodCase struct {
	name     string
	s        spec
	opts     []dlpack.ImportOption
	zeroCopy bool
}

func producerCases() []prodCase {
	return []prodCase{
		{"f64", spec{dtype: dtF64, shape: []int64{100}, seed: -3}, nil, true},
		{"i32", spec{dtype: dtI32, shape: []int64{77}, seed: 1 << 20}, nil, true},
		{"f16", spec{dtype: dtF16, shape: []int64{50}, seed: -20}, nil, true},
		{"u8", spec{dtype: dtU8, shape: []int64{33}, seed: 250}, nil, true},
		{"bool", spec{dtype: dtBool, shape: []int64{20}, seed: 0}, nil, true},
		{"2d-i16", spec{dtype: dtI16, shape: []int64{5, 7}, seed: 9}, nil, true},
		{"3d-f32", spec{dtype: dtF32, shape: []int64{4, 3, 2}, seed: 1}, nil, true},
		{"2d-strides-given", spec{dtype: dtF32, shape: []int64{3, 5}, strides: []int64{5, 1}, seed: 2}, nil, true},
		{"size-1-dim-any-stride", spec{dtype: dtI64, shape: []int64{1, 5}, strides: []int64{99, 1}, seed: 2}, nil, true},
		{"empty", spec{dtype: dtI64, shape: []int64{0, 3}, seed: 0}, nil, true},
		{"byte-offset", spec{dtype: dtF64, shape: []int64{10}, offset: 64, seed: 5}, nil, true},
		{"byte-offset-2d", spec{dtype: dtI32, shape: []int64{3, 4}, offset: 12, seed: 5}, nil, true},
		{"read-only", spec{dtype: dtI64, shape: []int64{8}, flags: dlpack.FlagReadOnly, seed: 4}, nil, true},
		{"read-only-2d", spec{dtype: dtI16, shape: []int64{2, 3}, flags: dlpack.FlagReadOnly, seed: 4}, nil, true},
		{"transposed-copy", spec{dtype: dtI32, shape: []int64{6, 4}, strides: []int64{1, 6}, seed: 100},
			[]dlpack.ImportOption{dlpack.WithAllowCopy()}, false},
		{"misaligned-copy", spec{dtype: dtI32, shape: []int64{9}, offset: 3, seed: 7},
			[]dlpack.ImportOption{dlpack.WithAllowCopy()}, false},
		{"bool-to-boolean", spec{dtype: dtBool, shape: []int64{30}, seed: 2},
			[]dlpack.ImportOption{dlpack.WithType(arrow.FixedWidthTypes.Boolean)}, false},
	}
}

// expectedImport is the array Import must make of s's tensor: the default
// type (or the WithType's) over the values in logical row-major order.
func expectedImport(t testing.TB, s spec, typ arrow.DataType) arrow.Array {
	t.Helper()
	if typ == nil {
		var elem arrow.DataType
		switch {
		case s.dtype.Code == dlpack.CodeBool:
			elem = bool8
		default:
			for _, dt := range numericTypes {
				if dtypeFor(t, dt) == s.dtype {
					elem = dt
				}
			}
		}
		typ = elem
		if len(s.shape) > 1 {
			tt, err := tensor.NewFixedShapeType(elem, s.shape[1:], nil, nil)
			must(t, err)
			typ = tt
		}
	}
	return fromBytes(t, typ, int(s.shape[0]), valueBytes(s.dtype, s.seed, s.numel()))
}

type cDevice struct {
	name       string
	dev        device.Device
	ctx, queue uintptr
	svm        bool
	devType    dlpack.DeviceType
}

func cDevices(t *testing.T) (*clib, []cDevice) {
	c := loadC(t)
	devs := []cDevice{{name: "cpu", dev: device.CPU, devType: abi.DeviceCPU}}
	t.Run("opencl-probe", func(t *testing.T) {
		_, d := loadCOpenCL(t)
		devs = append(devs, cDevice{name: "opencl", dev: d, ctx: d.Context(), queue: d.CommandQueue(),
			svm: d.UsesSVM(), devType: abi.DeviceOpenCL})
	})
	return c, devs
}

func (d cDevice) on(s spec) spec {
	s.devType, s.svm = d.devType, d.svm
	if d.devType != abi.DeviceCPU {
		s.devID = int32(d.dev.ID())
	}
	return s
}

// TestCProducer: tensors made by C, on the CPU and in OpenCL buffers,
// imported, read back and released; the C deleter runs exactly once.
func TestCProducer(t *testing.T) {
	c, devs := cDevices(t)
	for _, d := range devs {
		t.Run(d.name, func(t *testing.T) {
			forVersions(t, func(t *testing.T, versioned bool) {
				for _, pc := range producerCases() {
					if pc.s.flags != 0 && !versioned {
						continue
					}
					t.Run(pc.name, func(t *testing.T) {
						s := d.on(pc.s)
						s.versioned = versioned
						calls, live := c.calls(), c.live()
						p := c.produce(s.params(t), d.ctx, d.queue)
						if p == 0 {
							t.Fatal("dl_produce failed")
						}
						var a *cdevice.DeviceArray
						var err error
						if versioned {
							a, err = dlpack.Import(context.Background(), dlpack.ManagedTensorVersionedAt(p), pc.opts...)
						} else {
							a, err = dlpack.ImportLegacy(context.Background(), dlpack.ManagedTensorAt(p), pc.opts...)
						}
						must(t, err)
						if a.DeviceType != abi.DeviceType(d.devType) || a.Device != d.dev {
							t.Errorf("device %v %v, want %v", a.DeviceType, a.Device, d.dev)
						}
						leaf, _ := leafOf(a)
						if pc.zeroCopy && s.numel() > 0 {
							// The data pointer is the producer's (a cl_mem handle stays one).
							tensorData := dlpack.ManagedTensorAt(p).DLTensor.Data
							if versioned {
								tensorData = dlpack.ManagedTensorVersionedAt(p).DLTensor.Data
							}
							if uintptr(leaf.Buffers[1].Ptr) != tensorData || leaf.Offset*int64(s.dtype.Bits/8) != int64(s.offset) {
								t.Fatalf("not zero-copy: %#x offset %d", leaf.Buffers[1].Ptr, leaf.Offset)
							}
							if c.calls() != calls {
								t.Fatal("deleter called while the array is alive")
							}
						} else if !pc.zeroCopy && c.calls() != calls+1 {
							t.Fatalf("a copy must give the tensor back at once: %d calls", c.calls()-calls)
						}
						if pc.s.flags&dlpack.FlagReadOnly != 0 {
							checkReadOnlyReexport(t, a)
						}
						var typ arrow.DataType
						if pc.name == "bool-to-boolean" {
							typ = arrow.FixedWidthTypes.Boolean
						}
						got := toHost(t, a)
						if c.calls() != calls+1 || c.live() != live || c.doubles() != 0 {
							t.Fatalf("deleter calls %d, live %d, double deletes %d: want 1, %d, 0",
								c.calls()-calls, c.live(), c.doubles(), live)
						}
						wantEqual(t, got, expectedImport(t, s, typ))
						c.collect()
					})
				}
			})
		})
	}
}

// checkReadOnlyReexport: an array over a read-only tensor exports
// read-only, WithWritable or not; so does every node under it (a child of
// a nested tensor's list is the same memory).
func checkReadOnlyReexport(t *testing.T, a *cdevice.DeviceArray) {
	t.Helper()
	for ; a != nil; a = firstChild(a) {
		mt, err := dlpack.Export(context.Background(), a, dlpack.WithWritable())
		if err != nil && errors.Is(err, cdevice.ErrUnsupported) {
			continue // a node that is no tensor of its own
		}
		must(t, err)
		flags := mt.Flags
		mt.Delete()
		if flags&dlpack.FlagReadOnly == 0 {
			t.Fatalf("re-export of a read-only tensor's %s node has flags %#x", a.Type, flags)
		}
	}
}

func firstChild(a *cdevice.DeviceArray) *cdevice.DeviceArray {
	if len(a.Children) == 0 {
		return nil
	}
	return a.Children[0]
}

// A consumer case: an array Go exports and what C must find in the tensor.
type consCase struct {
	name   string
	arr    func(t *testing.T) arrow.Array
	opts   []dlpack.ExportOption
	shape  []int64
	strid  []int64
	expect func(t *testing.T, a arrow.Array) []byte // logical row-major elements
	copied bool
}

func consumerCases() []consCase {
	elems := func(a arrow.Array) []byte { return fillNullsBytes(a, nil) }
	var cases []consCase
	for i, dt := range numericTypes {
		cases = append(cases, consCase{
			name: dt.String(),
			arr: func(t *testing.T) arrow.Array {
				d := dtypeFor(t, dt)
				return slice(t, fromBytes(t, dt, 300, valueBytes(d, int64(i*11-50), 300)), 13, 290)
			},
			shape: []int64{277}, strid: []int64{1},
			expect: func(t *testing.T, a arrow.Array) []byte { return elems(a) },
		})
	}
	perm := []int64{1, 2, 0}
	cases = append(cases,
		consCase{name: "fixed_size_list", shape: []int64{19, 4}, strid: []int64{4, 1},
			arr: func(t *testing.T) arrow.Array {
				f := arrow.PrimitiveTypes.Float32
				return slice(t, fromBytes(t, arrow.FixedSizeListOf(4, f), 20, valueBytes(dtypeFor(t, f), 1, 80)), 1, 20)
			},
			expect: func(t *testing.T, a arrow.Array) []byte { return elems(a) }},
		consCase{name: "tensor-permuted", shape: []int64{6, 3, 4, 2}, strid: []int64{24, 4, 1, 12},
			arr: func(t *testing.T) arrow.Array {
				i := arrow.PrimitiveTypes.Int64
				tt, err := tensor.NewFixedShapeType(i, []int64{2, 3, 4}, perm, nil)
				must(t, err)
				return fromBytes(t, tt, 6, valueBytes(dtypeFor(t, i), 0, 144))
			},
			expect: func(t *testing.T, a arrow.Array) []byte {
				return permuted(elems(a), 8, 6, []int64{2, 3, 4}, perm)
			}},
		consCase{name: "bool", shape: []int64{99}, strid: []int64{1}, copied: true,
			arr: func(t *testing.T) arrow.Array {
				return slice(t, fromBytes(t, arrow.FixedWidthTypes.Boolean, 100, valueBytes(dtBool, 0, 100)), 1, 100)
			},
			expect: func(t *testing.T, a arrow.Array) []byte { return valueBytes(dtBool, 1, 99) }},
		consCase{name: "null-fill", shape: []int64{50}, strid: []int64{1}, copied: true,
			opts: []dlpack.ExportOption{dlpack.WithNullFill(-2)},
			arr: func(t *testing.T) arrow.Array {
				return withNulls(t, fromBytes(t, arrow.PrimitiveTypes.Int16, 50, valueBytes(dtI16, 0, 50)), 4)
			},
			expect: func(t *testing.T, a arrow.Array) []byte { return fillNullsBytes(a, valueBytes(dtI16, -2, 1)) }},
	)
	return cases
}

func fillNullsBytes(a arrow.Array, fill []byte) []byte { return filledElems(a, fill) }

// TestCConsumer: C takes tensors Go exported (CPU, OpenCL, and the CUDA
// double, whose memory is host memory), checks every field and the values,
// and calls the deleter through C.
func TestCConsumer(t *testing.T) {
	c, devs := cDevices(t)
	t.Run("cuda-probe", func(t *testing.T) {
		if d, fake := cudaDevice(t); fake != nil {
			devs = append(devs, cDevice{name: "cuda", dev: d, devType: abi.DeviceCUDA})
		}
	})
	for _, d := range devs {
		t.Run(d.name, func(t *testing.T) {
			// The checker itself: a wrong value or flag is seen.
			t.Run("checker", func(t *testing.T) {
				vals := valueBytes(dtI32, 0, 16)
				mt, err := dlpack.Export(context.Background(), onDevice(t, fromBytes(t, arrow.PrimitiveTypes.Int32, 16, vals), d.dev))
				must(t, err)
				defer mt.Delete()
				s := d.on(spec{versioned: true, dtype: dtI32, shape: []int64{16}, strides: []int64{1},
					flags: dlpack.FlagReadOnly, noDelete: true})
				if rc := c.consume(s.params(t), mt.Addr(), cbytes(t, vals), d.queue); rc != 0 {
					t.Fatalf("C consumer: %d", rc)
				}
				bad := append([]byte(nil), vals...)
				bad[60]++
				if rc := c.consume(s.params(t), mt.Addr(), cbytes(t, bad), d.queue); rc != 9 {
					t.Fatalf("C consumer on a wrong value: %d, want 9", rc)
				}
				s.flags = 0
				if rc := c.consume(s.params(t), mt.Addr(), cbytes(t, vals), d.queue); rc != 8 {
					t.Fatalf("C consumer on wrong flags: %d, want 8", rc)
				}
			})
			forVersions(t, func(t *testing.T, versioned bool) {
				for _, cc := range consumerCases() {
					t.Run(cc.name, func(t *testing.T) {
						a := cc.arr(t)
						da := onDevice(t, a, d.dev)
						var p uintptr
						var dtype dlpack.DataType
						var off uint64
						if versioned {
							mt, err := dlpack.Export(context.Background(), da, cc.opts...)
							must(t, err)
							p, dtype, off = mt.Addr(), mt.DLTensor.Dtype, mt.DLTensor.ByteOffset
						} else {
							mt, err := dlpack.ExportLegacy(context.Background(), da, cc.opts...)
							must(t, err)
							p, dtype, off = mt.Addr(), mt.DLTensor.Dtype, mt.DLTensor.ByteOffset
						}
						if !cc.copied {
							_, base := leafOf(da)
							if off != uint64(base)*uint64(dtype.Bits/8) {
								t.Fatalf("byte_offset %d for element %d", off, base)
							}
						}
						flags := dlpack.FlagReadOnly
						if cc.copied {
							flags = dlpack.FlagIsCopied
						}
						s := d.on(spec{versioned: versioned, dtype: dtype, shape: cc.shape, strides: cc.strid,
							offset: off, flags: flags})
						before := stats()
						exp := cc.expect(t, a)
						if want := dtypeFor(t, elemType(a.DataType())); want != dtype {
							t.Fatalf("dtype %v, want %v", dtype, want)
						}
						if rc := int32(c.consume(s.params(t), p, cbytes(t, append(exp, 0)), d.queue)); rc != 0 {
							t.Fatalf("C consumer: %d (see dl_consume)", rc)
						}
						if st := stats(); st.Exports != before.Exports-1 || st.DeleterCalls != before.DeleterCalls+1 {
							t.Fatalf("after C's deleter call: %+v, before %+v", st, before)
						}
					})
				}
			})
		})
	}
}

func elemType(dt arrow.DataType) arrow.DataType {
	for {
		switch t := dt.(type) {
		case arrow.ExtensionType:
			if t.ExtensionName() == "arrow.bool8" {
				return t
			}
			dt = t.StorageType()
		case *arrow.FixedSizeListType:
			dt = t.Elem()
		default:
			return dt
		}
	}
}

// TestCDoubleDelete: a C consumer calling our deleter twice; the second
// call is counted and ignored, and reads nothing of the freed struct.
func TestCDoubleDelete(t *testing.T) {
	c := loadC(t)
	a := fromBytes(t, arrow.PrimitiveTypes.Int32, 10, valueBytes(dtI32, 0, 10))
	da := onDevice(t, a, cpuDev)
	for _, versioned := range []int{1, 0} {
		t.Run(fmt.Sprint("versioned=", versioned), func(t *testing.T) {
			var p uintptr
			if versioned == 1 {
				mt, err := dlpack.Export(context.Background(), da)
				must(t, err)
				p = mt.Addr()
			} else {
				mt, err := dlpack.ExportLegacy(context.Background(), da)
				must(t, err)
				p = mt.Addr()
			}
			before, live := stats(), cdevice.LiveLeaks()
			c.del(p, uintptr(versioned))
			c.del(p, uintptr(versioned))
			s := stats()
			if s.DeleterCalls != before.DeleterCalls+2 || s.StrayDeletes != before.StrayDeletes+1 ||
				s.Exports != before.Exports-1 {
				t.Fatalf("%+v, before %+v", s, before)
			}
			if l := cdevice.LiveLeaks(); l.DeviceArrays != live.DeviceArrays || l.CAllocations != live.CAllocations-1 {
				t.Fatalf("leaks %v, before %v", l, live)
			}
		})
	}
}
