package ipcverify

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
)

// arrow-go decodes IPC metadata (flatbuffers) without checking it: an
// offset or vector length that points outside the buffer panics, and worse,
// sizes Go allocations (make) that no recover can stop when they exhaust
// memory, or recurses without end through offsets that wrap around. So
// inspect checks every flatbuffer arrow-go will decode before arrow-go sees
// the file, the way flatbuffers' own verifiers do (which Go lacks): every
// table, vtable, field, vector and string inside its buffer, nesting and
// table count bounded, plus the one count arrow-go trusts to size an
// allocation (a record batch's variadic buffer counts).

// ErrCorrupt: IPC metadata that arrow-go must not be given.
var ErrCorrupt = errors.New("corrupt Arrow IPC metadata")

// maxMetadataSize bounds one message's metadata, as arrow-go's reader does
// by default (passed to it explicitly so that both agree).
const maxMetadataSize = 64 << 20

// fbMaxDepth bounds table nesting: Arrow nests fields at most 64 deep
// (MaxSchemaDepth); Message > Schema and DictionaryEncoding > Int are the
// rest.
const fbMaxDepth = MaxSchemaDepth + 8

// An fbTable describes the fields of a flatbuffers table that arrow-go
// reads, by field id.
type fbTable struct {
	name   string
	fields []fbField
}

type fbKind uint8

const (
	fbScalar fbKind = iota // size bytes in the table
	fbString
	fbVector // of size-byte scalars or structs
	fbTableRef
	fbTableVector
	fbUnion // a table whose type is the previous field, a byte
)

type fbField struct {
	kind    fbKind
	size    int
	table   *fbTable          // fbTableRef, fbTableVector
	members map[byte]*fbTable // fbUnion
}

func scalar(size int) fbField   { return fbField{kind: fbScalar, size: size} }
func vector(size int) fbField   { return fbField{kind: fbVector, size: size} }
func ref(t *fbTable) fbField    { return fbField{kind: fbTableRef, table: t} }
func tables(t *fbTable) fbField { return fbField{kind: fbTableVector, table: t} }

var str = fbField{kind: fbString}

// scalars is a table of scalar fields of the given sizes.
func scalars(name string, sizes ...int) *fbTable {
	t := &fbTable{name: name}
	for _, s := range sizes {
		t.fields = append(t.fields, scalar(s))
	}
	return t
}

// Arrow's Schema.fbs, Message.fbs and File.fbs, as far as arrow-go reads
// them. Field ids are positions; a union is preceded by its type byte. A
// union member not listed is checked as a table without fields (anyFB).
var (
	keyValueFB = &fbTable{name: "KeyValue", fields: []fbField{str, str}}
	intFB      = scalars("Int", 4, 1)
	// Schema.fbs's Type union.
	typeFB = map[byte]*fbTable{
		2: intFB, 3: scalars("FloatingPoint", 2), 7: scalars("Decimal", 4, 4, 4), 8: scalars("Date", 2),
		9: scalars("Time", 2, 4), 10: {name: "Timestamp", fields: []fbField{scalar(2), str}}, 11: scalars("Interval", 2),
		14: {name: "Union", fields: []fbField{scalar(2), vector(4)}}, 15: scalars("FixedSizeBinary", 4),
		16: scalars("FixedSizeList", 4), 17: scalars("Map", 1), 18: scalars("Duration", 2),
	}
	dictionaryEncodingFB = &fbTable{name: "DictionaryEncoding", fields: []fbField{scalar(8), ref(intFB), scalar(1), scalar(2)}}
	fieldFB              = &fbTable{name: "Field"} // recursive: its fields are set by init
	schemaFB             = &fbTable{name: "Schema", fields: []fbField{scalar(2), tables(fieldFB), tables(keyValueFB), vector(8)}}
	// RecordBatch: length, nodes (FieldNode: 16 bytes), buffers (Buffer: 16
	// bytes), compression, variadicBufferCounts.
	recordBatchFB = &fbTable{name: "RecordBatch", fields: []fbField{scalar(8), vector(16), vector(16),
		ref(scalars("BodyCompression", 1, 1)), vector(8)}}
	dictionaryBatchFB = &fbTable{name: "DictionaryBatch", fields: []fbField{scalar(8), ref(recordBatchFB), scalar(1)}}
	messageFB         = &fbTable{name: "Message", fields: []fbField{scalar(2), scalar(1),
		{kind: fbUnion, members: map[byte]*fbTable{1: schemaFB, 2: dictionaryBatchFB, 3: recordBatchFB}},
		scalar(8), tables(keyValueFB)}}
	// Footer: version, schema, dictionaries and recordBatches (Block: 24
	// bytes), custom_metadata.
	footerFB = &fbTable{name: "Footer", fields: []fbField{scalar(2), ref(schemaFB), vector(24), vector(24), tables(keyValueFB)}}
	anyFB    = &fbTable{name: "table"}
)

