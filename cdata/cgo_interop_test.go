//go:build cgo

// The scenarios of arrow-go's cdata test suite against arrow-go's cgo
// package itself, and its exported API against ours. CI runs these with
// CGO_ENABLED=1 go test -run Interop ./cdata.

package cdata_test

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/arrio"
	acdata "github.com/apache/arrow-go/v18/arrow/cdata"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/cdata"
	"github.com/purearrow/cdevice/internal/testkit/cdatatest"
)

// arrowGoAPI is arrow-go's cgo cdata package, in the form cdatatest.Run
// takes.
func arrowGoAPI() cdatatest.API {
	sc := acdata.SchemaFromPtr
	arr := acdata.ArrayFromPtr
	st := func(p uintptr) *acdata.CArrowArrayStream {
		return (*acdata.CArrowArrayStream)(unsafe.Pointer(abi.At[abi.ArrayStream](p)))
	}
	h := func(p uintptr) *acdata.CArrowAsyncDeviceStreamHandler {
		return (*acdata.CArrowAsyncDeviceStreamHandler)(unsafe.Pointer(abi.At[abi.AsyncDeviceStreamHandler](p)))
	}
	return cdatatest.API{
		Robust: false,

		ImportCArrowField:  func(p uintptr) (arrow.Field, error) { return acdata.ImportCArrowField(sc(p)) },
		ImportCArrowSchema: func(p uintptr) (*arrow.Schema, error) { return acdata.ImportCArrowSchema(sc(p)) },
		ImportCArrayWithType: func(p uintptr, dt arrow.DataType) (arrow.Array, error) {
			return acdata.ImportCArrayWithType(arr(p), dt)
		},
		ImportCArray: func(a, s uintptr) (arrow.Field, arrow.Array, error) { return acdata.ImportCArray(arr(a), sc(s)) },
		ImportCRecordBatch: func(a, s uintptr) (arrow.RecordBatch, error) {
			return acdata.ImportCRecordBatch(arr(a), sc(s))
		},
		ImportCRecordBatchWithSchema: func(a uintptr, s *arrow.Schema) (arrow.RecordBatch, error) {
			return acdata.ImportCRecordBatchWithSchema(arr(a), s)
		},
		ImportCArrayStream: func(p uintptr, s *arrow.Schema) arrio.Reader {
			//lint:ignore SA1019 the suite covers the deprecated function too
			return acdata.ImportCArrayStream(st(p), s)
		},
		ImportCRecordReader: func(p uintptr, s *arrow.Schema) (arrio.Reader, error) {
			return acdata.ImportCRecordReader(st(p), s)
		},

		ExportArrowSchema:      func(s *arrow.Schema, out uintptr) { acdata.ExportArrowSchema(s, sc(out)) },
		ExportArrowArray:       func(a arrow.Array, out, s uintptr) { acdata.ExportArrowArray(a, arr(out), sc(s)) },
		ExportArrowRecordBatch: func(rb arrow.RecordBatch, out, s uintptr) { acdata.ExportArrowRecordBatch(rb, arr(out), sc(s)) },
		ExportRecordReader:     func(r array.RecordReader, out uintptr) { acdata.ExportRecordReader(r, st(out)) },

		ReleaseCArrowSchema:      func(p uintptr) { acdata.ReleaseCArrowSchema(sc(p)) },
		ReleaseCArrowArray:       func(p uintptr) { acdata.ReleaseCArrowArray(arr(p)) },
		ReleaseCArrowArrayStream: func(p uintptr) { acdata.ReleaseCArrowArrayStream(st(p)) },

		CreateAsyncDeviceStreamHandler: func(ctx context.Context, n uint64, out uintptr) <-chan cdatatest.AsyncRecordBatchStream {
			return cdatatest.FromAsyncStreams(acdata.CreateAsyncDeviceStreamHandler(ctx, n, h(out)))
		},
		ExportAsyncRecordBatchStream: func(s *arrow.Schema, msgs <-chan cdatatest.RecordMessage, out uintptr) error {
			return acdata.ExportAsyncRecordBatchStream(s, cdatatest.ToMessages[acdata.RecordMessage](msgs), h(out))
		},
		AsyncStreamErrorCode: cdatatest.AsyncStreamErrorCode[acdata.AsyncStreamError],
	}
}

// TestInteropScenariosOnArrowGo runs the scenarios of arrow-go's own cdata
// suite against arrow-go's package: the scenarios are faithful where both
// implementations pass them.
func TestInteropScenariosOnArrowGo(t *testing.T) { cdatatest.Run(t, arrowGoAPI()) }

