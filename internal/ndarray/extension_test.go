package ndarray_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/internal/ndarray"
	"github.com/purearrow/cdevice/tensor"
)

// extensionCases are arrays, in array.FromJSON's form, of every extension
// type the library defines: this package's arrow.bool8 (what DLPack bool
// tensors import as) and tensor's arrow.fixed_shape_tensor, some of bool8.
func extensionCases(t *testing.T) []struct {
	name string
	dt   arrow.ExtensionType
	json string
} {
	tensorOf := func(value arrow.DataType, shape, perm []int64, names []string) arrow.ExtensionType {
		tt, err := tensor.NewFixedShapeType(value, shape, perm, names)
		must(t, err)
		return tt
	}
	return []struct {
		name string
		dt   arrow.ExtensionType
		json string
	}{
		{"bool8", ndarray.Bool8(), `[true, null, false, true, true, null, false]`},
		{"tensor int32 2x3 permuted", tensorOf(arrow.PrimitiveTypes.Int32, []int64{2, 3}, []int64{1, 0}, []string{"h", "w"}),
			`[[1,2,3,4,5,6], null, [0,-1,-2,-3,-4,-5], [7,null,9,10,11,12], null]`},
		{"tensor float64 0-d", tensorOf(arrow.PrimitiveTypes.Float64, nil, nil, nil), `[[1.5], [2.25], null, [-3]]`},
		{"tensor bool8 2", tensorOf(ndarray.Bool8(), []int64{2}, nil, nil), `[[true,false], null, [false,null], [true,true]]`},
	}
}

// Every arrow.Array method works on every extension array the library
// defines, whole and sliced (ExtensionArrayBase's ValueStr panics), and
// ValueStr and MarshalJSON parse back into equal arrays through the type's
// builder (array.NewBuilder, array.FromJSON).
func TestExtensionArrays(t *testing.T) {
	if reg := arrow.GetExtensionType(ndarray.Bool8Name); reg != nil {
		t.Logf("%s registered by another package (%T): that one is tested", ndarray.Bool8Name, reg)
	}
	for _, c := range extensionCases(t) {
		t.Run(c.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			arr, _, err := array.FromJSON(mem, c.dt, strings.NewReader(c.json))
			must(t, err)
			defer arr.Release()
			if want := c.dt.ArrayType(); reflect.TypeOf(arr).Elem() != want {
				t.Errorf("FromJSON made a %T, want a %s", arr, want)
			}
			checkArray(t, mem, c.dt, arr)
			n := arr.Len()
			for _, s := range [][2]int{{1, n - 1}, {2, 3}, {n, n}} {
				t.Run(fmt.Sprintf("slice %d:%d", s[0], s[1]), func(t *testing.T) {
					sl := array.NewSlice(arr, int64(s[0]), int64(s[1]))
					defer sl.Release()
					checkArray(t, mem, c.dt, sl)
				})
			}
		})
	}
}

func checkArray(t *testing.T, mem memory.Allocator, dt arrow.ExtensionType, arr arrow.Array) {
	t.Helper()
	if !arrow.TypeEqual(arr.DataType(), dt) || arr.DataType().ID() != arrow.EXTENSION {
		t.Errorf("DataType %s, want %s", arr.DataType(), dt)
	}
	nn := arr.NullN() // a slice's Data has its count once the array counted
	if d := arr.Data(); d.Len() != arr.Len() || !arrow.TypeEqual(d.DataType(), dt) || d.NullN() != nn {
		t.Errorf("Data: len %d type %s nulls %d; array: %d %s %d", d.Len(), d.DataType(), d.NullN(), arr.Len(), arr.DataType(), nn)
	}
	nulls := 0
	strs := make([]string, arr.Len())
	for i := range arr.Len() {
		if arr.IsNull(i) == arr.IsValid(i) {
			t.Errorf("%d: IsNull %v, IsValid %v", i, arr.IsNull(i), arr.IsValid(i))
		}
		strs[i] = arr.ValueStr(i)
		if arr.IsNull(i) {
			nulls++
			if strs[i] != array.NullValueStr {
				t.Errorf("ValueStr(%d) of a null = %q", i, strs[i])
			}
		} else if strs[i] == "" || strs[i] == array.NullValueStr {
			t.Errorf("ValueStr(%d) = %q", i, strs[i])
		}
	}
	if nulls != arr.NullN() {
		t.Errorf("NullN %d, %d elements null", arr.NullN(), nulls)
	}
	if s := arr.String(); !strings.Contains(s, "[") || nulls > 0 && !strings.Contains(s, array.NullValueStr) {
		t.Errorf("String() = %q, values %q", s, strs)
	}

	// JSON: one element a value, null for nulls, GetOneForMarshal the same.
	js, err := arr.MarshalJSON()
	must(t, err)
	var elems []json.RawMessage
	if err := json.Unmarshal(js, &elems); err != nil || len(elems) != arr.Len() {
		t.Fatalf("MarshalJSON = %s: %v, %d elements", js, err, len(elems))
	}
	for i, e := range elems {
		one, err := json.Marshal(arr.GetOneForMarshal(i))
		must(t, err)
		if compact(t, e) != compact(t, one) || (string(e) == "null") != arr.IsNull(i) {
			t.Errorf("%d: MarshalJSON gives %s, GetOneForMarshal %s, null %v", i, e, one, arr.IsNull(i))
		}
	}

	// Back through the type's own builder: from JSON, and from ValueStr.
	back, _, err := array.FromJSON(mem, dt, strings.NewReader(string(js)))
	if err != nil {
		t.Fatalf("FromJSON(%s): %v", js, err)
	}
	if !array.Equal(arr, back) {
		t.Errorf("FromJSON(MarshalJSON): got %v, want %v", back, arr)
	}
	back.Release()
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for i, s := range strs {
		if err := b.AppendValueFromString(s); err != nil {
			t.Fatalf("AppendValueFromString(ValueStr(%d) = %q): %v", i, s, err)
		}
	}
	back = b.NewArray()
	if !array.Equal(arr, back) || !arrow.TypeEqual(back.DataType(), dt) {
		t.Errorf("from ValueStr: got %v (%s), want %v", back, back.DataType(), arr)
	}
	back.Release()

	// Retain and Release balance (the checked allocator sees the rest).
	arr.Retain()
	arr.Release()
	_ = arr.ValueStr(0 % max(arr.Len(), 1))
}

func compact(t *testing.T, js []byte) string {
	var v any
	must(t, json.Unmarshal(js, &v))
	out, err := json.Marshal(v)
	must(t, err)
	return string(out)
}
