package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/cmeta"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/regular"
)

const inspectUsage = `usage: cdevice inspect [--json] [--max-memory BYTES] [--max-data BYTES] [--max-batches N] FILE

Read an Arrow IPC file (it starts with the magic "ARROW1") or stream (any
other file), export its schema through the C Data Interface
(cdevice.ExportSchema into an ArrowSchema in C memory) and print the tree a
C consumer reads from those structs: for each node its format string, name,
flags (nullable, dictionary ordered, map keys sorted), metadata, n_children
and dictionary. Every batch is validated in full (a dictionary the first
time a batch refers to it), exported as an ArrowArray and imported back;
the batch and row counts come from those structs.

A corrupt file is an error that names the file and the batch, never a crash:
its metadata is checked before arrow-go decodes it, each batch is validated
in full before it crosses the C boundary, and reading holds at most
--max-memory bytes at once. The work is bounded by the file, not only per
allocation: a file's footer must list each block once, in order; compressed
buffers are checked frame by frame before they are decoded (a ZSTD window
or LZ4 block beyond a quarter of --max-memory is refused); the batches may
produce at most --max-data bytes of data in all (the buffers validated and
exported count at every reference: a dictionary each batch refers to, buffers
that overlap in a body), and there may be at most --max-batches of them.
FILE must be a regular file (not a pipe or a device: its size bounds the
work). Crossing a limit is an error naming it.

Exit status: 0 on success, 1 when the file cannot be read or is not Arrow,
2 on a usage error.

flags:
`

// A schemaNode is one ArrowSchema as read from the C struct.
type schemaNode struct {
	Format            string        `json:"format"`
	Name              *string       `json:"name"` // nil: NULL
	Flags             int64         `json:"flags"`
	Nullable          bool          `json:"nullable"`
	DictionaryOrdered bool          `json:"dictionary_ordered"`
	MapKeysSorted     bool          `json:"map_keys_sorted"`
	Metadata          []metadataKV  `json:"metadata"`
	NChildren         int64         `json:"n_children"`
	Children          []*schemaNode `json:"children"`
	Dictionary        *schemaNode   `json:"dictionary"`
}

type metadataKV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

type inspectReport struct {
	File      string      `json:"file"`
	Format    string      `json:"format"` // "file" or "stream"
	Batches   int         `json:"batches"`
	Rows      int64       `json:"rows"`
	BatchRows []int64     `json:"batch_rows"`
	Schema    *schemaNode `json:"schema"`
}

func inspect(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("inspect", inspectUsage, stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	var lim budget
	var maxMemory, maxData byteSize
	fs.Var(&maxMemory, "max-memory", "the most memory reading the file may hold at once: a number, or with KiB, MiB, GiB (default 64MiB + 16 × the file's size)")
	fs.Var(&maxData, "max-data", "the most batch data (decompressed) reading the file may produce in all (default 64MiB + 64 × the file's size)")
	fs.Int64Var(&lim.batches, "max-batches", defaultBatchLimit, "the most record and dictionary batches to read")
	rest, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	switch {
	case len(rest) == 0:
		return usageError(stderr, "inspect", "name an Arrow IPC file or stream to inspect")
	case len(rest) > 1:
		return usageError(stderr, "inspect", "one file at a time (got %d: %s)", len(rest), strings.Join(rest, " "))
	}
	if lim.batches < 1 {
		return usageError(stderr, "inspect", "--max-batches %d: want 1 or more", lim.batches)
	}
	lim.memory, lim.data = int64(maxMemory), int64(maxData)
	rep, err := inspectFile(rest[0], lim)
	if err != nil {
		fmt.Fprintf(stderr, "cdevice inspect: %s\n", printable(err.Error()))
		return exitFail
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "cdevice inspect: %v\n", err)
			return exitFail
		}
		return exitOK
	}
	printInspect(stdout, rep)
	return exitOK
}