// The union values that checkMessage and fieldViews look for.
const (
	headerSchema          = 1
	headerDictionaryBatch = 2
	headerRecordBatch     = 3
	typeBinaryView        = 23
	typeUtf8View          = 24
)

func init() {
	fieldFB.fields = []fbField{str, scalar(1), scalar(1), {kind: fbUnion, members: typeFB}, ref(dictionaryEncodingFB),
		tables(fieldFB), tables(keyValueFB)}
}

// fbBuf is one flatbuffer under check.
type fbBuf struct {
	b      []byte
	visits int // tables that may still be visited
}

func newFBBuf(b []byte) *fbBuf {
	// A table takes at least 4 bytes, so a buffer without shared tables
	// has at most len/4; sharing could make the walk (and arrow-go's)
	// exponential.
	return &fbBuf{b: b, visits: len(b) / 4}
}

func (f *fbBuf) within(pos, n int64) bool {
	return pos >= 0 && n >= 0 && pos <= int64(len(f.b)) && n <= int64(len(f.b))-pos
}
func (f *fbBuf) u16(pos int64) int64 { return int64(binary.LittleEndian.Uint16(f.b[pos:])) }
func (f *fbBuf) u32(pos int64) int64 { return int64(binary.LittleEndian.Uint32(f.b[pos:])) }
func (f *fbBuf) i64(pos int64) int64 { return int64(binary.LittleEndian.Uint64(f.b[pos:])) }

func corrupt(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, a...))
}

// root checks the table at the root of the buffer.
func (f *fbBuf) root(t *fbTable) (int64, error) {
	if !f.within(0, 4) {
		return 0, corrupt("%d bytes of metadata", len(f.b))
	}
	pos := f.u32(0)
	return pos, f.table(pos, t, 0)
}

// fieldPos returns where field id of the table at pos is, 0 when absent.
// The table's header must have been checked.
func (f *fbBuf) fieldPos(pos int64, id int) int64 {
	vt := pos - int64(int32(f.u32(pos)))
	slot := 4 + 2*int64(id)
	if slot+2 > f.u16(vt) {
		return 0
	}
	if off := f.u16(vt + slot); off != 0 {
		return pos + off
	}
	return 0
}

