package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

const metaHelp = `meta commands (at the prompt and in scripts):
  \dt [PATTERN]    list tables and views (LIKE pattern: % and _)
  \d TABLE         describe a table's columns (TABLE or SCHEMA.TABLE)
  \info            the driver's and the database's names and versions
  \timing [on|off] say how long each statement takes
  \o [FILE]        send results to FILE (its format from its extension), or back
  \q               quit
  \?               this help
statements end with ; (outside quotes, $$ and comments); Ctrl-C cancels the one
running (or what is typed), Ctrl-D quits.
`

// meta runs a meta command. Its results are a result like a query's: a
// table, or what the output format says.
func (s *session) meta(ctx context.Context, text string) error {
	cmd, arg, _ := strings.Cut(strings.TrimSpace(text), " ")
	arg = strings.TrimSpace(arg)
	switch cmd {
	case `\q`, `\quit`:
		return errQuit
	case `\?`, `\h`, `\help`:
		fmt.Fprint(s.out.stdout, metaHelp)
		return nil
	case `\dt`:
		return s.tables(ctx, arg)
	case `\d`:
		if arg == "" {
			return s.tables(ctx, "")
		}
		return s.describe(ctx, arg)
	case `\info`:
		return s.info(ctx)
	case `\timing`:
		switch arg {
		case "":
			s.out.timing = !s.out.timing
		case "on":
			s.out.timing = true
		case "off":
			s.out.timing = false
		default:
			return fmt.Errorf(`\timing %s: want on or off`, arg)
		}
		fmt.Fprintf(s.stderr, "Timing is %s.\n", map[bool]string{true: "on", false: "off"}[s.out.timing])
		return nil
	case `\o`:
		if err := s.out.to(arg); err != nil {
			return err
		}
		if arg != "" {
			fmt.Fprintf(s.stderr, "Results go to %s (%s).\n", arg, s.out.format)
		}
		return nil
	}
	return fmt.Errorf(`unknown meta command %s (\? lists them)`, cmd)
}

// tables lists the tables and views GetObjects finds.
func (s *session) tables(ctx context.Context, pattern string) error {
	var name *string
	if pattern != "" {
		name = &pattern
	}
	rdr, err := s.conn.GetObjects(ctx, adbc.ObjectDepthTables, nil, nil, name, nil, nil)
	if err != nil {
		return err
	}
	defer rdr.Release()
	b := newRows("catalog", "schema", "name", "type")
	defer b.release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		catalogs := rec.Column(0).(*array.String)
		schemas := rec.Column(1).(*array.List)
		for i := range int(rec.NumRows()) {
			eachChild(schemas, i, func(sch *array.Struct, j int) {
				tables := sch.Field(1).(*array.List)
				eachChild(tables, j, func(t *array.Struct, k int) {
					b.add(str(catalogs, i), str(sch.Field(0), j), str(t.Field(0), k), str(t.Field(1), k))
				})
			})
		}
	}
	if err := rdr.Err(); err != nil {
		return err
	}
	return s.show(b)
}

// describe lists the columns of a table (SCHEMA.TABLE, or TABLE).
func (s *session) describe(ctx context.Context, name string) error {
	var schema *string
	if sch, t, ok := strings.Cut(name, "."); ok {
		schema, name = &sch, t
	}
	sc, err := s.conn.GetTableSchema(ctx, nil, schema, name)
	if err != nil {
		return err
	}
	b := newRows("column", "type", "nullable")
	defer b.release()
	for _, f := range sc.Fields() {
		b.add(f.Name, f.Type.String(), fmt.Sprint(f.Nullable))
	}
	return s.show(b)
}

// info lists what GetInfo says of the driver and the database.
func (s *session) info(ctx context.Context) error {
	rdr, err := s.conn.GetInfo(ctx, nil)
	if err != nil {
		return err
	}
	defer rdr.Release()
	b := newRows("name", "value")
	defer b.release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		codes := rec.Column(0).(*array.Uint32)
		values := rec.Column(1).(*array.DenseUnion)
		for i := range int(rec.NumRows()) {
			v := values.Field(values.ChildID(i))
			b.add(adbc.InfoCode(codes.Value(i)).String(), v.ValueStr(int(values.ValueOffset(i))))
		}
	}
	if err := rdr.Err(); err != nil {
		return err
	}
	return s.show(b)
}

// show writes a meta command's rows as a result.
func (s *session) show(b *rows) error {
	rdr := b.reader()
	defer rdr.Release()
	return s.out.result(rdr)
}

// eachChild calls f with the struct values of list l's row i.
func eachChild(l *array.List, i int, f func(*array.Struct, int)) {
	if l.IsNull(i) {
		return
	}
	st, ok := l.ListValues().(*array.Struct)
	if !ok {
		return
	}
	start, end := l.ValueOffsets(i)
	for j := start; j < end; j++ {
		f(st, int(j))
	}
}

// str is a string column's value, "" for a null.
func str(col arrow.Array, i int) string {
	if col.IsNull(i) {
		return ""
	}
	return col.ValueStr(i)
}

// rows builds a meta command's result: string columns.
type rows struct {
	sc *arrow.Schema
	b  *array.RecordBuilder
}

func newRows(names ...string) *rows {
	fields := make([]arrow.Field, len(names))
	for i, n := range names {
		fields[i] = arrow.Field{Name: n, Type: arrow.BinaryTypes.String}
	}
	sc := arrow.NewSchema(fields, nil)
	return &rows{sc: sc, b: array.NewRecordBuilder(memory.DefaultAllocator, sc)}
}

func (r *rows) add(values ...string) {
	for i, v := range values {
		r.b.Field(i).(*array.StringBuilder).Append(v)
	}
}

func (r *rows) reader() array.RecordReader {
	rec := r.b.NewRecordBatch()
	defer rec.Release()
	rdr, _ := array.NewRecordReader(r.sc, []arrow.RecordBatch{rec})
	return rdr
}

func (r *rows) release() { r.b.Release() }
