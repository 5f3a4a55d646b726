package sqldriver

import (
	"context"
	"database/sql/driver"
	"sync/atomic"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/adbc/adbcerr"
)

// stmt is a prepared statement: an ADBC statement, prepared, with the
// parameter schema the driver reported (nil where it cannot tell).
//
// An ADBC statement has one result at a time: executing it again
// invalidates the stream of the last execution. While rows of st are open
// (two queries of one prepared statement inside one transaction), a
// further execution runs on a new statement of the same query instead.
type stmt struct {
	conn        *conn
	sql         string
	st          adbc.Statement // nil for the one-shot statements of conn.QueryContext
	paramSchema *arrow.Schema
	busy        atomic.Bool // rows of st are open
}

var (
	_ driver.StmtExecContext   = (*stmt)(nil)
	_ driver.StmtQueryContext  = (*stmt)(nil)
	_ driver.NamedValueChecker = (*stmt)(nil)
)

// Close closes the ADBC statement.
func (s *stmt) Close() (err error) {
	defer s.conn.outcome(&err)
	if s.st == nil {
		return nil
	}
	return s.st.Close()
}

// NumInput is the number of parameters the driver reported, or -1 (not
// checked by database/sql) where it could not tell.
func (s *stmt) NumInput() int {
	if s.paramSchema == nil {
		return -1
	}
	return s.paramSchema.NumFields()
}

// Exec executes the statement with positional arguments.
//
// Deprecated: database/sql calls ExecContext.
func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), namedValues(args))
}

// Query executes the statement with positional arguments.
//
// Deprecated: database/sql calls QueryContext.
func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), namedValues(args))
}

// acquire returns the statement to execute: st itself, marked busy, or
// while it is busy a new one of the same query (owned: the caller closes
// it).
func (s *stmt) acquire(ctx context.Context) (st adbc.Statement, owned bool, err error) {
	if s.busy.CompareAndSwap(false, true) {
		return s.st, false, nil
	}
	st, err = s.conn.newStatement(s.sql)
	if err != nil {
		return nil, false, err
	}
	if err := st.Prepare(ctx); err != nil {
		return nil, false, also(err, st.Close())
	}
	return st, true, nil
}

// release ends the use of st that acquire began.
func (s *stmt) release(st adbc.Statement, owned bool) error {
	if owned {
		return st.Close()
	}
	s.busy.Store(false)
	return nil
}

// ExecContext binds args (when there are any) as a one-row record batch
// and executes the statement for its effect: the Result's RowsAffected is
// what the driver reported (-1 where it does not know), and LastInsertId
// fails, as ADBC has no such notion.
func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (_ driver.Result, err error) {
	defer s.conn.outcome(&err)
	st, owned, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	n, err := s.exec(ctx, st, args)
	if rerr := s.release(st, owned); err == nil && rerr != nil {
		return nil, rerr
	}
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(n), nil
}

func (s *stmt) exec(ctx context.Context, st adbc.Statement, args []driver.NamedValue) (int64, error) {
	if err := s.bind(ctx, st, args); err != nil {
		return 0, err
	}
	return st.ExecuteUpdate(ctx)
}

// QueryContext binds args (when there are any) as a one-row record batch
// and executes the statement; the rows stream the result.
func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (_ driver.Rows, err error) {
	defer s.conn.outcome(&err)
	st, owned, err := s.acquire(ctx)
	if err != nil {
		return nil, err
	}
	return s.query(ctx, st, owned, args)
}

// query executes st, which the rows release (close, if owned) when they
// are closed, or query does if it fails.
func (s *stmt) query(ctx context.Context, st adbc.Statement, owned bool, args []driver.NamedValue) (driver.Rows, error) {
	if err := s.bind(ctx, st, args); err != nil {
		return nil, also(err, s.release(st, owned))
	}
	rdr, n, err := st.ExecuteQuery(ctx)
	if err != nil {
		return nil, also(err, s.release(st, owned))
	}
	return &rows{ctx: ctx, c: s.conn, rdr: rdr, rowsAffected: n, done: func() error { return s.release(st, owned) }}, nil
}

// bind binds args to st as one row; no arguments bind nothing.
func (s *stmt) bind(ctx context.Context, st adbc.Statement, args []driver.NamedValue) error {
	if len(args) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rec, err := createBoundRecord(args, s.paramSchema)
	if err != nil {
		return err
	}
	defer rec.Release() // the driver retains what it keeps
	return st.Bind(ctx, rec)
}

// CheckNamedValue checks an argument of a prepared statement against the
// parameter schema, and converts it where the schema gives a type.
//
// Without a parameter schema, and for a parameter whose type is unknown
// (the null type) when the value is not one of the Go types this package
// binds as such, it leaves the value to database/sql's default conversion
// (driver.Valuer, pointers, named types, int to int64...). A parameter of
// known type takes a value of the matching Go type (a pointer to one, or
// nil) as it is, and any other value that database/sql's default
// conversion turns into one without loss (an int for an int32, a string
// for a binary...).
func (s *stmt) CheckNamedValue(nv *driver.NamedValue) error {
	if s.paramSchema == nil {
		return driver.ErrSkip
	}
	var field arrow.Field
	if nv.Name != "" {
		idx := paramIndex(s.paramSchema, nv.Name)
		if idx < 0 {
			return adbcerr.New(adbc.StatusInvalidArgument, "could not find parameter named '"+nv.Name+"'")
		}
		field = s.paramSchema.Field(idx)
	} else {
		if nv.Ordinal < 1 || nv.Ordinal > s.paramSchema.NumFields() {
			return adbcerr.New(adbc.StatusInvalidArgument, "too many parameters passed for query")
		}
		field = s.paramSchema.Field(nv.Ordinal - 1)
	}
	if field.Type.ID() == arrow.NULL {
		if bindable(nv.Value) {
			return nil
		}
		return driver.ErrSkip
	}
	if nv.Value == nil {
		return nil
	}
	switch matchesType(field.Type.ID(), nv.Value) {
	case typeMatches:
		return nil
	case typeUnknown:
		if bindable(nv.Value) {
			return nil
		}
		return driver.ErrSkip
	}
	if v, err := driver.DefaultParameterConverter.ConvertValue(nv.Value); err == nil {
		if v, ok := coerce(v, field.Type.ID()); ok {
			nv.Value = v
			return nil
		}
	}
	return adbcerr.New(adbc.StatusInvalidArgument, "expected parameter of type "+field.Type.String())
}

// paramIndex is the index of the parameter named name, or (as database/sql
// names cannot hold them) of name with one of the prefixes SQL dialects
// mark parameters with (":name", "@name", "$name"); -1 if none.
func paramIndex(schema *arrow.Schema, name string) int {
	for _, n := range []string{name, ":" + name, "@" + name, "$" + name} {
		if ix := schema.FieldIndices(n); len(ix) > 0 {
			return ix[0]
		}
	}
	return -1
}