// structPairs maps arrow-go's C struct types onto ours.
var structPairs = []struct {
	name        string
	theirs, our reflect.Type
}{
	{"CArrowSchema", reflect.TypeFor[acdata.CArrowSchema](), reflect.TypeFor[abi.Schema]()},
	{"CArrowArray", reflect.TypeFor[acdata.CArrowArray](), reflect.TypeFor[abi.Array]()},
	{"CArrowArrayStream", reflect.TypeFor[acdata.CArrowArrayStream](), reflect.TypeFor[abi.ArrayStream]()},
	{"CArrowDeviceArray", reflect.TypeFor[acdata.CArrowDeviceArray](), reflect.TypeFor[abi.DeviceArray]()},
	{"CArrowAsyncDeviceStreamHandler", reflect.TypeFor[acdata.CArrowAsyncDeviceStreamHandler](), reflect.TypeFor[abi.AsyncDeviceStreamHandler]()},
	{"CArrowAsyncProducer", reflect.TypeFor[acdata.CArrowAsyncProducer](), reflect.TypeFor[abi.AsyncProducer]()},
	{"CArrowAsyncTask", reflect.TypeFor[acdata.CArrowAsyncTask](), reflect.TypeFor[abi.AsyncTask]()},
}

// goPairs are the Go types both packages declare.
var goPairs = []struct {
	name        string
	theirs, our reflect.Type
}{
	{"RecordMessage", reflect.TypeFor[acdata.RecordMessage](), reflect.TypeFor[cdata.RecordMessage]()},
	{"AsyncRecordBatchStream", reflect.TypeFor[acdata.AsyncRecordBatchStream](), reflect.TypeFor[cdata.AsyncRecordBatchStream]()},
	{"AsyncStreamError", reflect.TypeFor[acdata.AsyncStreamError](), reflect.TypeFor[cdata.AsyncStreamError]()},
}

// ourTypes are this package's exported types, by name.
var ourTypes = map[string]reflect.Type{
	"CArrowSchema":                   reflect.TypeFor[cdata.CArrowSchema](),
	"CArrowArray":                    reflect.TypeFor[cdata.CArrowArray](),
	"CArrowArrayStream":              reflect.TypeFor[cdata.CArrowArrayStream](),
	"CArrowDeviceArray":              reflect.TypeFor[cdata.CArrowDeviceArray](),
	"CArrowAsyncDeviceStreamHandler": reflect.TypeFor[cdata.CArrowAsyncDeviceStreamHandler](),
	"CArrowAsyncProducer":            reflect.TypeFor[cdata.CArrowAsyncProducer](),
	"CArrowAsyncTask":                reflect.TypeFor[cdata.CArrowAsyncTask](),
	"RecordMessage":                  reflect.TypeFor[cdata.RecordMessage](),
	"AsyncRecordBatchStream":         reflect.TypeFor[cdata.AsyncRecordBatchStream](),
	"AsyncStreamError":               reflect.TypeFor[cdata.AsyncStreamError](),
}

// funcPairs are the exported functions of arrow-go's cdata and ours.
var funcPairs = []struct {
	name        string
	theirs, our any
}{
	{"ArrayFromPtr", acdata.ArrayFromPtr, cdata.ArrayFromPtr},
	{"SchemaFromPtr", acdata.SchemaFromPtr, cdata.SchemaFromPtr},
	{"CreateAsyncDeviceStreamHandler", acdata.CreateAsyncDeviceStreamHandler, cdata.CreateAsyncDeviceStreamHandler},
	{"ExportArrowArray", acdata.ExportArrowArray, cdata.ExportArrowArray},
	{"ExportArrowRecordBatch", acdata.ExportArrowRecordBatch, cdata.ExportArrowRecordBatch},
	{"ExportArrowSchema", acdata.ExportArrowSchema, cdata.ExportArrowSchema},
	{"ExportAsyncRecordBatchStream", acdata.ExportAsyncRecordBatchStream, cdata.ExportAsyncRecordBatchStream},
	{"ExportRecordReader", acdata.ExportRecordReader, cdata.ExportRecordReader},
	{"ImportCArray", acdata.ImportCArray, cdata.ImportCArray},
	//lint:ignore SA1019 its signature is part of the API all the same
	{"ImportCArrayStream", acdata.ImportCArrayStream, cdata.ImportCArrayStream},
	{"ImportCArrayWithType", acdata.ImportCArrayWithType, cdata.ImportCArrayWithType},
	{"ImportCArrowField", acdata.ImportCArrowField, cdata.ImportCArrowField},
	{"ImportCArrowSchema", acdata.ImportCArrowSchema, cdata.ImportCArrowSchema},
	{"ImportCRecordBatch", acdata.ImportCRecordBatch, cdata.ImportCRecordBatch},
	{"ImportCRecordBatchWithSchema", acdata.ImportCRecordBatchWithSchema, cdata.ImportCRecordBatchWithSchema},
	{"ImportCRecordReader", acdata.ImportCRecordReader, cdata.ImportCRecordReader},
	{"ReleaseCArrowArray", acdata.ReleaseCArrowArray, cdata.ReleaseCArrowArray},
	{"ReleaseCArrowArrayStream", acdata.ReleaseCArrowArrayStream, cdata.ReleaseCArrowArrayStream},
	{"ReleaseCArrowSchema", acdata.ReleaseCArrowSchema, cdata.ReleaseCArrowSchema},
}

