package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
)

const inspectUsage = `usage: cdevice inspect [--json] FILE

Read an Arrow IPC file (it starts with the magic "ARROW1") or stream (any
other file), export its schema through the C Data Interface
(cdevice.ExportSchema into an ArrowSchema in C memory) and print the tree a
C consumer reads from those structs: for each node its format string, name,
flags (nullable, dictionary ordered, map keys sorted), metadata, n_children
and dictionary. Every batch is exported as an ArrowArray too and imported
back with full validation; the batch and row counts come from those structs.

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
	rep, err := inspectFile(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "cdevice inspect: %v\n", err)
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

func inspectFile(path string) (*inspectReport, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file; check the path (an Arrow IPC file or stream, e.g. data.arrow or data.arrows)", path)
		}
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s is a directory; name an Arrow IPC file or stream in it", path)
	}
	magic := make([]byte, 6)
	n, _ := io.ReadFull(f, magic)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	rep := &inspectReport{File: path, BatchRows: []int64{}}

	// The batches go through the C path and are validated in full.
	defer cdevice.SetIdentityImports(cdevice.SetIdentityImports(false))
	var sc *arrow.Schema
	if bytes.Equal(magic[:n], []byte("ARROW1")) {
		rep.Format = "file"
		r, err := ipc.NewFileReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s starts like an Arrow IPC file but cannot be read as one: %w", path, err)
		}
		defer r.Close()
		sc = r.Schema()
		for i := range r.NumRecords() {
			rec, err := r.RecordBatchAt(i)
			if err != nil {
				return nil, fmt.Errorf("%s: batch %d: %w", path, i, err)
			}
			rows, err := throughC(rec)
			rec.Release()
			if err != nil {
				return nil, fmt.Errorf("%s: batch %d: %w", path, i, err)
			}
			rep.BatchRows = append(rep.BatchRows, rows)
		}
	} else {
		rep.Format = "stream"
		r, err := ipc.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("%s is not an Arrow IPC file or stream (no \"ARROW1\" magic at the start, and reading it as a stream failed: %v)", path, err)
		}
		defer r.Release()
		sc = r.Schema()
		for r.Next() {
			rows, err := throughC(r.RecordBatch())
			if err != nil {
				return nil, fmt.Errorf("%s: batch %d: %w", path, len(rep.BatchRows), err)
			}
			rep.BatchRows = append(rep.BatchRows, rows)
		}
		if err := r.Err(); err != nil {
			return nil, fmt.Errorf("%s: batch %d: %w", path, len(rep.BatchRows), err)
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

// throughC exports rec as an ArrowArray, reads its length from the struct,
// and imports it back with full validation (which releases it).
func throughC(rec arrow.RecordBatch) (int64, error) {
	arr := cdevice.New[abi.Array]()
	defer cdevice.Free(arr)
	if err := cdevice.ExportRecordBatch(rec, arr, nil); err != nil {
		return 0, fmt.Errorf("ExportRecordBatch: %w", err)
	}
	rows := arr.Length
	got, err := cdevice.ImportRecordBatchWithSchema(arr, rec.Schema(), cdevice.WithFullValidation())
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
	md, err := cdevice.DecodeMetadata(abi.Pointer(s.Metadata))
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
