package adbc_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/purearrow/cdevice/adbc"
)

// ctxKey tags the contexts tests pass, so fakes can report which one they got.
type ctxKey struct{}

func tagged(tag string) context.Context {
	return context.WithValue(context.Background(), ctxKey{}, tag)
}

func tagOf(ctx context.Context) string {
	if ctx == nil {
		return "<nil>"
	}
	s, _ := ctx.Value(ctxKey{}).(string)
	return s
}

// calls records the calls fakes receive, and makes the ones named in fail
// return an error.
type calls struct {
	log  []string
	fail map[string]error
}

// note records a call as "name(args)" and returns the error it should give.
func (c *calls) note(name string, args ...any) error {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = fmt.Sprint(a)
	}
	c.log = append(c.log, name+"("+strings.Join(parts, ", ")+")")
	return c.fail[name]
}

func (c *calls) String() string { return strings.Join(c.log, "\n") }

var testSchema = arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)

// newReader returns an empty stream of testSchema.
func newReader() array.RecordReader {
	r, err := array.NewRecordReader(testSchema, nil)
	if err != nil {
		panic(err)
	}
	return r
}

type fakeDB struct {
	c    *calls
	conn *fakeConn
}

func (d *fakeDB) SetOptions(o map[string]string) error { return d.c.note("SetOptions", o) }
func (d *fakeDB) Open(ctx context.Context) (adbc.Connection, error) {
	if err := d.c.note("Open", tagOf(ctx)); err != nil {
		return nil, err
	}
	return d.conn, nil
}
func (d *fakeDB) Close() error { return d.c.note("db.Close") }

type fakeConn struct {
	c      *calls
	stmt   *fakeStmt
	reader array.RecordReader
}

func (f *fakeConn) GetInfo(ctx context.Context, codes []adbc.InfoCode) (array.RecordReader, error) {
	return f.reader, f.c.note("GetInfo", tagOf(ctx), codes)
}
func (f *fakeConn) GetObjects(ctx context.Context, depth adbc.ObjectDepth, catalog, dbSchema, tableName, columnName *string, tableType []string) (array.RecordReader, error) {
	return f.reader, f.c.note("GetObjects", tagOf(ctx), depth, *catalog, *dbSchema, *tableName, columnName, tableType)
}
func (f *fakeConn) GetTableSchema(ctx context.Context, catalog, dbSchema *string, tableName string) (*arrow.Schema, error) {
	return testSchema, f.c.note("GetTableSchema", tagOf(ctx), catalog, *dbSchema, tableName)
}
func (f *fakeConn) GetTableTypes(ctx context.Context) (array.RecordReader, error) {
	return f.reader, f.c.note("GetTableTypes", tagOf(ctx))
}
func (f *fakeConn) Commit(ctx context.Context) error   { return f.c.note("Commit", tagOf(ctx)) }
func (f *fakeConn) Rollback(ctx context.Context) error { return f.c.note("Rollback", tagOf(ctx)) }
func (f *fakeConn) NewStatement() (adbc.Statement, error) {
	if err := f.c.note("NewStatement"); err != nil {
		return nil, err
	}
	return f.stmt, nil
}
func (f *fakeConn) Close() error { return f.c.note("conn.Close") }
func (f *fakeConn) ReadPartition(ctx context.Context, p []byte) (array.RecordReader, error) {
	return f.reader, f.c.note("ReadPartition", tagOf(ctx), string(p))
}

type fakeStmt struct {
	c      *calls
	reader array.RecordReader
	rows   int64
}

func (s *fakeStmt) Close() error { return s.c.note("stmt.Close") }

// SetOption fails when fail holds "SetOption" or "SetOption:<k>".
func (s *fakeStmt) SetOption(k, v string) error {
	err := s.c.note("SetOption", k, v)
	if e := s.c.fail["SetOption:"+k]; e != nil {
		return e
	}
	return err
}

func (s *fakeStmt) SetSqlQuery(q string) error        { return s.c.note("SetSqlQuery", q) }
func (s *fakeStmt) SetSubstraitPlan(p []byte) error   { return s.c.note("SetSubstraitPlan", string(p)) }
func (s *fakeStmt) Prepare(ctx context.Context) error { return s.c.note("Prepare", tagOf(ctx)) }
func (s *fakeStmt) ExecuteQuery(ctx context.Context) (array.RecordReader, int64, error) {
	return s.reader, s.rows, s.c.note("ExecuteQuery", tagOf(ctx))
}
func (s *fakeStmt) ExecuteUpdate(ctx context.Context) (int64, error) {
	return s.rows, s.c.note("ExecuteUpdate", tagOf(ctx))
}
func (s *fakeStmt) Bind(ctx context.Context, rec arrow.RecordBatch) error {
	return s.c.note("Bind", tagOf(ctx), rec.NumRows())
}
func (s *fakeStmt) BindStream(ctx context.Context, r array.RecordReader) error {
	return s.c.note("BindStream", tagOf(ctx), r == s.reader)
}
func (s *fakeStmt) GetParameterSchema() (*arrow.Schema, error) {
	return testSchema, s.c.note("GetParameterSchema")
}
func (s *fakeStmt) ExecutePartitions(ctx context.Context) (*arrow.Schema, adbc.Partitions, int64, error) {
	return testSchema, adbc.Partitions{NumPartitions: 1, PartitionIDs: [][]byte{[]byte("p0")}}, s.rows,
		s.c.note("ExecutePartitions", tagOf(ctx))
}

// newFakes returns a database whose connection makes statements, all
// recording into one log.
func newFakes() (*calls, *fakeDB) {
	c := &calls{fail: map[string]error{}}
	r := newReader()
	stmt := &fakeStmt{c: c, reader: r, rows: 7}
	conn := &fakeConn{c: c, stmt: stmt, reader: r}
	return c, &fakeDB{c: c, conn: conn}
}
