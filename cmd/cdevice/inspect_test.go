package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice/internal/ipcverify"
	"github.com/purearrow/cdevice/internal/testkit/ipcinputs"
)

const goldDir = "../../testdata/arrow-integration/cpp-21.0.0"

type inspectJSON struct {
	File      string    `json:"file"`
	Format    string    `json:"format"`
	Batches   int       `json:"batches"`
	Rows      int64     `json:"rows"`
	BatchRows []int64   `json:"batch_rows"`
	Schema    *nodeJSON `json:"schema"`
}

type nodeJSON struct {
	Format            string  `json:"format"`
	Name              *string `json:"name"`
	Flags             int64   `json:"flags"`
	Nullable          bool    `json:"nullable"`
	DictionaryOrdered bool    `json:"dictionary_ordered"`
	MapKeysSorted     bool    `json:"map_keys_sorted"`
	Metadata          []struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	} `json:"metadata"`
	NChildren  int64       `json:"n_children"`
	Children   []*nodeJSON `json:"children"`
	Dictionary *nodeJSON   `json:"dictionary"`
}

// child returns the top-level field called name.
func (n *nodeJSON) child(t *testing.T, name string) *nodeJSON {
	t.Helper()
	for _, c := range n.Children {
		if c.Name != nil && *c.Name == name {
			return c
		}
	}
	t.Fatalf("no field %q", name)
	return nil
}

func inspectJSONOf(t *testing.T, path string) inspectJSON {
	t.Helper()
	r := runCommand(t, nil, "inspect", path, "--json") // flags after the file work too
	if r.code != 0 {
		t.Fatalf("inspect %s: exit %d\n%s", path, r.code, r.stderr)
	}
	var rep inspectJSON
	decode(t, r, &rep)
	return rep
}

// countRows reads the file with arrow-go's IPC reader: the batch and row
// counts inspect must report.
func countRows(t *testing.T, path string) (batches int, rows int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if strings.HasSuffix(path, ".stream") {
		r, err := ipc.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		for r.Next() {
			batches++
			rows += r.RecordBatch().NumRows()
		}
		return batches, rows
	}
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := range r.NumRecords() {
		rec, err := r.RecordBatchAt(i)
		if err != nil {
			t.Fatal(err)
		}
		batches++
		rows += rec.NumRows()
		rec.Release()
	}
	return batches, rows
}

func TestInspectNestedFile(t *testing.T) {
	path := filepath.Join(goldDir, "generated_nested.arrow_file")
	r := runCommand(t, nil, "inspect", path)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	batches, rows := countRows(t, path)
	for _, want := range []string{
		"Arrow IPC file", "ArrowSchema tree",
		`format="+s" name="" flags=0 n_children=3`,
		`children[0]: format="+l" name="list_nullable" flags=2(nullable) n_children=1 dictionary=NULL`,
		`format="i" name="item"`, `format="+w:4"`, `format="u" name="f2"`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if want := plural(batches, "batch", "batches") + ", " + plural(rows, "row", "rows"); !strings.Contains(r.stdout, want) {
		t.Errorf("output lacks %q:\n%s", want, r.stdout)
	}

	rep := inspectJSONOf(t, path)
	if rep.Format != "file" || rep.Batches != batches || rep.Rows != rows || len(rep.BatchRows) != batches {
		t.Errorf("format %q, %d batches (%v), %d rows; want file, %d, %d", rep.Format, rep.Batches, rep.BatchRows, rep.Rows, batches, rows)
	}
	root := rep.Schema
	if root == nil || root.Format != "+s" || root.NChildren != int64(len(root.Children)) || root.NChildren == 0 {
		t.Fatalf("root %+v", root)
	}
	l := root.child(t, "list_nullable")
	if l.Format != "+l" || !l.Nullable || l.Flags != 2 || l.NChildren != 1 || l.Children[0].Format != "i" {
		t.Errorf("list_nullable %+v", l)
	}
	s := root.child(t, "struct_nullable")
	if s.Format != "+s" || s.NChildren != 2 || s.Children[1].Format != "u" {
		t.Errorf("struct_nullable %+v", s)
	}
}

func TestInspectStreams(t *testing.T) {
	// Dictionaries: the index type's format, with the values as the
	// dictionary node.
	path := filepath.Join(goldDir, "generated_dictionary.stream")
	rep := inspectJSONOf(t, path)
	batches, rows := countRows(t, path)
	if rep.Format != "stream" || rep.Batches != batches || rep.Rows != rows {
		t.Errorf("format %q, %d batches, %d rows; want stream, %d, %d", rep.Format, rep.Batches, rep.Rows, batches, rows)
	}
	d := rep.Schema.child(t, "dict0")
	if d.Dictionary == nil || d.Dictionary.Format != "u" || d.Format == "u" {
		t.Errorf("dict0 %+v, dictionary %+v", d, d.Dictionary)
	}
	r := runCommand(t, nil, "inspect", path)
	if !strings.Contains(r.stdout, "dictionary=set") || !strings.Contains(r.stdout, `dictionary: format="u"`) {
		t.Errorf("text lacks the dictionary:\n%s", r.stdout)
	}

	// Metadata on the schema and on fields, decoded from the C layout.
	path = filepath.Join(goldDir, "generated_custom_metadata.stream")
	rep = inspectJSONOf(t, path)
	if len(rep.Schema.Metadata) == 0 || rep.Schema.Metadata[0].Key != "schema_custom_0" {
		t.Errorf("schema metadata %+v", rep.Schema.Metadata)
	}
	if f := rep.Schema.child(t, "lots_of_meta"); len(f.Metadata) < 4 {
		t.Errorf("lots_of_meta metadata %+v", f.Metadata)
	}
	r = runCommand(t, nil, "inspect", path)
	if !strings.Contains(r.stdout, `metadata: "schema_custom_0" = "{}"`) ||
		!strings.Contains(r.stdout, `metadata: "ARROW:extension:name" = "!nonexistent"`) {
		t.Errorf("text lacks metadata:\n%s", r.stdout)
	}
}

// Flags that Arrow's gold files never set: an ordered dictionary and a map
// with sorted keys, in a file this test writes.
func TestInspectFlags(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ordered", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String, Ordered: true}, Nullable: true},
		{Name: "sorted", Type: func() arrow.DataType {
			m := arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32)
			m.KeysSorted = true
			return m
		}()},
	}, nil)
	mem := memory.NewGoAllocator()
	ord, _, err := array.FromJSON(mem, schema.Field(0).Type, strings.NewReader(`["b", "a", null]`))
	if err != nil {
		t.Fatal(err)
	}
	defer ord.Release()
	srt, _, err := array.FromJSON(mem, schema.Field(1).Type, strings.NewReader(`[[{"key": "a", "value": 1}], [], [{"key": "x", "value": 2}, {"key": "y", "value": null}]]`))
	if err != nil {
		t.Fatal(err)
	}
	defer srt.Release()
	rec := array.NewRecordBatch(schema, []arrow.Array{ord, srt}, 3)
	defer rec.Release()

	path := filepath.Join(t.TempDir(), "flags.arrows")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := ipc.NewWriter(f, ipc.WithSchema(schema))
	for range 2 {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	rep := inspectJSONOf(t, path)
	if rep.Format != "stream" || rep.Batches != 2 || rep.Rows != 6 {
		t.Errorf("format %q, %d batches, %d rows; want stream, 2, 6", rep.Format, rep.Batches, rep.Rows)
	}
	o := rep.Schema.child(t, "ordered")
	if o.Format != "c" || !o.DictionaryOrdered || !o.Nullable || o.Flags != 3 || o.Dictionary == nil || o.Dictionary.Format != "u" {
		t.Errorf("ordered %+v", o)
	}
	m := rep.Schema.child(t, "sorted")
	if m.Format != "+m" || !m.MapKeysSorted || m.Nullable || m.Flags != 4 {
		t.Errorf("sorted %+v", m)
	}
	r := runCommand(t, nil, "inspect", path)
	for _, want := range []string{"flags=3(dictionary_ordered|nullable)", "flags=4(map_keys_sorted)", "2 batches, 6 rows"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text lacks %q:\n%s", want, r.stdout)
		}
	}
}

