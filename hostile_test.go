package cdevice_test

// Hostile C producers and consumers (testdata/c/hostile.c): each breaks the
// C Data Interface in a way real libraries do, and the importer must refuse
// it with a sentinel error (or, for a consumer's double release, do
// nothing and count it), never crash, and leave nothing held on either
// side.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

func hxFn(t testing.TB, name string) func(args ...uintptr) uintptr {
	t.Helper()
	return ctest.Func(t, ctest.Library(t, "hostile"), name)
}

// hxNoLeaks checks, when the test ends, that every struct hostile.c made
// was released and that nothing exported or imported is held.
func hxNoLeaks(t *testing.T) {
	t.Helper()
	live := hxFn(t, "hx_live")
	base := int64(live())
	before := cdevice.LiveLeaks()
	t.Cleanup(func() {
		hxFn(t, "hx_free_orphans")()
		if n := int64(live()); n != base {
			t.Errorf("%d structs made by hostile.c left unreleased", n-base)
		}
		if l := cdevice.LiveLeaks(); l.Exports() != before.Exports() || l.Imports() != before.Imports() || l.CallbackPanics != before.CallbackPanics {
			t.Errorf("held after the test: %s (before: %s)", l, before)
		}
	})
}

// hxCase makes a hostile struct pair with C function name and mode.
func hxCase(t *testing.T, name string, mode int) (*abi.Schema, *abi.Array) {
	t.Helper()
	s, a := testsupport.OffHeap[abi.Schema](t), testsupport.OffHeap[abi.Array](t)
	if rc := int32(hxFn(t, name)(uintptr(mode), addr(s), addr(a))); rc != 0 {
		t.Fatalf("%s(%d) = %d", name, mode, rc)
	}
	return s, a
}

// How a hostile pair is imported: as an array, as a record batch, or as a
// CPU ArrowDeviceArray through the device walker (ImportDeviceArrayOnDevice,
// then ToHost).
type hxHow int

const (
	hxArray hxHow = iota
	hxBatch
	hxDevice
)

func (h hxHow) String() string { return [...]string{"array", "batch", "device"}[h] }

// hxTry imports a and s as how says, with opts, and releases what it got.
// A panic is reported and returned as an error. Afterwards both structs
// must be released (the importer owned them), whatever the outcome.
func hxTry(t *testing.T, s *abi.Schema, a *abi.Array, how hxHow, opts ...cdevice.ImportOption) (err error) {
	t.Helper()
	moved := a
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
				t.Errorf("import panicked: %v", p)
			}
		}()
		var got interface{ Release() }
		switch how {
		case hxBatch:
			got, err = cdevice.ImportRecordBatch(a, s, opts...)
		case hxDevice:
			da := testsupport.OffHeap[abi.DeviceArray](t)
			da.Array, da.DeviceType, da.DeviceID = *a, abi.DeviceCPU, -1
			a.Release = 0 // moved into da
			moved = &da.Array
			var d *cdevice.DeviceArray
			if len(opts) > 0 {
				t.Fatal("hxTry: the device walker takes no import options")
			}
			if d, err = cdevice.ImportDeviceArrayOnDevice(context.Background(), da, s); err == nil {
				// The walker reads only what sizes need; reading the
				// array (here: to host, through the importer) checks
				// the rest.
				defer d.Release()
				got, err = d.ToHost(context.Background())
			}
		default:
			got, err = cdevice.ImportArray(a, s, opts...)
		}
		if err == nil {
			got.Release()
		}
	}()
	if !s.Released() || !moved.Released() {
		t.Errorf("after the import: schema released %v, array released %v", s.Released(), moved.Released())
		releaseArrayC(moved)
		releaseSchemaC(s)
	}
	return err
}

// hxRefused imports a and s as how says and wants an error wrapping one of
// want, and both structs released.
func hxRefused(t *testing.T, s *abi.Schema, a *abi.Array, how hxHow, want ...error) {
	t.Helper()
	err := hxTry(t, s, a, how)
	ok := false
	for _, w := range want {
		ok = ok || errors.Is(err, w)
	}
	if !ok {
		t.Errorf("import: %v, want one of %v", err, want)
	}
}

// hxBatchIf is hxBatch when batch, else hxArray.
func hxBatchIf(batch bool) hxHow {
	if batch {
		return hxBatch
	}
	return hxArray
}

