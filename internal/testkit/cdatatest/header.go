package cdatatest

import (
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// What arrow-go checks on its unexported validateCArrayHeader and
// cimporter, checked here through ImportCArrayWithType on arrays that C
// built and the test then made lie.

// badArray is a C array of the given header with nBuffers buffers, each
// bufSize zeroed bytes (0: NULL).
type badArray struct {
	name     string
	dt       arrow.DataType
	length   int
	nBuffers int
	bufSize  int
	lie      func(a *abi.Array) // then overwrites header fields
	invalid  bool               // the error must wrap arrow.ErrInvalid
}

// reject wants the import of c's array to fail without a panic, and the C
// array to be released once in all (by the import or by ReleaseCArrowArray,
// which arrow-go documents a failed import leaves to the caller).
func (s *suite) reject(t *testing.T, c badArray) {
	t.Helper()
	tk := s.p.token(t)
	a := tk.newArray(t, c.length, 0, 0, c.nBuffers)
	for i := 0; i < c.nBuffers && c.bufSize > 0; i++ {
		tk.buffer(t, addr(a), i, make([]byte, c.bufSize))
	}
	if c.lie != nil {
		c.lie(a)
	}
	var err error
	testsupport.NoPanic(t, "ImportCArrayWithType", func() {
		var got arrow.Array
		if got, err = s.api.ImportCArrayWithType(addr(a), c.dt); err == nil {
			got.Release()
		}
	})
	if c.invalid {
		wantError(t, "ImportCArrayWithType", err, arrow.ErrInvalid)
	} else {
		wantError(t, "ImportCArrayWithType", err)
	}
	if !a.Released() {
		s.api.ReleaseCArrowArray(addr(a))
	}
	wantSettled(t, tk, 1, 1, false)
}

var headerScenarios = []scenario{
	{"ValidateCArrayHeader", func(t *testing.T, s *suite) {
		t.Run("nil array", func(t *testing.T) {
			var err error
			testsupport.NoPanic(t, "ImportCArrayWithType(nil)", func() {
				_, err = s.api.ImportCArrayWithType(0, arrow.PrimitiveTypes.Int32)
			})
			wantError(t, "ImportCArrayWithType(nil)", err)
		})
		for _, c := range []struct {
			name string
			lie  func(a *abi.Array)
		}{
			{"negative length", func(a *abi.Array) { a.Length = -1 }},
			{"negative offset", func(a *abi.Array) { a.Offset = -1 }},
			{"null count below unknown", func(a *abi.Array) { a.NullCount = -2 }},
			{"null count exceeds length", func(a *abi.Array) { a.NullCount = 2 }},
			{"negative buffer count", func(a *abi.Array) { a.NBuffers = -1 }},
			{"negative child count", func(a *abi.Array) { a.NChildren = -1 }},
			{"huge buffer count", func(a *abi.Array) { a.NBuffers = math.MaxInt64 }},
			{"huge child count", func(a *abi.Array) { a.NChildren = math.MaxInt64 }},
			{"missing buffers", func(a *abi.Array) { a.Buffers = 0 }},
			{"missing children", func(a *abi.Array) { a.NChildren = 1 }},
			{"length and offset overflow", func(a *abi.Array) { a.Length, a.Offset = math.MaxInt64, 1 }},
		} {
			// An int32 array of one value, then the lie.
			t.Run(c.name, func(t *testing.T) {
				s.reject(t, badArray{dt: arrow.PrimitiveTypes.Int32, length: 1, nBuffers: 2, bufSize: 8, lie: c.lie})
			})
		}
	}},
	{"CArrayImportValidatesHeaderBeforeNativeSlices", func(t *testing.T, s *suite) {
		huge := func(a *abi.Array) { a.Length = math.MaxInt64/4 + 1 }
		for _, c := range []badArray{
			{name: "missing child pointer", dt: arrow.ListOf(arrow.PrimitiveTypes.Int32), length: 1, nBuffers: 2, bufSize: 8,
				lie: func(a *abi.Array) { a.NChildren = 1 }},
			{name: "fixed width multiplication overflow", dt: arrow.PrimitiveTypes.Int32, nBuffers: 2, lie: huge},
			{name: "offset multiplication overflow", dt: arrow.BinaryTypes.String, nBuffers: 3, lie: huge},
		} {
			t.Run(c.name, func(t *testing.T) { s.reject(t, c) })
		}
	}},
	{"ImportCArrayRejectsInvalidRootHeaderBeforeMove", func(t *testing.T, s *suite) {
		s.reject(t, badArray{dt: arrow.PrimitiveTypes.Int32, lie: func(a *abi.Array) { a.Length = -1 }})
	}},
	{"ImportDictionaryArrayRequiresDictionary", func(t *testing.T, s *suite) {
		s.reject(t, badArray{
			dt:       &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Int32},
			nBuffers: 2,
			invalid:  true,
		})
	}},
	{"ImportBinaryViewRequiresSizeMetadata", func(t *testing.T, s *suite) {
		s.reject(t, badArray{dt: arrow.BinaryTypes.BinaryView, nBuffers: 4, invalid: true})
	}},
	{"ImportNestedArraysRejectsUnexpectedCounts", func(t *testing.T, s *suite) {
		value := []arrow.Field{{Name: "value", Type: arrow.PrimitiveTypes.Int32}}
		for _, c := range []badArray{
			{name: "struct child count", dt: arrow.StructOf(value...), nBuffers: 1},
			{name: "sparse union child count", dt: arrow.SparseUnionOf(value, []arrow.UnionTypeCode{0}), nBuffers: 1},
		} {
			t.Run(c.name, func(t *testing.T) { s.reject(t, c) })
		}
	}},
}
