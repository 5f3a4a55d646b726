package main

import (
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
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/cmeta"
	"github.com/purearrow/cdevice/internal/identity"
	"github.com/purearrow/cdevice/internal/ipcverify"
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
	var lim ipcverify.Limits
	var maxMemory, maxData byteSize
	fs.Var(&maxMemory, "max-memory", "the most memory reading the file may hold at once: a number, or with KiB, MiB, GiB (default 64MiB + 16 × the file's size)")
	fs.Var(&maxData, "max-data", "the most batch data (decompressed) reading the file may produce in all (default 64MiB + 64 × the file's size)")
	fs.Int64Var(&lim.Batches, "max-batches", ipcverify.DefaultBatches, "the most record and dictionary batches to read")
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
	if lim.Batches < 1 {
		return usageError(stderr, "inspect", "--max-batches %d: want 1 or more", lim.Batches)
	}
	lim.Memory, lim.Data = int64(maxMemory), int64(maxData)
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
// limits: the defaults for the file's size), verified (ipcverify), every
// batch through C.
func inspectFile(path string, lim ipcverify.Limits) (*inspectReport, error) {
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
	rep := &inspectReport{File: path, BatchRows: []int64{}}
	// The batches go through the C path.
	defer identity.Set(identity.Set(false))
	res, err := ipcverify.Read(file, st.Size(), lim, func(rec arrow.RecordBatch) error {
		rows, err := throughC(rec)
		if err == nil {
			rep.BatchRows = append(rep.BatchRows, rows)
		}
		return err
	})
	switch {
	case errors.Is(err, ipcverify.ErrNotArrow), errors.Is(err, ipcverify.ErrNotFile):
		return nil, fmt.Errorf("%s %w", path, err)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rep.Format = res.Format
	sc := res.Schema
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

// readSchema reads the ArrowSchema tree at s from the C structs themselves.
func readSchema(s *abi.Schema, depth int) (*schemaNode, error) {
	if depth > ipcverify.MaxSchemaDepth {
		return nil, fmt.Errorf("schema nested deeper than %d levels", ipcverify.MaxSchemaDepth)
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
