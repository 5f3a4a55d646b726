package cdevice

import (
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/cmeta"
	"github.com/purearrow/cdevice/internal/ffi"
)

// maxChildren bounds n_children from C before anything is allocated for it;
// maxSchemaNodes bounds the nodes one import walks, since children may be
// shared (a small DAG would otherwise unroll exponentially), and
// maxSchemaBytes the strings and metadata it copies, counted at every
// visit: 64K nodes sharing one long name would otherwise copy it 64K times.
const (
	maxChildren    = 1 << 20
	maxSchemaNodes = 1 << 16
	maxSchemaBytes = 64 << 20
)

// ImportField imports an ArrowSchema as an arrow.Field. The schema is
// released before ImportField returns, also when the import fails; nothing
// of the result points into C memory. Importing the same schema again
// returns the same (immutable) field and type.
func ImportField(s *abi.Schema) (arrow.Field, error) {
	return importSchemaTree(s, 'F', (*schemaImporter).field)
}

// ImportSchema imports a struct-typed ArrowSchema (as ExportSchema writes and
// ArrowArrayStream.get_schema returns) as an arrow.Schema, and releases it.
// The root's name and flags are ignored. Importing the same schema again
// returns the same (immutable) *arrow.Schema.
func ImportSchema(s *abi.Schema) (*arrow.Schema, error) {
	if s != nil && s.Release != 0 {
		if sc := exportedSchema(s); sc != nil {
			ReleaseSchema(s)
			return sc, nil
		}
	}
	return importSchemaTree(s, 'S', func(imp *schemaImporter, s *abi.Schema) (*arrow.Schema, error) {
		if format := imp.str(s.Format); format != "+s" {
			return nil, invalidf("a schema must have struct type (format +s), got format %q", format)
		}
		md, err := cmeta.Decode(s.Metadata) // a root's is never an extension's
		if err != nil {
			return nil, err
		}
		fields, err := imp.children(s)
		if err != nil {
			return nil, err
		}
		return arrow.NewSchema(fields, &md), nil
	})
}

// importSchemaTree checks s, measures its strings, runs root (unless the
// cache has its result for a tree with the same content, kind saying which
// result) and releases s.
func importSchemaTree[T any](s *abi.Schema, kind byte, root func(*schemaImporter, *abi.Schema) (T, error)) (T, error) {
	var zero T
	if err := checkLive(s); err != nil {
		return zero, err
	}
	defer ReleaseSchema(s)
	m := schemaMeasure{key: newSchemaKey(kind)}
	defer m.key.free()
	if err := m.measure(s, 0); err != nil {
		return zero, err
	}
	if v, ok := cachedSchema(&m.key); ok {
		return v.(T), nil
	}
	imp := &schemaImporter{buf: make([]byte, 0, m.total)}
	v, err := root(imp, s)
	if err == nil && !imp.extension {
		cacheSchema(&m.key, v)
	}
	return v, err
}

func checkLive(s *abi.Schema) error {
	if s == nil {
		return invalidf("nil ArrowSchema")
	}
	if s.Release == 0 {
		return ErrReleased
	}
	return nil
}

// schemaMeasure is the checked walk of a schema tree before anything is
// built: it sums the lengths of its strings and keys it for the cache.
type schemaMeasure struct {
	total    int // bytes of strings
	metadata int // bytes of metadata
	nodes    int
	key      schemaKey // the tree's content
}

// schemaImporter copies every string of a schema tree into one Go
// allocation (sized by schemaMeasure); field slices them out.
type schemaImporter struct {
	buf       []byte
	extension bool // the tree names an extension type: not cached
}

