package cdevice

import (
	"encoding/binary"
	"sync"
)

// The schema cache: a producer hands the same schema with every batch
// (ImportRecordBatch with a C schema, arrow-go's ImportCRecordBatch), and
// parsing formats and building fields and types is most of such an import.
// A schema tree is keyed by its content as the checked walk reads it
// (formats, names, flags, child counts, metadata bytes, dictionaries): the
// same bytes always import as the same value, which is immutable and so
// shared. Trees that name an extension type are not cached (what they
// import as depends on arrow-go's registry, which may change). The cache is
// bounded in entries and key size, and safe for concurrent imports.
const (
	maxCachedSchemas  = 256
	maxSchemaKeyBytes = 1 << 16
)

var schemaCache = struct {
	sync.RWMutex
	m map[string]any // key: result kind, then the tree's content
}{m: make(map[string]any)}

// schemaKey accumulates a tree's content during the checked walk; too long
// a key turns caching off for the tree (b nil).
type schemaKey struct {
	b    []byte
	pool *[]byte // where b goes back to
}

// keyBufs recycles key buffers: one per import would be most of a cached
// import's allocations.
var keyBufs = sync.Pool{New: func() any { return new([]byte) }}

func newSchemaKey(kind byte) schemaKey {
	b := keyBufs.Get().(*[]byte)
	return schemaKey{b: append((*b)[:0], kind), pool: b}
}

// free gives the buffer back (a key that grew past the bound has none).
func (k *schemaKey) free() {
	if k.b != nil && cap(k.b) <= maxSchemaKeyBytes {
		*k.pool = k.b[:0]
		keyBufs.Put(k.pool)
	}
	k.b = nil
}

func (k *schemaKey) add(parts ...[]byte) {
	for _, p := range parts {
		if k.b == nil {
			return
		}
		k.b = binary.NativeEndian.AppendUint64(k.b, uint64(len(p)))
		k.b = append(k.b, p...)
		if len(k.b) > maxSchemaKeyBytes {
			k.b = nil // caching off
		}
	}
}

func (k *schemaKey) addInt(v int64) {
	if k.b != nil {
		k.b = binary.NativeEndian.AppendUint64(k.b, uint64(v))
	}
}

func cachedSchema(k *schemaKey) (any, bool) {
	if k.b == nil {
		return nil, false
	}
	schemaCache.RLock()
	v, ok := schemaCache.m[string(k.b)]
	schemaCache.RUnlock()
	return v, ok
}

func cacheSchema(k *schemaKey, v any) {
	if k.b == nil {
		return
	}
	schemaCache.Lock()
	defer schemaCache.Unlock()
	if len(schemaCache.m) >= maxCachedSchemas {
		for old := range schemaCache.m { // any one: the bound is what matters
			delete(schemaCache.m, old)
			break
		}
	}
	schemaCache.m[string(k.b)] = v
}
