package cdevice

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/identity"
)

// exportedC exports sc into a fresh off-heap struct, to be imported as a C
// producer's (the identity short-circuit is off in these tests).
func exportedC(t *testing.T, sc *arrow.Schema) *abi.Schema {
	t.Helper()
	s := New[abi.Schema]()
	t.Cleanup(func() { ReleaseSchema(s); Free(s) })
	if err := ExportSchema(sc, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func withoutIdentity(t *testing.T) {
	old := identity.Set(false)
	t.Cleanup(func() { identity.Set(old) })
}

// The same content from different structs imports as the same value; any
// difference in content (names, flags, metadata, types) as another.
func TestSchemaCacheKeysOnContent(t *testing.T) {
	withoutIdentity(t)
	md := arrow.NewMetadata([]string{"k"}, []string{"v"})
	base := func(name string, nullable bool, md *arrow.Metadata, dt arrow.DataType) *arrow.Schema {
		return arrow.NewSchema([]arrow.Field{
			{Name: "a", Type: arrow.PrimitiveTypes.Int64},
			{Name: name, Type: dt, Nullable: nullable},
		}, md)
	}
	first, err := ImportSchema(exportedC(t, base("b", true, &md, arrow.BinaryTypes.String)))
	if err != nil {
		t.Fatal(err)
	}
	again, err := ImportSchema(exportedC(t, base("b", true, &md, arrow.BinaryTypes.String)))
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Error("the same schema content imported as a new value (not cached)")
	}
	other := arrow.NewMetadata([]string{"k"}, []string{"w"})
	for name, sc := range map[string]*arrow.Schema{
		"name":     base("c", true, &md, arrow.BinaryTypes.String),
		"nullable": base("b", false, &md, arrow.BinaryTypes.String),
		"metadata": base("b", true, &other, arrow.BinaryTypes.String),
		"none":     base("b", true, nil, arrow.BinaryTypes.String),
		"type":     base("b", true, &md, arrow.BinaryTypes.LargeString),
		"dict": base("b", true, &md, &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8,
			ValueType: arrow.BinaryTypes.String}),
	} {
		got, err := ImportSchema(exportedC(t, sc))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got == first || !got.Equal(sc) || !got.Metadata().Equal(sc.Metadata()) {
			t.Errorf("%s: imported %v, want %v", name, got, sc)
		}
	}
	// A field and a schema of the same tree are different results.
	f, err := ImportField(exportedC(t, base("b", true, &md, arrow.BinaryTypes.String)))
	if err != nil || f.Type.ID() != arrow.STRUCT {
		t.Errorf("ImportField of a cached schema's tree: %v, %v", f, err)
	}
}

type cacheTestExt struct{ arrow.ExtensionBase }

func (*cacheTestExt) ExtensionName() string   { return "cdevice.cache_test" }
func (*cacheTestExt) Serialize() string       { return "" }
func (*cacheTestExt) ArrayType() reflect.Type { return reflect.TypeOf(array.ExtensionArrayBase{}) }
func (e *cacheTestExt) ExtensionEquals(o arrow.ExtensionType) bool {
	return o.ExtensionName() == e.ExtensionName()
}
func (*cacheTestExt) Deserialize(storage arrow.DataType, _ string) (arrow.ExtensionType, error) {
	return &cacheTestExt{arrow.ExtensionBase{Storage: storage}}, nil
}

// A tree naming an extension type is imported anew every time: registering
// the type changes what it imports as.
func TestSchemaCacheSkipsExtensions(t *testing.T) {
	withoutIdentity(t)
	ext := &cacheTestExt{arrow.ExtensionBase{Storage: &arrow.FixedSizeBinaryType{ByteWidth: 16}}}
	sc := arrow.NewSchema([]arrow.Field{{Name: "u", Type: ext}}, nil)
	got, err := ImportSchema(exportedC(t, sc))
	if err != nil || got.Field(0).Type.ID() != arrow.FIXED_SIZE_BINARY {
		t.Fatalf("unregistered: %v, %v; want the storage type", got, err)
	}
	if err := arrow.RegisterExtensionType(ext); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = arrow.UnregisterExtensionType(ext.ExtensionName()) }()
	got, err = ImportSchema(exportedC(t, sc))
	if err != nil || got.Field(0).Type.ID() != arrow.EXTENSION {
		t.Fatalf("registered: %v, %v; want the extension type", got, err)
	}
}

// The cache stays within its bound however many schemas pass, a schema too
// big for a key still imports, and concurrent imports agree.
func TestSchemaCacheBoundedAndConcurrent(t *testing.T) {
	withoutIdentity(t)
	for i := range maxCachedSchemas + 50 {
		sc := arrow.NewSchema([]arrow.Field{{Name: fmt.Sprint("f", i), Type: arrow.PrimitiveTypes.Int32}}, nil)
		if _, err := ImportSchema(exportedC(t, sc)); err != nil {
			t.Fatal(err)
		}
	}
	schemaCache.RLock()
	n := len(schemaCache.m)
	schemaCache.RUnlock()
	if n > maxCachedSchemas {
		t.Errorf("%d cached schemas, bound %d", n, maxCachedSchemas)
	}

	huge := arrow.NewSchema([]arrow.Field{{Name: strings.Repeat("x", maxSchemaKeyBytes), Type: arrow.PrimitiveTypes.Int8}}, nil)
	for range 2 {
		got, err := ImportSchema(exportedC(t, huge))
		if err != nil || !got.Equal(huge) {
			t.Fatalf("huge schema: %v", err)
		}
	}

	sc := arrow.NewSchema([]arrow.Field{{Name: "shared", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)}}, nil)
	var wg sync.WaitGroup
	results := make([]*arrow.Schema, 8)
	structs := make([]*abi.Schema, len(results))
	for i := range structs {
		structs[i] = exportedC(t, sc)
	}
	for i := range results {
		wg.Go(func() {
			got, err := ImportSchema(structs[i])
			if err != nil {
				t.Error(err)
			}
			results[i] = got
		})
	}
	wg.Wait()
	for _, got := range results {
		if got == nil || !got.Equal(sc) {
			t.Errorf("concurrent import: %v", got)
		}
	}
}