// table checks the table of type t at pos and everything it refers to.
func (f *fbBuf) table(pos int64, t *fbTable, depth int) error {
	if depth > fbMaxDepth {
		return corrupt("tables nested more than %d deep", fbMaxDepth)
	}
	if f.visits--; f.visits < 0 {
		return corrupt("more tables than %d bytes can hold", len(f.b))
	}
	if !f.within(pos, 4) {
		return corrupt("%s table at %d is outside the %d bytes of metadata", t.name, pos, len(f.b))
	}
	vt := pos - int64(int32(f.u32(pos)))
	if !f.within(vt, 4) {
		return corrupt("%s table at %d: vtable at %d is outside the metadata", t.name, pos, vt)
	}
	if size := f.u16(vt); size < 4 || size%2 != 0 || !f.within(vt, size) || !f.within(pos, f.u16(vt+2)) {
		return corrupt("%s table at %d: malformed vtable at %d", t.name, pos, vt)
	}
	for id, fd := range t.fields {
		p := f.fieldPos(pos, id)
		if p == 0 {
			continue
		}
		if fd.kind == fbScalar {
			if !f.within(p, int64(fd.size)) {
				return corrupt("%s field %d at %d is outside the metadata", t.name, id, p)
			}
			continue
		}
		if !f.within(p, 4) {
			return corrupt("%s field %d at %d is outside the metadata", t.name, id, p)
		}
		target := p + f.u32(p)
		switch fd.kind {
		case fbString, fbVector, fbTableVector:
			size := int64(fd.size)
			if fd.kind == fbString {
				size = 1
			} else if fd.kind == fbTableVector {
				size = 4
			}
			if !f.within(target, 4) || !f.within(target+4, f.u32(target)*size) {
				return corrupt("%s field %d: a vector at %d runs past the end of the metadata", t.name, id, target)
			}
			if fd.kind != fbTableVector {
				continue
			}
			for i := range f.u32(target) {
				elem := target + 4 + 4*i
				if err := f.table(elem+f.u32(elem), fd.table, depth+1); err != nil {
					return err
				}
			}
		case fbTableRef:
			if err := f.table(target, fd.table, depth+1); err != nil {
				return err
			}
		case fbUnion:
			var typ byte
			if tp := f.fieldPos(pos, id-1); tp != 0 {
				typ = f.b[tp] // checked: the type field comes first
			}
			m := fd.members[typ]
			if m == nil {
				m = anyFB
			}
			if err := f.table(target, m, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// vectorAt returns the start and length of vector field id of the checked
// table at pos (0, 0 when absent).
func (f *fbBuf) vectorAt(pos int64, id int) (start, n int64) {
	p := f.fieldPos(pos, id)
	if p == 0 {
		return 0, 0
	}
	v := p + f.u32(p)
	return v + 4, f.u32(v)
}

// tableAt returns the position of table field id, 0 when absent.
func (f *fbBuf) tableAt(pos int64, id int) int64 {
	if p := f.fieldPos(pos, id); p != 0 {
		return p + f.u32(p)
	}
	return 0
}

// A viewCounts says how many view-typed arrays (each with a variadic buffer
// count) a record batch of a schema has, and a dictionary batch of each
// dictionary id.
type viewCounts struct {
	batch int64
	dicts map[int64]int64
}

// schemaViews counts the view arrays of the checked Schema table at pos.
func (f *fbBuf) schemaViews(pos int64) *viewCounts {
	vc := &viewCounts{dicts: map[int64]int64{}}
	start, n := f.vectorAt(pos, 1)
	for i := range n {
		elem := start + 4*i
		vc.batch += f.fieldViews(elem+f.u32(elem), vc)
	}
	return vc
}

// fieldViews returns the view arrays that the Field table at pos adds to a
// batch: none when it is dictionary-encoded (the batch holds its indices;
// its values, counted into vc, are the dictionary's batch).
func (f *fbBuf) fieldViews(pos int64, vc *viewCounts) int64 {
	var n int64
	if tp := f.fieldPos(pos, 2); tp != 0 && (f.b[tp] == typeBinaryView || f.b[tp] == typeUtf8View) {
		n = 1
	}
	start, count := f.vectorAt(pos, 5)
	for i := range count {
		elem := start + 4*i
		n += f.fieldViews(elem+f.u32(elem), vc)
	}
	if enc := f.tableAt(pos, 4); enc != 0 {
		var id int64
		if p := f.fieldPos(enc, 0); p != 0 {
			id = f.i64(p)
		}
		vc.dicts[id] = n
		return 0
	}
	return n
}

// checkBatch checks the variadic buffer counts of the checked RecordBatch
// table at pos against views, the view arrays its schema gives it: arrow-go
// reads one per view array (past the vector's end when it is short) and
// sizes a slice by it.
func (f *fbBuf) checkBatch(pos, views int64) error {
	counts, n := f.vectorAt(pos, 4)
	if n == 0 && f.fieldPos(pos, 4) == 0 {
		return nil // absent: arrow-go reads zeros
	}
	if n < views {
		return corrupt("a record batch has %d variadic buffer counts, its schema %d view arrays", n, views)
	}
	_, buffers := f.vectorAt(pos, 2)
	for i := range n {
		if c := f.i64(counts + 8*i); c < 0 || c > buffers {
			return corrupt("variadic buffer count %d of a record batch with %d buffers", c, buffers)
		}
	}
	return nil
}

// A batchBody is what a record or dictionary batch asks of its body: its
// buffers (offset and length within the body) and their codec (-1:
// uncompressed).
type batchBody struct {
	buffers []int64 // offset, length, offset, length, ...
	codec   int
}

// checkMessage checks the metadata of one message. A schema sets *vc (the
// first one a stream has); batches are checked against it, and their body's
// layout returned (nil for other messages).
func checkMessage(meta []byte, vc **viewCounts) (bodyLen int64, bb *batchBody, err error) {
	f := newFBBuf(meta)
	pos, err := f.root(messageFB)
	if err != nil {
		return 0, nil, err
	}
	if p := f.fieldPos(pos, 3); p != 0 {
		bodyLen = f.i64(p)
	}
	var typ byte
	if p := f.fieldPos(pos, 1); p != 0 {
		typ = f.b[p]
	}
	header := f.tableAt(pos, 2)
	if header == 0 {
		return bodyLen, nil, nil
	}
	batch := int64(0)
	switch {
	case typ == headerSchema && *vc == nil:
		*vc = f.schemaViews(header)
	case typ == headerRecordBatch && *vc != nil:
		batch, err = header, f.checkBatch(header, (*vc).batch)
	case typ == headerDictionaryBatch && *vc != nil:
		var id int64
		if p := f.fieldPos(header, 0); p != 0 {
			id = f.i64(p)
		}
		if batch = f.tableAt(header, 1); batch != 0 {
			err = f.checkBatch(batch, (*vc).dicts[id])
		}
	}
	if err != nil || batch == 0 {
		return bodyLen, nil, err
	}
	return bodyLen, f.body(batch), nil
}

// body is the body layout of the checked RecordBatch table at pos: its
// buffers (Buffer: offset int64, length int64), and its compression's codec
// (BodyCompression: codec byte, LZ4_FRAME by default), -1 where it has none
// or one arrow-go does not know (it reads those buffers as they are).
func (f *fbBuf) body(pos int64) *batchBody {
	bb := &batchBody{codec: -1}
	start, n := f.vectorAt(pos, 2)
	for i := range n {
		bb.buffers = append(bb.buffers, f.i64(start+16*i), f.i64(start+16*i+8))
	}
	if c := f.tableAt(pos, 3); c != 0 {
		bb.codec = codecLZ4
		if p := f.fieldPos(c, 0); p != 0 {
			bb.codec = int(f.b[p])
		}
		if bb.codec != codecLZ4 && bb.codec != codecZSTD {
			bb.codec = -1
		}
	}
	return bb
}

// checkBody checks the body of a batch (bodyLen bytes at start of r) and
// spends b on it: every buffer inside the body, and where compressed, its
// uncompressed length within --max-memory and its frames sound
// (checkFrames); the body and what its buffers decompress to count toward
// --max-data.
func checkBody(r io.ReaderAt, start, bodyLen int64, bb *batchBody, b *budget) error {
	if err := b.spendBatch(); err != nil {
		return err
	}
	if err := b.spendData(bodyLen, fmt.Sprintf("a body of %d bytes", bodyLen)); err != nil {
		return err
	}
	for i := 0; i < len(bb.buffers); i += 2 {
		off, n := bb.buffers[i], bb.buffers[i+1]
		if off < 0 || n < 0 || off > bodyLen || n > bodyLen-off {
			return corrupt("buffer %d: %d bytes at offset %d of a body of %d bytes", i/2, n, off, bodyLen)
		}
		if bb.codec < 0 || n == 0 {
			continue
		}
		if n < 8 {
			return corrupt("buffer %d: %d bytes, too few for a compressed buffer's length", i/2, n)
		}
		var hdr [8]byte
		if _, err := r.ReadAt(hdr[:], start+off); err != nil {
			return fmt.Errorf("buffer %d: %w", i/2, err)
		}
		declared := int64(binary.LittleEndian.Uint64(hdr[:]))
		switch {
		case declared == -1: // stored uncompressed
			continue
		case declared < 0:
			return corrupt("buffer %d: uncompressed length %d", i/2, declared)
		case declared > b.Memory:
			return fmt.Errorf("%w: buffer %d decompresses to %d bytes, more than the %d the reading may hold at once (--max-memory)",
				ErrMemoryLimit, i/2, declared, b.Memory)
		}
		if err := b.spendData(declared, fmt.Sprintf("buffer %d (%d bytes decompressed)", i/2, declared)); err != nil {
			return err
		}
		if err := checkFrames(io.NewSectionReader(r, start+off+8, n-8), bb.codec, declared, b); err != nil {
			return fmt.Errorf("buffer %d: %w", i/2, err)
		}
	}
	return nil
}

// readAt reads n bytes at off of a file of size bytes, or says why not.
func readAt(r io.ReaderAt, size, off, n int64, what string) ([]byte, error) {
	if off < 0 || n < 0 || off > size || n > size-off {
		return nil, corrupt("%s: %d bytes at offset %d run past the end of the file (%d bytes)", what, n, off, size)
	}
	if n > maxMetadataSize {
		return nil, corrupt("%s: %d bytes of metadata, more than the limit of %d", what, n, maxMetadataSize)
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return b, nil
}

// A messageError is a problem with message index of a stream.
type messageError struct {
	index int
	err   error
}

func (e *messageError) Error() string { return fmt.Sprintf("message %d: %v", e.index, e.err) }
func (e *messageError) Unwrap() error { return e.err }

// checkStream checks the metadata of every message of the IPC stream r
// (size bytes), framed as arrow-go's stream reader frames it, and every
// batch's body, spending b.
func checkStream(r io.ReaderAt, size int64, b *budget) error {
	var vc *viewCounts
	for i, pos := 0, int64(0); pos < size; i++ {
		body, next, bb, err := checkStreamMessage(r, size, pos, &vc)
		if err != nil {
			return &messageError{i, err}
		}
		if next < 0 {
			return nil // end of stream
		}
		if body < 0 || body > size-next {
			return &messageError{i, corrupt("a body of %d bytes at offset %d runs past the end of the file (%d bytes)", body, next, size)}
		}
		if bb != nil {
			if err := checkBody(r, next, body, bb, b); err != nil {
				return &messageError{i, err}
			}
		}
		pos = next + body
	}
	return nil
}

// checkStreamMessage checks the message at pos and returns its body length
// and where the body starts, next -1 at the end-of-stream marker, and a
// batch's body layout.
func checkStreamMessage(r io.ReaderAt, size, pos int64, vc **viewCounts) (body, next int64, bb *batchBody, err error) {
	if size-pos < 4 {
		return 0, 0, nil, corrupt("%d stray bytes at the end", size-pos)
	}
	hdr, err := readAt(r, size, pos, 4, "length")
	if err != nil {
		return 0, 0, nil, err
	}
	n, prefix := int64(int32(binary.LittleEndian.Uint32(hdr))), int64(4)
	if n == -1 { // the continuation marker, then the length
		if hdr, err = readAt(r, size, pos+4, 4, "length"); err != nil {
			return 0, 0, nil, err
		}
		n, prefix = int64(int32(binary.LittleEndian.Uint32(hdr))), 8
	}
	switch {
	case n == 0:
		return 0, -1, nil, nil
	case n < 4:
		return 0, 0, nil, corrupt("metadata length %d", n)
	}
	meta, err := readAt(r, size, pos+prefix, n, "metadata")
	if err != nil {
		return 0, 0, nil, err
	}
	body, bb, err = checkMessage(meta, vc)
	return body, pos + prefix + n, bb, err
}

// fileMagic is what an IPC file starts with (padded to 8 bytes) and ends
// with.
const fileMagic = 8

// checkFile checks the footer of the IPC file r (size bytes), the metadata
// of every message it lists and their bodies, spending b: the blocks must
// lie between the leading magic and the footer, in order, none overlapping
// another (one block listed over and over would be read as often).
func checkFile(r io.ReaderAt, size int64, b *budget) error {
	const tail = 10 // footer length, then "ARROW1"
	if size <= 16 {
		return corrupt("a file of %d bytes is too small", size)
	}
	lb, err := readAt(r, size, size-tail, 4, "footer length")
	if err != nil {
		return err
	}
	n := int64(binary.LittleEndian.Uint32(lb))
	if n <= 0 || n+16 > size {
		return corrupt("footer length %d in a file of %d bytes", n, size)
	}
	footerStart := size - tail - n
	footer, err := readAt(r, size, footerStart, n, "footer")
	if err != nil {
		return err
	}
	f := newFBBuf(footer)
	pos, err := f.root(footerFB)
	if err != nil {
		return fmt.Errorf("footer: %w", err)
	}
	var vc *viewCounts
	if s := f.tableAt(pos, 1); s != 0 {
		vc = f.schemaViews(s)
	}
	var spans []fileSpan
	for _, list := range []struct {
		id   int
		name string
	}{{2, "dictionary"}, {3, "batch"}} {
		start, count := f.vectorAt(pos, list.id)
		if count > b.Batches-int64(len(spans)) {
			return fmt.Errorf("%w: the footer lists more than %d batches (--max-batches)", ErrBatchLimit, b.Batches)
		}
		for i := range count {
			blk := start + 24*i // Block: offset int64, metaDataLength int32, pad, bodyLength int64
			what := fmt.Sprintf("%s %d", list.name, i)
			off, metaLen, bodyLen := f.i64(blk), int64(int32(f.u32(blk+8))), f.i64(blk+16)
			if off < fileMagic || metaLen < 0 || bodyLen < 0 || metaLen > footerStart-off || bodyLen > footerStart-off-metaLen {
				return corrupt("%s: a block of %d+%d bytes at offset %d is not between the file's magic and its footer (at %d)",
					what, metaLen, bodyLen, off, footerStart)
			}
			if i > 0 && off < spans[len(spans)-1].end {
				return corrupt("%s at offset %d: the footer's blocks must be in order, each after the one before (which ends at %d)",
					what, off, spans[len(spans)-1].end)
			}
			spans = append(spans, fileSpan{off, off + metaLen + bodyLen, what})
			meta, err := readAt(r, size, off, metaLen, what)
			if err != nil {
				return err
			}
			prefix := int64(4)
			if len(meta) >= 4 && binary.LittleEndian.Uint32(meta) == 0xFFFFFFFF {
				prefix = 8
			}
			if int64(len(meta)) < prefix+4 {
				return corrupt("%s: metadata of %d bytes", what, len(meta))
			}
			_, bb, err := checkMessage(meta[prefix:], &vc)
			if err == nil && bb != nil {
				err = checkBody(r, off+metaLen, bodyLen, bb, b)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
		}
	}
	return overlapping(spans)
}

// A fileSpan is the bytes of one block of an IPC file.
type fileSpan struct {
	off, end int64
	what     string
}

// overlapping reports two blocks that share bytes, across the footer's two
// lists (each is in order already).
func overlapping(spans []fileSpan) error {
	slices.SortFunc(spans, func(a, b fileSpan) int { return cmp.Compare(a.off, b.off) })
	for i := 1; i < len(spans); i++ {
		if spans[i].off < spans[i-1].end {
			return corrupt("%s (at offset %d) and %s (at %d) share bytes: each block is listed once", spans[i-1].what, spans[i-1].off, spans[i].what, spans[i].off)
		}
	}
	return nil
}
