package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// The output formats, by --format's name.
var formats = map[string]func(w io.Writer, sc *arrow.Schema, o *output) (sink, error){
	"table":   newTableSink,
	"csv":     func(w io.Writer, sc *arrow.Schema, _ *output) (sink, error) { return newDelimited(w, sc, ','), nil },
	"tsv":     func(w io.Writer, sc *arrow.Schema, _ *output) (sink, error) { return newDelimited(w, sc, '\t'), nil },
	"json":    func(w io.Writer, sc *arrow.Schema, _ *output) (sink, error) { return newJSONLines(w, sc), nil },
	"arrow":   func(w io.Writer, sc *arrow.Schema, _ *output) (sink, error) { return newIPC(w, sc, true) },
	"arrows":  func(w io.Writer, sc *arrow.Schema, _ *output) (sink, error) { return newIPC(w, sc, false) },
	"parquet": func(w io.Writer, sc *arrow.Schema, _ *output) (sink, error) { return newParquet(w, sc) },
}

// formatNames lists the formats, for messages.
const formatNames = "table, csv, tsv, json, arrow, arrows, parquet"

// extensions are the formats --out's extension chooses.
var extensions = map[string]string{
	".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".json": "json", ".jsonl": "json", ".ndjson": "json",
	".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow", ".arrows": "arrows", ".parquet": "parquet", ".txt": "table",
}

// formatOf is the format of an output: --format's, else the --out file's
// extension's, else a table; an extension no format has is an error.
func formatOf(format, out string) (string, error) {
	if format != "" {
		if formats[format] == nil {
			return "", fmt.Errorf("--format %s: want one of %s", format, formatNames)
		}
		return format, nil
	}
	if out == "" {
		return "table", nil
	}
	ext := strings.ToLower(filepath.Ext(out))
	f, ok := extensions[ext]
	if !ok {
		return "", fmt.Errorf("--out %s: no format for %q files (name one with --format: %s)", out, ext, formatNames)
	}
	return f, nil
}

// A sink takes a result's batches in order; end finishes a result read to
// its end, abort one cut short (nothing says it was complete).
type sink interface {
	write(rec arrow.RecordBatch) error
	end() error
	abort()
}

// binary says whether a format writes bytes a terminal should not get.
func binary(format string) bool {
	return format == "arrow" || format == "arrows" || format == "parquet"
}

// cell renders one value: arrow-go's rendering (an extension type's, such
// as PostgreSQL's numeric, its storage's), with "" and null set apart by
// ok.
func cell(col arrow.Array, i int) (s string, ok bool) {
	if col.IsNull(i) {
		return "", false
	}
	if e, isExt := col.(array.ExtensionArray); isExt {
		col = e.Storage()
	}
	return col.ValueStr(i), true
}

// rendered runs f, which renders a batch's values, and turns a panic of
// arrow-go's rendering (a type it cannot print) into an error.
func rendered(f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("a value this output cannot render: %v", p)
		}
	}()
	return f()
}

// delimited writes CSV or TSV: a header, then a line a row, NULL as an
// empty field (as psql --csv and sqlite3 -csv write it).
type delimited struct {
	w     *csv.Writer
	tsv   bool
	names []string
}

func newDelimited(w io.Writer, sc *arrow.Schema, comma rune) *delimited {
	d := &delimited{w: csv.NewWriter(w), tsv: comma == '\t'}
	d.w.Comma = comma
	for _, f := range sc.Fields() {
		d.names = append(d.names, f.Name)
	}
	d.w.Write(d.names)
	return d
}