// TestHostileReleasedStructs: a struct whose release is NULL is released
// by definition (never given a release, or moved out by someone else): the
// importer refuses it with ErrReleased (ErrInvalid for a child) without
// reading it, and still releases the other struct of the pair.
func TestHostileReleasedStructs(t *testing.T) {
	cases := []struct {
		name string
		mode int
		want error
	}{
		{"array_release_null", 0, cdevice.ErrReleased},
		{"child_release_null", 1, cdevice.ErrInvalid},
		{"schema_release_null", 2, cdevice.ErrReleased},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hxNoLeaks(t)
			s, a := hxCase(t, "hx_released_array", c.mode)
			hxRefused(t, s, a, hxArray, c.want)
		})
	}
	t.Run("device_array_release_null", func(t *testing.T) {
		hxNoLeaks(t)
		s, a := hxCase(t, "hx_released_array", 0)
		da := testsupport.OffHeap[abi.DeviceArray](t)
		da.Array, da.DeviceType, da.DeviceID = *a, abi.DeviceCPU, -1
		if got, err := cdevice.ImportDeviceArray(context.Background(), da, s); !errors.Is(err, cdevice.ErrReleased) {
			if err == nil {
				got.Release()
			}
			t.Errorf("ImportDeviceArray: %v, want ErrReleased", err)
		}
		if !s.Released() {
			t.Error("the schema was not released")
			releaseSchemaC(s)
		}
	})
	t.Run("nil_structs", func(t *testing.T) {
		if _, err := cdevice.ImportArray(nil, nil); !errors.Is(err, cdevice.ErrInvalid) {
			t.Errorf("ImportArray(nil, nil): %v, want ErrInvalid", err)
		}
		if _, err := cdevice.ImportSchema(nil); !errors.Is(err, cdevice.ErrInvalid) {
			t.Errorf("ImportSchema(nil): %v, want ErrInvalid", err)
		}
		if _, err := cdevice.ImportDeviceArray(context.Background(), nil, nil); !errors.Is(err, cdevice.ErrInvalid) {
			t.Errorf("ImportDeviceArray(context.Background(), nil, nil): %v, want ErrInvalid", err)
		}
	})
	t.Run("nil_type", func(t *testing.T) {
		hxNoLeaks(t)
		s, a := hxCase(t, "hx_lying_buffers", 1) // any live array will do
		releaseSchemaC(s)
		if _, err := cdevice.ImportArrayWithType(a, nil); !errors.Is(err, cdevice.ErrInvalid) {
			t.Errorf("ImportArrayWithType(a, nil): %v, want ErrInvalid", err)
		}
		if !a.Released() {
			t.Error("the array was not released")
			releaseArrayC(a)
		}
	})
}

// TestHostileNullChildren: NULL children pointers (the array of them, or
// one entry) and a negative n_children, in the array or the schema.
func TestHostileNullChildren(t *testing.T) {
	for mode, name := range []string{"array_children_null", "array_child_1_null", "schema_children_null", "schema_child_0_null", "array_n_children_negative"} {
		for _, batch := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/batch=%v", name, batch), func(t *testing.T) {
				hxNoLeaks(t)
				s, a := hxCase(t, "hx_null_children", mode)
				hxRefused(t, s, a, hxBatchIf(batch), cdevice.ErrInvalid)
			})
		}
	}
}

// TestHostileLyingBufferCount: n_buffers says more or fewer buffers than
// the type has; the extra slots hold pointers that fault when read, so an
// importer that trusts the count crashes here.
func TestHostileLyingBufferCount(t *testing.T) {
	cases := []string{"int32_claims_5", "int32_claims_1", "int32_claims_0_buffers_null", "int32_claims_int64_max",
		"utf8_claims_2", "utf8_claims_4", "record_batch_root_claims_3", "record_batch_column_claims_3", "int32_claims_minus_1"}
	for mode, name := range cases {
		for _, batch := range []bool{false, true} {
			if batch != (mode >= 6) {
				continue
			}
			t.Run(name, func(t *testing.T) {
				hxNoLeaks(t)
				s, a := hxCase(t, "hx_lying_buffers", mode)
				hxRefused(t, s, a, hxBatchIf(batch), cdevice.ErrInvalid)
			})
		}
	}
	// The record batch root also refused as a plain struct array.
	t.Run("record_batch_root_claims_3_as_array", func(t *testing.T) {
		hxNoLeaks(t)
		s, a := hxCase(t, "hx_lying_buffers", 6)
		hxRefused(t, s, a, hxArray, cdevice.ErrInvalid)
	})
}