// sameType reports whether arrow-go's type theirs is our type our once
// arrow-go's C structs are mapped to abi's and its Go types to ours.
func sameType(theirs, our reflect.Type) bool {
	for _, p := range structPairs {
		if theirs == p.theirs {
			return our == p.our
		}
	}
	for _, p := range goPairs {
		if theirs == p.theirs {
			return our == p.our
		}
	}
	if theirs == our {
		return true
	}
	if theirs.Kind() != our.Kind() || theirs.Name() != our.Name() || theirs.PkgPath() != our.PkgPath() {
		return false
	}
	switch theirs.Kind() {
	case reflect.Pointer, reflect.Slice:
		return sameType(theirs.Elem(), our.Elem())
	case reflect.Chan:
		return theirs.ChanDir() == our.ChanDir() && sameType(theirs.Elem(), our.Elem())
	case reflect.Func:
		if theirs.NumIn() != our.NumIn() || theirs.NumOut() != our.NumOut() || theirs.IsVariadic() != our.IsVariadic() {
			return false
		}
		for i := range theirs.NumIn() {
			if !sameType(theirs.In(i), our.In(i)) {
				return false
			}
		}
		for i := range theirs.NumOut() {
			if !sameType(theirs.Out(i), our.Out(i)) {
				return false
			}
		}
		return true
	}
	return false
}

// TestInteropSignatures: every exported function and type of arrow-go's
// cdata exists in ours with the same signature or fields, arrow-go's C
// structs mapped onto abi's.
func TestInteropSignatures(t *testing.T) {
	for _, p := range structPairs {
		if our := ourTypes[p.name]; our != p.our {
			t.Errorf("cdata.%s is %v, want %v", p.name, our, p.our)
		}
		if p.theirs.Size() != p.our.Size() {
			t.Errorf("%s: arrow-go's is %d bytes, ours %d", p.name, p.theirs.Size(), p.our.Size())
		}
	}
	for _, p := range funcPairs {
		theirs, our := reflect.TypeOf(p.theirs), reflect.TypeOf(p.our)
		if !sameType(theirs, our) {
			t.Errorf("%s: arrow-go's is %v, ours %v", p.name, theirs, our)
		}
	}
	for _, p := range goPairs {
		if p.theirs.Kind() != reflect.Struct || p.our.Kind() != reflect.Struct || p.theirs.NumField() != p.our.NumField() {
			t.Errorf("%s: arrow-go's is %v, ours %v", p.name, p.theirs, p.our)
			continue
		}
		for i := range p.theirs.NumField() {
			tf, of := p.theirs.Field(i), p.our.Field(i)
			if tf.Name != of.Name || !sameType(tf.Type, of.Type) {
				t.Errorf("%s field %d: arrow-go's is %s %v, ours %s %v", p.name, i, tf.Name, tf.Type, of.Name, of.Type)
			}
		}
		for i := range p.theirs.NumMethod() {
			m := p.theirs.Method(i)
			om, ok := p.our.MethodByName(m.Name)
			if !ok || !sameType(m.Type, om.Type) {
				t.Errorf("%s.%s: arrow-go's is %v, ours %v (found %v)", p.name, m.Name, m.Type, om.Type, ok)
			}
		}
	}

	// The lists above are written out (reflection cannot list a package's
	// names): check them against arrow-go's source.
	funcs, types := arrowGoExports(t)
	var listed []string
	for _, p := range funcPairs {
		listed = append(listed, p.name)
	}
	slices.Sort(listed)
	if !slices.Equal(funcs, listed) {
		t.Errorf("arrow-go's cdata exports the functions\n%v\nthe test lists\n%v", funcs, listed)
	}
	var listedTypes []string
	for name := range ourTypes {
		listedTypes = append(listedTypes, name)
	}
	slices.Sort(listedTypes)
	if !slices.Equal(types, listedTypes) {
		t.Errorf("arrow-go's cdata exports the types\n%v\nthe test lists\n%v", types, listedTypes)
	}
}

// arrowGoExports parses arrow-go's cdata package (its files without build
// constraints that exclude a plain cgo build) and returns its exported
// top-level functions and types, sorted.
func arrowGoExports(t *testing.T) (funcs, types []string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}\n{{join .GoFiles \"\\n\"}}\n{{join .CgoFiles \"\\n\"}}",
		"github.com/apache/arrow-go/v18/arrow/cdata").Output()
	if err != nil {
		t.Fatalf("go list arrow-go's cdata: %v", err)
	}
	lines := strings.Fields(string(out))
	dir, files := lines[0], lines[1:]
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, filepath.Join(dir, f), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					funcs = append(funcs, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							types = append(types, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								t.Errorf("arrow-go's cdata exports %s, which the test does not check", n.Name)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(funcs)
	slices.Sort(types)
	return funcs, types
}