var tsvEscapes = strings.NewReplacer("\\", `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

func (d *delimited) write(rec arrow.RecordBatch) error {
	return rendered(func() error { return d.rows(rec) })
}

func (d *delimited) rows(rec arrow.RecordBatch) error {
	row := make([]string, rec.NumCols())
	for i := range int(rec.NumRows()) {
		for j, col := range rec.Columns() {
			s, _ := cell(col, i)
			if d.tsv {
				s = tsvEscapes.Replace(s)
			}
			row[j] = s
		}
		if err := d.w.Write(row); err != nil {
			return err
		}
	}
	d.w.Flush()
	return d.w.Error()
}

func (d *delimited) end() error { d.w.Flush(); return d.w.Error() }
func (d *delimited) abort()     { d.w.Flush() }

// jsonLines writes a JSON object a row, its keys the columns in order,
// NULL as null.
type jsonLines struct {
	w    *bufio.Writer
	keys [][]byte
}

func newJSONLines(w io.Writer, sc *arrow.Schema) *jsonLines {
	j := &jsonLines{w: bufio.NewWriter(w)}
	for _, f := range sc.Fields() {
		k, _ := json.Marshal(f.Name)
		j.keys = append(j.keys, k)
	}
	return j
}

func (j *jsonLines) write(rec arrow.RecordBatch) error {
	return rendered(func() error { return j.rows(rec) })
}

func (j *jsonLines) rows(rec arrow.RecordBatch) error {
	for i := range int(rec.NumRows()) {
		j.w.WriteByte('{')
		for c, col := range rec.Columns() {
			if c > 0 {
				j.w.WriteByte(',')
			}
			j.w.Write(j.keys[c])
			j.w.WriteByte(':')
			if e, isExt := col.(array.ExtensionArray); isExt {
				col = e.Storage()
			}
			v, err := json.Marshal(col.GetOneForMarshal(i))
			if err != nil {
				return fmt.Errorf("column %s, row %d: %w", j.keys[c], i, err)
			}
			j.w.Write(v)
		}
		j.w.WriteString("}\n")
	}
	return j.w.Flush()
}

func (j *jsonLines) end() error { return j.w.Flush() }
func (j *jsonLines) abort()     { j.w.Flush() }

// ipcSink writes Arrow IPC: the file format (file) or the stream format.
type ipcSink struct {
	w interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
}

func newIPC(w io.Writer, sc *arrow.Schema, file bool) (sink, error) {
	if !file {
		return &ipcSink{ipc.NewWriter(w, ipc.WithSchema(sc))}, nil
	}
	fw, err := ipc.NewFileWriter(w, ipc.WithSchema(sc))
	if err != nil {
		return nil, err
	}
	return &ipcSink{fw}, nil
}

func (s *ipcSink) write(rec arrow.RecordBatch) error { return s.w.Write(rec) }
func (s *ipcSink) end() error                        { return s.w.Close() }
func (s *ipcSink) abort()                            { s.w.Close() }

// parquetSink writes Parquet through arrow-go's pqarrow, a row group per
// rowGroupRows rows (what it buffers), ZSTD-compressed.
type parquetSink struct{ w *pqarrow.FileWriter }

const rowGroupRows = 64 << 10

func newParquet(w io.Writer, sc *arrow.Schema) (sink, error) {
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(rowGroupRows), parquet.WithCompression(compress.Codecs.Zstd))
	fw, err := pqarrow.NewFileWriter(sc, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return nil, err
	}
	return &parquetSink{fw}, nil
}

func (s *parquetSink) write(rec arrow.RecordBatch) error { return s.w.WriteBuffered(rec) }
func (s *parquetSink) end() error                        { return s.w.Close() }
func (s *parquetSink) abort()                            { s.w.Close() }

// tableSink prints aligned columns: the first limit rows (0: all), each
// cell cut to fit the terminal's width unless wide, NULL set apart; after
// them, how many rows there were beyond. Widths come from the rows of the
// first block; later blocks are cut to them.
type tableSink struct {
	w      io.Writer
	o      *output
	names  []string
	right  []bool        // numbers align right
	block  [][]tableCell // the rows not yet printed
	widths []int
	shown  int64
	hidden int64
}

// oneLine escapes what would break a table's line.
var oneLine = strings.NewReplacer("\t", `\t`, "\n", `\n`, "\r", `\r`)

type tableCell struct {
	s    string
	null bool
}

// tableBlock is how many rows a table's widths are measured over.
const tableBlock = 1000

func newTableSink(w io.Writer, sc *arrow.Schema, o *output) (sink, error) {
	t := &tableSink{w: w, o: o}
	for _, f := range sc.Fields() {
		t.names = append(t.names, f.Name)
		t.right = append(t.right, arrow.IsInteger(f.Type.ID()) || arrow.IsFloating(f.Type.ID()) || arrow.IsDecimal(f.Type.ID()))
	}
	return t, nil
}

func (t *tableSink) write(rec arrow.RecordBatch) error {
	return rendered(func() error { t.rows(rec); return nil })
}

func (t *tableSink) rows(rec arrow.RecordBatch) {
	for i := range int(rec.NumRows()) {
		if t.o.limit > 0 && t.shown+int64(len(t.block)) >= int64(t.o.limit) {
			t.hidden += rec.NumRows() - int64(i)
			return
		}
		row := make([]tableCell, rec.NumCols())
		for j, col := range rec.Columns() {
			s, ok := cell(col, i)
			// A copy: the batch's memory (the driver's) goes with it,
			// before the block is printed.
			row[j] = tableCell{strings.Clone(oneLine.Replace(s)), !ok}
		}
		t.block = append(t.block, row)
		if len(t.block) == tableBlock {
			t.flush()
		}
	}
}

// flush prints the block, measuring the widths first where it is the
// first.
func (t *tableSink) flush() {
	if t.widths == nil {
		t.measure()
		t.line(t.header(), nil)
		sep := make([]string, len(t.widths))
		for i, w := range t.widths {
			sep[i] = strings.Repeat("-", w)
		}
		fmt.Fprintln(t.w, strings.Join(sep, "-+-"))
	}
	for _, r := range t.block {
		t.line(r, t.right)
	}
	t.shown += int64(len(t.block))
	t.block = t.block[:0]
}

func (t *tableSink) header() []tableCell {
	h := make([]tableCell, len(t.names))
	for i, n := range t.names {
		h[i] = tableCell{s: n}
	}
	return h
}

// measure sets the widths: the widest cell of each column, cut (unless
// --wide) so that the row fits the terminal, no column below 8.
func (t *tableSink) measure() {
	t.widths = make([]int, len(t.names))
	for i, n := range t.names {
		t.widths[i] = utf8.RuneCountInString(n)
	}
	for _, r := range t.block {
		for i, c := range r {
			t.widths[i] = max(t.widths[i], utf8.RuneCountInString(t.o.show(c)))
		}
	}
	if t.o.wide || t.o.width <= 0 {
		return
	}
	for total(t.widths) > t.o.width {
		widest := 0
		for i, w := range t.widths {
			if w > t.widths[widest] {
				widest = i
			}
		}
		if t.widths[widest] <= 8 {
			return
		}
		t.widths[widest] = max(8, t.widths[widest]-(total(t.widths)-t.o.width))
	}
}

// total is a row's width: the columns and their " | " separators.
func total(widths []int) int {
	n := 3 * (len(widths) - 1)
	for _, w := range widths {
		n += w
	}
	return n
}

// line prints one row, each cell padded or cut (…) to its width.
func (t *tableSink) line(r []tableCell, right []bool) {
	var b strings.Builder
	for i, c := range r {
		if i > 0 {
			b.WriteString(" | ")
		}
		s := t.o.show(c)
		n := utf8.RuneCountInString(s)
		w := t.widths[i]
		if n > w {
			s = string([]rune(s)[:w-1]) + "…"
			n = w
		}
		pad := strings.Repeat(" ", w-n)
		if c.null {
			s = t.o.dim(s)
		}
		if right != nil && right[i] {
			b.WriteString(pad + s)
		} else if i < len(r)-1 {
			b.WriteString(s + pad)
		} else {
			b.WriteString(s)
		}
	}
	fmt.Fprintln(t.w, b.String())
}

func (t *tableSink) end() error {
	t.flush()
	if t.hidden > 0 {
		fmt.Fprintf(t.w, "... %d more rows (--limit 0 prints all)\n", t.hidden)
	}
	return nil
}

// abort prints the rows read so far, and no count of those not shown.
func (t *tableSink) abort() { t.flush() }
