package cdevice_test

// Hostile C producers and consumers (testdata/c/hostile.c): each breaks the
// C Data Interface in a way real libraries do, and the importer must refuse
// it with a sentinel error (or, for a consumer's double release, do
// nothing and count it), never crash, and leave nothing held on either
// side.

import (
	"errors"
	"fmt"
	"testing"

	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ctest"
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
		if l := cdevice.LiveLeaks(); l.Exports != before.Exports || l.Imports != before.Imports || l.CallbackPanics != before.CallbackPanics {
			t.Errorf("held after the test: %s (before: %s)", l, before)
		}
	})
}

// hxCase makes a hostile struct pair with C function name and mode.
func hxCase(t *testing.T, name string, mode int) (*abi.Schema, *abi.Array) {
	t.Helper()
	s, a := newC[abi.Schema](t), newC[abi.Array](t)
	if rc := int32(hxFn(t, name)(uintptr(mode), addr(s), addr(a))); rc != 0 {
		t.Fatalf("%s(%d) = %d", name, mode, rc)
	}
	return s, a
}

// hxRefused imports a and s (as an array, or a record batch) and wants an
// error wrapping want, and both structs released.
func hxRefused(t *testing.T, s *abi.Schema, a *abi.Array, batch bool, want ...error) {
	t.Helper()
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
				t.Errorf("import panicked: %v", p)
			}
		}()
		if batch {
			var rb interface{ Release() }
			if rb, err = cdevice.ImportRecordBatch(a, s); err == nil {
				rb.Release()
			}
		} else {
			var arr interface{ Release() }
			if arr, err = cdevice.ImportArray(a, s); err == nil {
				arr.Release()
			}
		}
	}()
	ok := false
	for _, w := range want {
		ok = ok || errors.Is(err, w)
	}
	if !ok {
		t.Errorf("import: %v, want one of %v", err, want)
	}
	if !s.Released() || !a.Released() {
		t.Errorf("after the import: schema released %v, array released %v", s.Released(), a.Released())
		releaseArrayC(a)
		releaseSchemaC(s)
	}
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
			hxRefused(t, s, a, false, c.want)
		})
	}
	t.Run("device_array_release_null", func(t *testing.T) {
		hxNoLeaks(t)
		s, a := hxCase(t, "hx_released_array", 0)
		da := newC[abi.DeviceArray](t)
		da.Array, da.DeviceType, da.DeviceID = *a, abi.DeviceCPU, -1
		if got, err := cdevice.ImportDeviceArray(da, s); !errors.Is(err, cdevice.ErrReleased) {
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
		if _, err := cdevice.ImportDeviceArray(nil, nil); !errors.Is(err, cdevice.ErrInvalid) {
			t.Errorf("ImportDeviceArray(nil, nil): %v, want ErrInvalid", err)
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
				hxRefused(t, s, a, batch, cdevice.ErrInvalid)
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
				hxRefused(t, s, a, batch, cdevice.ErrInvalid)
			})
		}
	}
	// The record batch root also refused as a plain struct array.
	t.Run("record_batch_root_claims_3_as_array", func(t *testing.T) {
		hxNoLeaks(t)
		s, a := hxCase(t, "hx_lying_buffers", 6)
		hxRefused(t, s, a, false, cdevice.ErrInvalid)
	})
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
		exports, before := cdevice.LiveLeaks().Exports, doubles()
		a := newC[abi.Array](t)
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
		exports, before := cdevice.LiveLeaks().Exports, doubles()
		s := newC[abi.Schema](t)
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
		exports, before := cdevice.LiveLeaks().Exports, doubles()
		da := newC[abi.DeviceArray](t)
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
		exports, before := cdevice.LiveLeaks().Exports, doubles()
		a := newC[abi.Array](t)
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