// TestHostileLyingChildren: for every format family, a schema or an array
// whose n_children (or n_buffers, or dictionary) says more than the format
// or type allows, over a children array that holds the real children and
// then a pointer that faults when read. The count must be checked against
// the format or type before any child is followed: ErrInvalid, no crash,
// through the host importer and (array lies) the device walker.
func TestHostileLyingChildren(t *testing.T) {
	cases := []struct {
		name string
		want string // a fragment of the error: the check that fired
	}{
		{"schema_int32", `format "i" allows 0 children, n_children is 1000`},
		{"schema_utf8", `format "u" allows 0 children`},
		{"schema_list", `format "+l" allows 1 children`},
		{"schema_map", `format "+m" allows 1 children`},
		{"schema_fixed_size_list", `format "+w:3" allows 1 children`},
		{"schema_run_end_encoded", `format "+r" allows 2 children`},
		{"schema_sparse_union", `format "+us:5,7" allows 2 children`},
		{"schema_dense_union", `format "+ud:5,7" allows 2 children`},
		{"schema_struct_child", `format "i" allows 0 children`},
		{"schema_dictionary_values", `format "u" allows 0 children`},
		{"schema_children_null", "children is NULL with n_children 1000"},
		{"schema_dictionary_on_utf8", `format "u" has a dictionary but is not an integer index type`},
		{"array_int32", "has 1000 children, want 0"},
		{"array_utf8", "has 1000 children, want 0"},
		{"array_list", "has 1000 children, want 1"},
		{"array_struct", "has 1000 children, want 2"},
		{"array_sparse_union", "has 1000 children, want 2"},
		{"array_dense_union", "has 1000 children, want 2"},
		{"array_run_end_encoded", "has 1000 children, want 2"},
		{"array_fixed_size_list", "has 1000 children, want 1"},
		{"array_dictionary_values", "has 1000 children, want 0"},
		{"record_batch_root", "1000 children"},
		{"array_int32_with_dictionary", "dictionary"},
		{"array_list_5_buffers", "has 5 buffers, want 2"},
		{"array_struct_4_buffers", "has 4 buffers, want 1"},
		{"array_sparse_union_4_buffers", "has 4 buffers, want 1"},
		{"array_run_end_encoded_2_buffers", "has 2 buffers, want 0"},
		{"array_null_1_buffer", "has 1 buffers, want 0"},
	}
	if n := len(cases); int32(hxFn(t, "hx_lying_children")(uintptr(n), addr(testsupport.OffHeap[abi.Schema](t)), addr(testsupport.OffHeap[abi.Array](t)))) != -1 {
		t.Fatalf("hx_lying_children has a mode %d that this test does not know", n)
	}
	for mode, c := range cases {
		hows := []hxHow{hxArray}
		if strings.HasPrefix(c.name, "array_") || c.name == "record_batch_root" {
			hows = append(hows, hxDevice)
		}
		if c.name == "record_batch_root" {
			hows = append(hows, hxBatch)
		}
		for _, how := range hows {
			t.Run(c.name+"/"+how.String(), func(t *testing.T) {
				hxNoLeaks(t)
				s, a := hxCase(t, "hx_lying_children", mode)
				err := hxTry(t, s, a, how)
				if !errors.Is(err, cdevice.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
					t.Errorf("import: %v, want ErrInvalid mentioning %q", err, c.want)
				}
			})
		}
	}
}

