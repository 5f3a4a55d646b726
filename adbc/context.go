package adbc

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// AsDatabaseContext adapts db to DatabaseWithContext, for code written
// against the context-aware interfaces. Open passes its context on; Close
// and SetOptions cannot, so they ignore theirs. The connections Open returns
// are adapted with AsConnectionContext. A nil db gives nil.
func AsDatabaseContext(db Database) DatabaseWithContext {
	if db == nil {
		return nil
	}
	return &dbAdapter{db}
}

// AsConnectionContext adapts conn to ConnectionWithContext. Methods of conn
// that take a context get the caller's; NewStatement and Close ignore it.
// The statements NewStatement returns are adapted with AsStatementContext.
// A nil conn gives nil.
func AsConnectionContext(conn Connection) ConnectionWithContext {
	if conn == nil {
		return nil
	}
	return &connAdapter{conn}
}

// AsStatementContext adapts stmt to StatementWithContext. Methods of stmt
// that take a context get the caller's; the others (Close, SetOption,
// SetSqlQuery, SetSubstraitPlan, GetParameterSchema) ignore it. A nil stmt
// gives nil.
func AsStatementContext(stmt Statement) StatementWithContext {
	if stmt == nil {
		return nil
	}
	return &stmtAdapter{stmt}
}

type dbAdapter struct{ db Database }

func (a *dbAdapter) SetOptions(_ context.Context, opts map[string]string) error {
	return a.db.SetOptions(opts)
}

func (a *dbAdapter) Open(ctx context.Context) (ConnectionWithContext, error) {
	conn, err := a.db.Open(ctx)
	if err != nil {
		return nil, err
	}
	return AsConnectionContext(conn), nil
}

func (a *dbAdapter) Close(context.Context) error { return a.db.Close() }

type connAdapter struct{ conn Connection }

func (a *connAdapter) GetInfo(ctx context.Context, infoCodes []InfoCode) (array.RecordReader, error) {
	return a.conn.GetInfo(ctx, infoCodes)
}

func (a *connAdapter) GetObjects(ctx context.Context, depth ObjectDepth, catalog, dbSchema, tableName, columnName *string, tableType []string) (array.RecordReader, error) {
	return a.conn.GetObjects(ctx, depth, catalog, dbSchema, tableName, columnName, tableType)
}

func (a *connAdapter) GetTableSchema(ctx context.Context, catalog, dbSchema *string, tableName string) (*arrow.Schema, error) {
	return a.conn.GetTableSchema(ctx, catalog, dbSchema, tableName)
}

func (a *connAdapter) GetTableTypes(ctx context.Context) (array.RecordReader, error) {
	return a.conn.GetTableTypes(ctx)
}

func (a *connAdapter) Commit(ctx context.Context) error   { return a.conn.Commit(ctx) }
func (a *connAdapter) Rollback(ctx context.Context) error { return a.conn.Rollback(ctx) }

func (a *connAdapter) NewStatement(context.Context) (StatementWithContext, error) {
	stmt, err := a.conn.NewStatement()
	if err != nil {
		return nil, err
	}
	return AsStatementContext(stmt), nil
}

func (a *connAdapter) Close(context.Context) error { return a.conn.Close() }

func (a *connAdapter) ReadPartition(ctx context.Context, serializedPartition []byte) (array.RecordReader, error) {
	return a.conn.ReadPartition(ctx, serializedPartition)
}

type stmtAdapter struct{ stmt Statement }

func (a *stmtAdapter) Close(context.Context) error { return a.stmt.Close() }

func (a *stmtAdapter) SetOption(_ context.Context, key, val string) error {
	return a.stmt.SetOption(key, val)
}

func (a *stmtAdapter) SetSqlQuery(_ context.Context, query string) error {
	return a.stmt.SetSqlQuery(query)
}

func (a *stmtAdapter) SetSubstraitPlan(_ context.Context, plan []byte) error {
	return a.stmt.SetSubstraitPlan(plan)
}

func (a *stmtAdapter) GetParameterSchema(context.Context) (*arrow.Schema, error) {
	return a.stmt.GetParameterSchema()
}

func (a *stmtAdapter) ExecuteQuery(ctx context.Context) (array.RecordReader, int64, error) {
	return a.stmt.ExecuteQuery(ctx)
}

func (a *stmtAdapter) ExecuteUpdate(ctx context.Context) (int64, error) {
	return a.stmt.ExecuteUpdate(ctx)
}

func (a *stmtAdapter) Prepare(ctx context.Context) error { return a.stmt.Prepare(ctx) }

func (a *stmtAdapter) ExecutePartitions(ctx context.Context) (*arrow.Schema, Partitions, int64, error) {
	return a.stmt.ExecutePartitions(ctx)
}

func (a *stmtAdapter) Bind(ctx context.Context, values arrow.RecordBatch) error {
	return a.stmt.Bind(ctx, values)
}

func (a *stmtAdapter) BindStream(ctx context.Context, stream array.RecordReader) error {
	return a.stmt.BindStream(ctx, stream)
}