func (m *schemaMeasure) measure(s *abi.Schema, depth int) error {
	if depth > maxDepth {
		return invalidf("schema nesting deeper than %d (or a cycle)", maxDepth)
	}
	if m.nodes++; m.nodes > maxSchemaNodes {
		return invalidf("schema has more than %d nodes (shared children?)", maxSchemaNodes)
	}
	if s.Format == 0 {
		return invalidf("ArrowSchema.format is NULL")
	}
	if s.NChildren < 0 || s.NChildren > maxChildren {
		return invalidf("ArrowSchema.n_children is %d", s.NChildren)
	}
	if s.NChildren > 0 && s.Children == 0 {
		return invalidf("ArrowSchema.children is NULL with n_children %d", s.NChildren)
	}
	flen := ffi.CStringLen(s.Format)
	// A view of the C string, not kept: the count it allows is checked
	// before any of n_children pointers is followed, as a producer whose
	// count lies has a children array shorter than the count.
	format := unsafe.String((*byte)(abi.Pointer(s.Format)), flen)
	if want := formatChildCount(format); want >= 0 && s.NChildren != int64(want) {
		return invalidf("format %q allows %d children, n_children is %d", format, want, s.NChildren)
	}
	if s.Dictionary != 0 && !isIndexFormat(format) {
		return invalidf("format %q has a dictionary but is not an integer index type", format)
	}
	nlen := ffi.CStringLen(s.Name)
	md, err := cmeta.Blob(s.Metadata)
	if err != nil {
		return err
	}
	// The strings are copied into one buffer, the metadata decoded, and
	// all of it keyed for the cache, at every visit of a shared node.
	if m.total += flen + nlen; m.total+m.metadata+len(md) > maxSchemaBytes {
		return invalidf("schema has more than %d bytes of names, formats and metadata (shared children?)", maxSchemaBytes)
	}
	m.metadata += len(md)
	// Views of the C strings (nil for a NULL name), as format is.
	m.key.add(unsafe.Slice((*byte)(abi.Pointer(s.Format)), flen), unsafe.Slice((*byte)(abi.Pointer(s.Name)), nlen), md)
	m.key.addInt(s.Flags)
	m.key.addInt(s.NChildren)
	m.key.addInt(int64(min(s.Dictionary, 1)))
	for i := range int(s.NChildren) {
		c := s.Child(i)
		if c == nil {
			return invalidf("ArrowSchema.children[%d] is NULL", i)
		}
		if c.Release == 0 {
			return invalidf("ArrowSchema.children[%d] is released", i)
		}
		if err := m.measure(c, depth+1); err != nil {
			return err
		}
	}
	if s.Dictionary != 0 {
		d := (*abi.Schema)(abi.Pointer(s.Dictionary))
		if d.Release == 0 {
			return invalidf("ArrowSchema.dictionary is released")
		}
		return m.measure(d, depth+1)
	}
	return nil
}

// isIndexFormat reports whether format is an integer type, the only
// types a dictionary's indices may have.
func isIndexFormat(format string) bool {
	return len(format) == 1 && strings.IndexByte("cCsSiIlL", format[0]) >= 0
}

// str copies a C string into imp.buf (sized by measure, never regrown) and
// returns it as a Go string sharing that one allocation.
func (imp *schemaImporter) str(p uintptr) string {
	n := ffi.CStringLen(p)
	if n == 0 {
		return ""
	}
	start := len(imp.buf)
	imp.buf = append(imp.buf, unsafe.Slice((*byte)(abi.Pointer(p)), n)...)
	return unsafe.String(&imp.buf[start], n)
}

func (imp *schemaImporter) field(s *abi.Schema) (arrow.Field, error) {
	format, name := imp.str(s.Format), imp.str(s.Name)
	md, err := cmeta.Decode(s.Metadata)
	if err != nil {
		return arrow.Field{}, err
	}
	children, err := imp.children(s)
	if err != nil {
		return arrow.Field{}, err
	}
	dt, err := typeFromFormat(format, children, s.Flags)
	if err != nil {
		return arrow.Field{}, err
	}
	if s.Dictionary != 0 { // measure checked the index format (so no children)
		vf, err := imp.field((*abi.Schema)(abi.Pointer(s.Dictionary)))
		if err != nil {
			return arrow.Field{}, err
		}
		dt = &arrow.DictionaryType{IndexType: dt, ValueType: vf.Type, Ordered: s.Flags&abi.FlagDictionaryOrdered != 0}
	}
	if i := md.FindKey(extensionNameKey); i >= 0 {
		imp.extension = true // what it imports as depends on the registry: not cached
		if ext := arrow.GetExtensionType(md.Values()[i]); ext != nil {
			var serialized string
			if j := md.FindKey(extensionMetadataKey); j >= 0 {
				serialized = md.Values()[j]
			}
			if dt, err = ext.Deserialize(dt, serialized); err != nil {
				return arrow.Field{}, invalidf("extension type %q: %v", ext.ExtensionName(), err)
			}
			md = withoutKeys(md, extensionNameKey, extensionMetadataKey)
		}
	}
	return arrow.Field{Name: name, Type: dt, Nullable: s.Flags&abi.FlagNullable != 0, Metadata: md}, nil
}

func withoutKeys(md arrow.Metadata, drop ...string) arrow.Metadata {
	var keys, vals []string
outer:
	for i, k := range md.Keys() {
		for _, d := range drop {
			if k == d {
				continue outer
			}
		}
		keys, vals = append(keys, k), append(vals, md.Values()[i])
	}
	return arrow.NewMetadata(keys, vals)
}

func (imp *schemaImporter) children(s *abi.Schema) ([]arrow.Field, error) {
	if s.NChildren == 0 {
		return nil, nil
	}
	children := make([]arrow.Field, s.NChildren)
	for i := range children {
		var err error
		if children[i], err = imp.field(s.Child(i)); err != nil {
			return nil, err
		}
	}
	return children, nil
}