// TestHostileCorruptValues: arrays from C whose values break the rules.
// Structural lies (sizes that follow from values: a last offset of 2^62
// over 4 bytes, a variadic buffer size of 2^62, an offset that wraps
// negative) are refused by every import, before anything reads that far.
// The rest (decimals past their precision, dense union offsets going back
// within a child, list view and string view positions past what they
// index) only full validation reads, and it refuses them.
func TestHostileCorruptValues(t *testing.T) {
	cases := []struct {
		name       string
		structural bool
		want       string
	}{
		{"decimal32_past_precision", false, "value at slot 1 does not fit precision 2"},
		{"decimal64_past_precision", false, "value at slot 1 does not fit precision 2"},
		{"decimal128_past_precision", false, "value at slot 1 does not fit precision 2"},
		{"decimal256_past_precision", false, "value at slot 1 does not fit precision 2"},
		{"dense_union_offsets_go_back", false, "offset 0 at slot 2 is before child 0's previous offset 1"},
		{"utf8_last_offset_negative", true, "offsets run from 0 to -2147483648"},
		{"large_utf8_last_offset_2^62", true, "buffer 2 would be 4611686018427387904 bytes"},
		{"binary_last_offset_negative", true, "offsets run from 0 to -2147483648"},
		{"large_binary_last_offset_2^62", true, "buffer 2 would be 4611686018427387904 bytes"},
		{"list_last_offset_int32_max", true, "offsets reach 2147483647, past the child's length 4"},
		{"large_list_last_offset_2^62", true, "offsets reach 4611686018427387904"},
		{"large_utf8_sliced_offsets_2^62", true, "buffer 2 would be 4611686018427387906 bytes"},
		{"large_list_view_offset_2^62", false, "slot 0 has offset 4611686018427387904 and size 1, outside the child of length 3"},
		{"utf8_view_variadic_size_2^62", true, "buffer 2 would be 4611686018427387904 bytes"},
		{"utf8_view_offset_int32_max", false, "past the end of buffer 0 (17 bytes)"},
	}
	if n := len(cases); int32(hxFn(t, "hx_corrupt")(uintptr(n), addr(testsupport.OffHeap[abi.Schema](t)), addr(testsupport.OffHeap[abi.Array](t)))) != -1 {
		t.Fatalf("hx_corrupt has a mode %d that this test does not know", n)
	}
	check := func(t *testing.T, err error, want string) {
		t.Helper()
		if !errors.Is(err, cdevice.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("import: %v, want ErrInvalid mentioning %q", err, want)
		}
	}
	for mode, c := range cases {
		t.Run(c.name+"/default", func(t *testing.T) {
			hxNoLeaks(t)
			s, a := hxCase(t, "hx_corrupt", mode)
			err := hxTry(t, s, a, hxArray)
			if c.structural {
				check(t, err, c.want)
			} else if err != nil {
				t.Errorf("import without full validation: %v (its checks do not read values)", err)
			}
		})
		t.Run(c.name+"/full", func(t *testing.T) {
			hxNoLeaks(t)
			s, a := hxCase(t, "hx_corrupt", mode)
			check(t, hxTry(t, s, a, hxArray, cdevice.WithFullValidation()), c.want)
		})
		if c.structural {
			t.Run(c.name+"/device", func(t *testing.T) {
				hxNoLeaks(t)
				s, a := hxCase(t, "hx_corrupt", mode)
				check(t, hxTry(t, s, a, hxDevice), c.want)
			})
		}
	}
}

// TestHostileNullBuffers: a buffer the rows need (offsets, data, views,
// list view sizes, union type ids and offsets) is NULL: refused by every
// import, with or without full validation, where a NULL validity bitmap
// (no nulls) and NULL buffers of an empty array are fine. arrow-go would
// wrap a NULL pointer as an empty buffer and index it when read.
func TestHostileNullBuffers(t *testing.T) {
	names := []string{"empty_utf8", "int32", "bool", "fixed_size_binary", "utf8_offsets", "utf8_data",
		"large_binary_data", "list_view", "large_list_view", "utf8_view", "binary_view",
		"dense_union_offsets", "sparse_union_type_ids", "list_offsets", "empty_utf8_at_offset_2"}
	valid := func(mode int) bool { return mode == 0 || mode == 14 }
	if int32(hxFn(t, "hx_null_buffer")(uintptr(len(names)), addr(testsupport.OffHeap[abi.Schema](t)), addr(testsupport.OffHeap[abi.Array](t)))) != -1 {
		t.Fatalf("hx_null_buffer has a mode %d that this test does not know", len(names))
	}
	for mode, name := range names {
		for _, how := range []hxHow{hxArray, hxDevice} {
			t.Run(fmt.Sprintf("%s/%v", name, how), func(t *testing.T) {
				hxNoLeaks(t)
				s, a := hxCase(t, "hx_null_buffer", mode)
				err := hxTry(t, s, a, how)
				switch {
				case valid(mode) && err != nil:
					t.Errorf("an empty array with NULL buffers: %v", err)
				case !valid(mode) && (!errors.Is(err, cdevice.ErrInvalid) || !strings.Contains(err.Error(), "NULL")):
					t.Errorf("import: %v, want ErrInvalid saying which buffer is NULL", err)
				}
			})
		}
	}
}

// TestHostileShortSparseUnion: a sparse union child shorter than the
// union is refused even when no row selects it, at the top and as a
// dictionary's values (which arrow-go makes only when they are asked for,
// so an import that let it through would panic in the caller's code).
func TestHostileShortSparseUnion(t *testing.T) {
	for mode, name := range []string{"union", "dictionary_values"} {
		t.Run(name, func(t *testing.T) {
			hxNoLeaks(t)
			s, a := hxCase(t, "hx_short_sparse", mode)
			if err := hxTry(t, s, a, hxArray); !errors.Is(err, cdevice.ErrInvalid) || !strings.Contains(err.Error(), "shorter than") {
				t.Errorf("import: %v, want ErrInvalid for the short child", err)
			}
		})
	}
}