// inspectFile reads the file at path within lim (its zero memory and data
// limits: the defaults for the file's size).
func inspectFile(path string, lim budget) (*inspectReport, error) {
	// A regular file only: its size bounds the work, where a FIFO's open
	// waited for a writer and a device (/dev/urandom) had no size to bound
	// what was read.
	file, err := regular.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file; check the path (an Arrow IPC file or stream, e.g. data.arrow or data.arrows)", path)
		}
		if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			return nil, fmt.Errorf("%s is a directory; name an Arrow IPC file or stream in it", path)
		}
		return nil, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	// Nothing past the size the limits were made for (a file in /proc
	// says 0 and reads on).
	f := io.NewSectionReader(file, 0, size)
	magic := make([]byte, 6)
	n, _ := io.ReadFull(f, magic)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	rep := &inspectReport{File: path, BatchRows: []int64{}}
	if lim.memory == 0 {
		lim.memory = defaultMemoryLimit(size)
	}
	if lim.data == 0 {
		lim.data = defaultDataLimit(size)
	}
	mem := newLimitedAllocator(memory.NewGoAllocator(), lim.memory, lim.data)
	opts := []ipc.Option{ipc.WithAllocator(mem), ipc.WithMetadataSizeLimit(maxMetadataSize), ipc.WithBodySizeLimit(size)}

	// The batches go through the C path and are validated in full.
	defer identity.Set(identity.Set(false))
	var sc *arrow.Schema
	// batch checks a batch that arrow-go read: in full before it crosses
	// the C boundary (the importer trusts its buffers' sizes), then
	// through C.
	seen := map[arrow.ArrayData]bool{} // dictionaries validated in full
	batch := func(rec arrow.RecordBatch) error {
		// Buffers may overlap in the body: what validation and export
		// read, at every reference, is charged to --max-data (on a count
		// of its own) before they read it. A dictionary that batches
		// refer to again is read once.
		if err := lim.spendWork(batchWork(rec, seen), "validating and exporting this batch's buffers"); err != nil {
			return err
		}
		if err := validateBatch(rec, seen); err != nil {
			return err
		}
		rows, err := throughC(rec)
		if err == nil {
			rep.BatchRows = append(rep.BatchRows, rows)
		}
		return err
	}
	if bytes.Equal(magic[:n], []byte("ARROW1")) {
		rep.Format = "file"
		var r *ipc.FileReader
		err := checkFile(f, size, &lim)
		if err == nil {
			err = guard(mem, func() (err error) {
				r, err = ipc.NewFileReader(f, opts...)
				return err
			})
		}
		if err != nil {
			return nil, fmt.Errorf("%s starts like an Arrow IPC file but cannot be read as one: %w", path, err)
		}
		defer r.Close()
		sc = r.Schema()
		for i := range r.NumRecords() {
			var rec arrow.RecordBatch
			err := guard(mem, func() (err error) {
				rec, err = r.RecordBatchAt(i)
				return err
			})
			if err == nil {
				err = batch(rec)
				rec.Release()
			}
			if err != nil {
				return nil, fmt.Errorf("%s: batch %d: %w", path, i, err)
			}
		}
	} else {
		rep.Format = "stream"
		var r *ipc.Reader
		err := checkStream(f, size, &lim)
		if err == nil {
			err = guard(mem, func() (err error) {
				r, err = ipc.NewReader(f, opts...)
				return err
			})
		}
		if err != nil {
			// A stream starts with the continuation marker (since Arrow
			// 0.15) and a schema: without either, it was never one.
			var m *messageError
			if !bytes.HasPrefix(magic[:n], []byte{0xff, 0xff, 0xff, 0xff}) && (!errors.As(err, &m) || m.index == 0) {
				return nil, fmt.Errorf("%s is not an Arrow IPC file or stream (no \"ARROW1\" magic at the start, and reading it as a stream failed: %w)", path, err)
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		defer r.Release()
		sc = r.Schema()
		for {
			var more bool
			err := guard(mem, func() error {
				more = r.Next()
				return r.Err()
			})
			if err == nil && more {
				err = batch(r.RecordBatch())
			}
			if err != nil {
				return nil, fmt.Errorf("%s: batch %d: %w", path, len(rep.BatchRows), err)
			}
			if !more {
				break
			}
		}
	}
	rep.Batches = len(rep.BatchRows)
	for _, n := range rep.BatchRows {
		rep.Rows += n
	}

	// The schema as a C consumer gets it: exported into C memory, read back
	// from the structs, then released (ImportSchema calls release).
	cs := cdevice.New[abi.Schema]()
	defer cdevice.Free(cs)
	if err := cdevice.ExportSchema(sc, cs); err != nil {
		return nil, fmt.Errorf("%s: ExportSchema: %w", path, err)
	}
	rep.Schema, err = readSchema(cs, 0)
	if _, ierr := cdevice.ImportSchema(cs); ierr != nil && err == nil {
		err = fmt.Errorf("importing the exported schema back: %w", ierr)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}

// batchWork is what validating and exporting rec reads: its buffers at
// every reference (buffers that overlap in a body count each time), but
// of a dictionary in seen only the indices.
func batchWork(rec arrow.RecordBatch, seen map[arrow.ArrayData]bool) int64 {
	var work int64
	for _, c := range rec.Columns() {
		if d := seenDictionary(c, seen); d != nil {
			work += bufferBytes(d.Indices().Data())
		} else {
			work += bufferBytes(c.Data())
		}
	}
	return work
}

// seenDictionary is c as a dictionary column whose dictionary is in seen,
// or nil.
func seenDictionary(c arrow.Array, seen map[arrow.ArrayData]bool) *array.Dictionary {
	if d, ok := c.(*array.Dictionary); ok && seen[d.Data().Dictionary()] {
		return d
	}
	return nil
}

// validateBatch validates rec in full, but for the dictionary columns
// whose dictionary an earlier batch's validation read (in seen): of those,
// the indices only, each within the dictionary. It adds rec's
// dictionaries to seen.
func validateBatch(rec arrow.RecordBatch, seen map[arrow.ArrayData]bool) error {
	var fields []arrow.Field
	var cols []arrow.Array
	for i, c := range rec.Columns() {
		d := seenDictionary(c, seen)
		if d == nil {
			fields, cols = append(fields, rec.Schema().Field(i)), append(cols, c)
			continue
		}
		if err := cdevice.ValidateFull(d.Indices()); err != nil {
			return fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
		}
		n := d.Dictionary().Len()
		for j := range d.Len() {
			if k := d.GetValueIndex(j); d.IsValid(j) && (k < 0 || k >= n) {
				return fmt.Errorf("%w: column %q: index %d at %d is outside the dictionary of %d", cdevice.ErrInvalid, rec.ColumnName(i), k, j, n)
			}
		}
	}
	check := rec
	if len(cols) < int(rec.NumCols()) {
		check = array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
		defer check.Release()
	}
	if err := cdevice.ValidateRecordBatch(check, cdevice.WithFullValidation()); err != nil {
		return err
	}
	for _, c := range rec.Columns() {
		if d, ok := c.(*array.Dictionary); ok {
			seen[d.Data().Dictionary()] = true
		}
	}
	return nil
}

// bufferBytes is the size of every buffer of d and of what it holds
// (children, dictionary), counted at each reference: what reading it in
// full reads.
func bufferBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += bufferBytes(c)
	}
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil { // a nil *array.Data: none
		n += bufferBytes(dict)
	}
	return n
}

