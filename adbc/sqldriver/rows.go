package sqldriver

import (
	"context"
	"database/sql/driver"
	"io"
	"math"
	"reflect"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/array/arreflect"
)

// rows streams a result: the record batches of an ADBC reader, one row at
// a time.
type rows struct {
	ctx          context.Context // the query's
	c            *conn
	rdr          array.RecordReader
	schema       *arrow.Schema
	cur          arrow.RecordBatch // the reader's current batch, or nil
	reads        []cellReader      // of cur's columns
	row          int64             // the next row of cur
	rowsAffected int64
	done         func() error // releases the statement, once
	ended        bool         // the reader said it has no more (or failed)
}

// drainBatches is how many batches Close reads of a result not read to
// its end before it gives up on it and discards the connection: a driver
// may finish its work on the server only at the end of the stream
// (PostgreSQL's, with a timestamptz bound, commits the transaction it
// opened for the query there), and a result left midway may leave it
// open, where the next statements would run and never commit.
const drainBatches = 4

var (
	_ driver.Rows                           = (*rows)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*rows)(nil)
	_ driver.RowsColumnTypeNullable         = (*rows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*rows)(nil)
	_ driver.RowsColumnTypeScanType         = (*rows)(nil)
	_ driver.RowsColumnTypeLength           = (*rows)(nil)
)

// Columns returns the names of the result's fields.
func (r *rows) Columns() []string {
	out := make([]string, r.fields().NumFields())
	for i, f := range r.fields().Fields() {
		out[i] = f.Name
	}
	return out
}

func (r *rows) fields() *arrow.Schema {
	if r.schema == nil {
		r.schema = r.rdr.Schema()
	}
	return r.schema
}

// Close releases the reader and then the statement. A result not read to
// its end is read on for up to drainBatches batches; past that, the
// connection is discarded (drainBatches says why).
func (r *rows) Close() (err error) {
	defer r.c.outcome(&err)
	if r.rdr == nil {
		return nil
	}
	r.fields()
	r.cur = nil
	for n := 0; !r.ended && n < drainBatches && (r.ctx == nil || r.ctx.Err() == nil); n++ {
		r.ended = !r.rdr.Next()
	}
	if !r.ended {
		r.c.bad.Store(true)
	}
	r.rdr.Release()
	r.rdr = nil
	if r.done == nil {
		return nil
	}
	done := r.done
	r.done = nil
	return done()
}

// Next fills dest with the next row's values, converted as the package
// documentation says. Once the query's context is done it fails with the
// context's error.
func (r *rows) Next(dest []driver.Value) (err error) {
	defer r.c.outcome(&err)
	if r.rdr == nil {
		return io.EOF
	}
	if r.ctx != nil {
		if err := r.ctx.Err(); err != nil {
			return err
		}
	}
	for r.cur == nil || r.row >= r.cur.NumRows() {
		if !r.rdr.Next() {
			r.cur, r.ended = nil, true
			if err := r.rdr.Err(); err != nil {
				return err
			}
			return io.EOF
		}
		r.cur, r.row = r.rdr.RecordBatch(), 0
		r.reads = r.reads[:0]
		for _, col := range r.cur.Columns() {
			r.reads = append(r.reads, readerOf(col))
		}
	}
	for i, col := range r.cur.Columns() {
		if col.IsNull(int(r.row)) {
			dest[i] = nil
			continue
		}
		v, err := r.reads[i](col, int(r.row))
		if err != nil {
			return err
		}
		dest[i] = v
	}
	r.row++
	return nil
}

// A cellReader reads the non-null element i of a column.
type cellReader func(col arrow.Array, i int) (driver.Value, error)

// readerOf is how to read col's cells: its type's entry where col holds
// its values itself, else valueAt (a dictionary, a union, an extension
// type: resolved cell by cell).
func readerOf(col arrow.Array) cellReader {
	if c := convOf(col.DataType().ID()); c.read != nil {
		return c.read
	}
	return valueAt
}

// valueAt is element i of col as a driver.Value: nil for a null, a Go
// value of the Arrow type's natural Go type otherwise. Strings and bytes
// are copies: the Arrow memory is released with its batch, which may be
// before database/sql is done with the value.
func valueAt(col arrow.Array, i int) (driver.Value, error) {
resolve: // to the array that holds the value itself
	for {
		switch c := col.(type) {
		case *array.SparseUnion:
			col = c.Field(c.ChildID(i))
		case *array.DenseUnion:
			col, i = c.Field(c.ChildID(i)), int(c.ValueOffset(i))
		case *array.Dictionary:
			if c.IsNull(i) {
				return nil, nil
			}
			col, i = c.Dictionary(), c.GetValueIndex(i)
		case array.ExtensionArray:
			col = c.Storage()
		case *array.Null: // all null, without a validity bitmap
			return nil, nil
		default:
			break resolve
		}
	}
	if col.IsNull(i) {
		return nil, nil
	}
	if c := convOf(col.DataType().ID()); c.read != nil {
		return c.read(col, i)
	}
	return arreflect.AtAny(col, i)
}

// ColumnTypeDatabaseTypeName returns the column's Arrow type as a string
// ("int64", "utf8", "timestamp[us, tz=UTC]", "decimal(9, 2)"...).
func (r *rows) ColumnTypeDatabaseTypeName(index int) string {
	return r.fields().Field(index).Type.String()
}

// ColumnTypeNullable reports the field's nullability.
func (r *rows) ColumnTypeNullable(index int) (nullable, ok bool) {
	return r.fields().Field(index).Nullable, true
}

// ColumnTypePrecisionScale reports a decimal column's precision and scale.
func (r *rows) ColumnTypePrecisionScale(index int) (precision, scale int64, ok bool) {
	if dt, ok := r.fields().Field(index).Type.(arrow.DecimalType); ok {
		return int64(dt.GetPrecision()), int64(dt.GetScale()), true
	}
	return 0, 0, false
}

// ColumnTypeLength reports the length of a string or binary column:
// math.MaxInt64 (unbounded) for a variable one, the width for a
// fixed-size binary.
func (r *rows) ColumnTypeLength(index int) (length int64, ok bool) {
	dt := r.fields().Field(index).Type
	if d, isDict := dt.(*arrow.DictionaryType); isDict {
		dt = d.ValueType
	}
	switch dt := dt.(type) {
	case *arrow.FixedSizeBinaryType:
		return int64(dt.ByteWidth), true
	}
	switch dt.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW, arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return math.MaxInt64, true
	}
	return 0, false
}

// ColumnTypeScanType returns the Go type of the column's non-null values,
// as Next returns them.
func (r *rows) ColumnTypeScanType(index int) reflect.Type {
	return scanType(r.fields().Field(index).Type)
}

func scanType(dt arrow.DataType) reflect.Type {
	switch dt := dt.(type) {
	case *arrow.DictionaryType:
		return scanType(dt.ValueType)
	case arrow.ExtensionType:
		return scanType(dt.StorageType())
	}
	if c := convOf(dt.ID()); c.goType != nil {
		return c.goType
	}
	if t, err := arreflect.InferGoType(dt); err == nil {
		return t
	}
	return reflect.TypeFor[any]()
}