// Every gold file inspects cleanly, with the counts arrow-go reads.
func TestInspectGold(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(goldDir, "generated_*.stream"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no gold files in %s: %v", goldDir, err)
	}
	more, _ := filepath.Glob(filepath.Join(goldDir, "generated_*.arrow_file"))
	for _, path := range append(paths, more...) {
		r := runCommand(t, nil, "inspect", "--json", path)
		if r.code != 0 {
			t.Errorf("%s: exit %d: %s", filepath.Base(path), r.code, r.stderr)
			continue
		}
		var rep inspectJSON
		decode(t, r, &rep)
		if batches, rows := countRows(t, path); rep.Batches != batches || rep.Rows != rows {
			t.Errorf("%s: %d batches, %d rows; want %d, %d", filepath.Base(path), rep.Batches, rep.Rows, batches, rows)
		}
	}
}

func TestInspectErrors(t *testing.T) {
	dir := t.TempDir()
	notArrow := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notArrow, []byte("these are not the bytes you are looking for\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.arrow")
	gold, err := os.ReadFile(filepath.Join(goldDir, "generated_nested.arrow_file"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(truncated, gold[:len(gold)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want []string
	}{
		{filepath.Join(dir, "missing.arrow"), []string{"missing.arrow: no such file", "check the path"}},
		{notArrow, []string{"notes.txt is not an Arrow IPC file or stream", "ARROW1"}},
		{truncated, []string{"truncated.arrow starts like an Arrow IPC file but cannot be read"}},
		{dir, []string{"is a directory"}},
	} {
		r := runCommand(t, nil, "inspect", c.path)
		if r.code != 1 || r.stdout != "" {
			t.Errorf("inspect %s: exit %d, stdout %q", c.path, r.code, r.stdout)
		}
		for _, want := range c.want {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("inspect %s: stderr %q lacks %q", c.path, r.stderr, want)
			}
		}
	}
}

// A dictionary that every batch of a stream refers to is validated once,
// not with each batch: 2000 one-row batches under a 4 MiB dictionary are
// read (at its 2000th batch a re-validation read 8 GB; the file is 4.7 MB).
func TestInspectSharedDictionary(t *testing.T) {
	p := filepath.Join(t.TempDir(), "dict.arrows")
	if err := os.WriteFile(p, ipcinputs.IPCBytes(t, false, ipcinputs.DictionaryBatches(t, 2000)), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := inspectFile(p, ipcverify.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Batches != 2000 || rep.Rows != 2000 {
		t.Errorf("%d batches, %d rows; want 2000 of each", rep.Batches, rep.Rows)
	}
}