// guard runs f, a call into arrow-go's IPC readers, which panic on some
// corrupt data that checkFile and checkStream let through: the panic
// becomes an error wrapping cdevice.ErrInvalid. When mem refused an
// allocation, that is the error (arrow-go may have turned the refusal into
// an error of its own).
func guard(mem *limitedAllocator, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: arrow-go's IPC reader failed on it: %v", cdevice.ErrInvalid, p)
		}
		if err != nil && mem.Err() != nil {
			err = fmt.Errorf("%w (a corrupt length, or a file that needs more of the limit)", mem.Err())
		}
	}()
	return f()
}

// printable escapes what a corrupt file can put into an error message (a
// field name, say) that a terminal would act on: control characters and
// invalid UTF-8.
func printable(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case unicode.IsGraphic(r):
			b.WriteString(s[:n])
		default:
			b.WriteString(strings.Trim(strconv.QuoteRune(r), "'"))
		}
		s = s[n:]
	}
	return b.String()
}

// throughC exports rec as an ArrowArray, reads its length from the struct,
// and imports it back (which releases it).
func throughC(rec arrow.RecordBatch) (int64, error) {
	arr := cdevice.New[abi.Array]()
	defer cdevice.Free(arr)
	if err := cdevice.ExportRecordBatch(rec, arr, nil); err != nil {
		return 0, fmt.Errorf("ExportRecordBatch: %w", err)
	}
	rows := arr.Length
	// The values were validated in full before the export (validateBatch,
	// a dictionary once): the import checks what the C structs say.
	got, err := cdevice.ImportRecordBatchWithSchema(arr, rec.Schema())
	if err != nil {
		return 0, fmt.Errorf("importing the exported batch: %w", err)
	}
	got.Release()
	return rows, nil
}