// TestHostileSharedChildren: one child struct shared by 65,535 entries of
// children is as many nodes; with a long name it is a small input that
// names gigabytes. The import counts what it copies at every visit and
// refuses past maxSchemaBytes (64 MiB), while the same sharing with a short
// name (1 MiB in all) imports.
func TestHostileSharedChildren(t *testing.T) {
	for _, c := range []struct {
		nameLen int
		ok      bool
	}{{16, true}, {4096, false}} {
		t.Run(fmt.Sprint("name_len=", c.nameLen), func(t *testing.T) {
			hxNoLeaks(t)
			s := testsupport.OffHeap[abi.Schema](t)
			hxFn(t, "hx_shared_child")(addr(s), 65535, uintptr(c.nameLen))
			sc, err := cdevice.ImportSchema(s)
			switch {
			case c.ok && (err != nil || sc.NumFields() != 65535):
				t.Errorf("ImportSchema: %v", err)
			case !c.ok && (!errors.Is(err, cdevice.ErrInvalid) || !strings.Contains(err.Error(), "bytes of names")):
				t.Errorf("ImportSchema: %v, want ErrInvalid for the bytes it names", err)
			}
			if !s.Released() {
				t.Error("the schema was not released")
				releaseSchemaC(s)
			}
		})
	}
}

// TestHostileDoubleRelease: a C consumer calls the release of a struct Go
// exported twice (the second time on the struct the first call marked
// released). The second call must do nothing, and is counted in
// LiveLeaks().DoubleReleases (which Zero ignores).
func TestHostileDoubleRelease(t *testing.T) {
	doubles := func() int64 { return cdevice.LiveLeaks().DoubleReleases }
	check := func(t *testing.T, before, wantMore int64, exports int64) {
		t.Helper()
		if got := doubles() - before; got != wantMore {
			t.Errorf("DoubleReleases went up by %d, want %d", got, wantMore)
		}
		checkExportsReleased(t, exports)
		if l := cdevice.LiveLeaks(); l.CallbackPanics != 0 {
			t.Errorf("callback panics: %s", l)
		}
	}
	t.Run("array", func(t *testing.T) {
		hxNoLeaks(t)
		exports, before := cdevice.LiveLeaks().Exports(), doubles()
		a := testsupport.OffHeap[abi.Array](t)
		arr := wantStruct(10)
		err := cdevice.ExportArray(arr, a, nil)
		arr.Release()
		if err != nil {
			t.Fatal(err)
		}
		hxFn(t, "hx_release_array_twice")(addr(a))
		if !a.Released() {
			t.Error("the array is not marked released")
		}
		check(t, before, 1, exports)
	})
	t.Run("schema", func(t *testing.T) {
		hxNoLeaks(t)
		exports, before := cdevice.LiveLeaks().Exports(), doubles()
		s := testsupport.OffHeap[abi.Schema](t)
		rb := wantRecordBatch(1)
		defer rb.Release()
		if err := cdevice.ExportSchema(rb.Schema(), s); err != nil {
			t.Fatal(err)
		}
		hxFn(t, "hx_release_schema_twice")(addr(s))
		check(t, before, 1, exports)
	})
	t.Run("device_array", func(t *testing.T) {
		hxNoLeaks(t)
		exports, before := cdevice.LiveLeaks().Exports(), doubles()
		da := testsupport.OffHeap[abi.DeviceArray](t)
		arr := wantInt32(10, true)
		err := cdevice.ExportDeviceArray(arr, da, nil)
		arr.Release()
		if err != nil {
			t.Fatal(err)
		}
		hxFn(t, "hx_release_device_array_twice")(addr(da))
		check(t, before, 1, exports)
	})
	t.Run("moved_child", func(t *testing.T) {
		hxNoLeaks(t)
		exports, before := cdevice.LiveLeaks().Exports(), doubles()
		a := testsupport.OffHeap[abi.Array](t)
		arr := wantStruct(10)
		err := cdevice.ExportArray(arr, a, nil)
		arr.Release()
		if err != nil {
			t.Fatal(err)
		}
		if n := int64(int(hxFn(t, "hx_release_moved_child_twice")(addr(a), 1))); n != 10 {
			t.Errorf("moved child length %d, want 10", n)
		}
		// the child's second release and the parent's second
		check(t, before, 2, exports)
	})
	t.Run("zero_ignores_it", func(t *testing.T) {
		l := cdevice.Leaks{DoubleReleases: 3}
		if !l.Zero() {
			t.Error("Leaks{DoubleReleases: 3}.Zero() is false")
		}
	})
}