// maxSchemaDepth bounds the walk, as a careful C consumer would.
const maxSchemaDepth = 64

// readSchema reads the ArrowSchema tree at s from the C structs themselves.
func readSchema(s *abi.Schema, depth int) (*schemaNode, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("schema nested deeper than %d levels", maxSchemaDepth)
	}
	if s.Released() {
		return nil, errors.New("an ArrowSchema node is released")
	}
	if s.Format == 0 {
		return nil, errors.New("an ArrowSchema node has a NULL format")
	}
	n := &schemaNode{
		Format:            cString(s.Format),
		Flags:             s.Flags,
		Nullable:          s.Flags&abi.FlagNullable != 0,
		DictionaryOrdered: s.Flags&abi.FlagDictionaryOrdered != 0,
		MapKeysSorted:     s.Flags&abi.FlagMapKeysSorted != 0,
		NChildren:         s.NChildren,
		Metadata:          []metadataKV{},
		Children:          []*schemaNode{},
	}
	if s.Name != 0 {
		name := cString(s.Name)
		n.Name = &name
	}
	md, err := cmeta.Decode(s.Metadata)
	if err != nil {
		return nil, fmt.Errorf("%q: metadata: %w", n.Format, err)
	}
	for i, k := range md.Keys() {
		n.Metadata = append(n.Metadata, metadataKV{Key: k, Value: md.Values()[i]})
	}
	if s.NChildren < 0 || (s.NChildren > 0 && s.Children == 0) {
		return nil, fmt.Errorf("%q: n_children %d with children %#x", n.Format, s.NChildren, s.Children)
	}
	for i := range int(s.NChildren) {
		c := s.Child(i)
		if c == nil {
			return nil, fmt.Errorf("%q: children[%d] is NULL", n.Format, i)
		}
		cn, err := readSchema(c, depth+1)
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, cn)
	}
	if s.Dictionary != 0 {
		if n.Dictionary, err = readSchema((*abi.Schema)(abi.Pointer(s.Dictionary)), depth+1); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// cString reads the NUL-terminated C string at p.
func cString(p uintptr) string {
	base := abi.Pointer(p)
	n := 0
	for *(*byte)(unsafe.Add(base, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(base), n))
}

func printInspect(w io.Writer, rep *inspectReport) {
	kind := "Arrow IPC file"
	if rep.Format == "stream" {
		kind = "Arrow IPC stream"
	}
	fmt.Fprintf(w, "%s: %s, %s, %s\n\n", rep.File, kind, plural(rep.Batches, "batch", "batches"), plural(rep.Rows, "row", "rows"))
	fmt.Fprintln(w, "ArrowSchema tree as a C consumer reads it (cdevice.ExportSchema):")
	printNode(w, rep.Schema, "", "")
}

func printNode(w io.Writer, n *schemaNode, indent, label string) {
	name := "NULL"
	if n.Name != nil {
		name = fmt.Sprintf("%q", *n.Name)
	}
	dict := "NULL"
	if n.Dictionary != nil {
		dict = "set"
	}
	fmt.Fprintf(w, "%s%sformat=%q name=%s flags=%s n_children=%d dictionary=%s\n",
		indent, label, n.Format, name, flagString(n), n.NChildren, dict)
	inner := indent + "    "
	for _, kv := range n.Metadata {
		fmt.Fprintf(w, "%smetadata: %q = %q\n", inner, kv.Key, kv.Value)
	}
	for i, c := range n.Children {
		printNode(w, c, inner, fmt.Sprintf("children[%d]: ", i))
	}
	if n.Dictionary != nil {
		printNode(w, n.Dictionary, inner, "dictionary: ")
	}
}

func flagString(n *schemaNode) string {
	var names []string
	if n.DictionaryOrdered {
		names = append(names, "dictionary_ordered")
	}
	if n.Nullable {
		names = append(names, "nullable")
	}
	if n.MapKeysSorted {
		names = append(names, "map_keys_sorted")
	}
	if len(names) == 0 {
		return fmt.Sprint(n.Flags)
	}
	return fmt.Sprintf("%d(%s)", n.Flags, strings.Join(names, "|"))
}

func plural[N int | int64](n N, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
