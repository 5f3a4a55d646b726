package adbc

import (
	"context"
	"log/slog"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Driver creates databases: the entry point of an ADBC driver. Options given
// to NewDatabase configure the database (a URI, credentials, ...); options
// for connections are set on them before use.
//
// A driver may also implement io.Closer.
type Driver interface {
	NewDatabase(opts map[string]string) (Database, error)
}

// DriverWithContext is a Driver that takes a context when it creates a
// database, for example to start tracing there.
type DriverWithContext interface {
	NewDatabaseWithContext(ctx context.Context, opts map[string]string) (Database, error)
}

// Database holds the state shared by connections to one database and opens
// them.
type Database interface {
	// SetOptions sets options on the database.
	SetOptions(map[string]string) error
	// Open opens a new connection to the database.
	Open(ctx context.Context) (Connection, error)
	// Close releases the database's resources.
	Close() error
}

// DatabaseWithContext is Database with a context in every method, for
// cancellation, deadlines and tracing. AsDatabaseContext adapts a Database.
type DatabaseWithContext interface {
	// SetOptions sets options on the database.
	SetOptions(ctx context.Context, opts map[string]string) error
	// Open opens a new connection to the database.
	Open(ctx context.Context) (ConnectionWithContext, error)
	// Close releases the database's resources.
	Close(ctx context.Context) error
}

// Connection is an open session with a database: it reads metadata, runs
// transactions and creates statements. It need not be safe for concurrent
// use.
//
// The metadata methods return their results as Arrow streams whose schemas
// are the standard ones of this package (GetInfoSchema, GetObjectsSchema,
// TableTypesSchema). Where an argument is a search pattern, "%" matches any
// run of characters and "_" any one character; there is no escape.
type Connection interface {
	// GetInfo returns the metadata items infoCodes names (all the driver
	// knows when it is empty) as a stream of GetInfoSchema. Unknown codes
	// are left out of the result.
	GetInfo(ctx context.Context, infoCodes []InfoCode) (array.RecordReader, error)

	// GetObjects returns the catalogs, database schemas, tables and
	// columns, down to depth, as a stream of GetObjectsSchema. A nil
	// filter does not filter; an empty catalog or dbSchema selects the
	// objects without one; other strings are search patterns. tableName
	// and columnName must be nil or not empty. tableType, if not nil,
	// keeps only tables of those types.
	GetObjects(ctx context.Context, depth ObjectDepth, catalog, dbSchema, tableName, columnName *string, tableType []string) (array.RecordReader, error)

	// GetTableSchema returns the Arrow schema of a table. catalog and
	// dbSchema may be nil; the names are not patterns.
	GetTableSchema(ctx context.Context, catalog, dbSchema *string, tableName string) (*arrow.Schema, error)

	// GetTableTypes returns the database's table types as a stream of
	// TableTypesSchema.
	GetTableTypes(context.Context) (array.RecordReader, error)

	// Commit commits the pending transaction; only meaningful with
	// autocommit off. Mixing it with SQL transaction statements is
	// undefined.
	Commit(context.Context) error

	// Rollback rolls back the pending transaction; only meaningful with
	// autocommit off. Mixing it with SQL transaction statements is
	// undefined.
	Rollback(context.Context) error

	// NewStatement creates a statement on this connection.
	NewStatement() (Statement, error)

	// Close releases the connection's resources.
	Close() error

	// ReadPartition reads one partition that ExecutePartitions described,
	// possibly on another connection or in another process.
	ReadPartition(ctx context.Context, serializedPartition []byte) (array.RecordReader, error)
}

// ConnectionWithContext is Connection with a context in every method.
// AsConnectionContext adapts a Connection.
type ConnectionWithContext interface {
	GetInfo(ctx context.Context, infoCodes []InfoCode) (array.RecordReader, error)
	GetObjects(ctx context.Context, depth ObjectDepth, catalog, dbSchema, tableName, columnName *string, tableType []string) (array.RecordReader, error)
	GetTableSchema(ctx context.Context, catalog, dbSchema *string, tableName string) (*arrow.Schema, error)
	GetTableTypes(ctx context.Context) (array.RecordReader, error)
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
	NewStatement(ctx context.Context) (StatementWithContext, error)
	Close(ctx context.Context) error
	ReadPartition(ctx context.Context, serializedPartition []byte) (array.RecordReader, error)
}

// PostInitOptions is implemented by connections and statements whose options
// can be set after they are created.
type PostInitOptions interface {
	SetOption(key, value string) error
}

// Partitions describes a result set split into parts that can be read
// independently (and in parallel) with Connection.ReadPartition.
type Partitions struct {
	// NumPartitions is the number of partitions, len(PartitionIDs).
	NumPartitions uint64
	// PartitionIDs holds one opaque descriptor per partition.
	PartitionIDs [][]byte
}

// Statement holds a query (SQL or Substrait), its parameters and options,
// and executes it, possibly many times. Executing it again invalidates the
// results of earlier executions. It need not be safe for concurrent use.
type Statement interface {
	// Close releases the statement's resources; the statement is unusable
	// after it.
	Close() error

	// SetOption sets an option on the statement.
	SetOption(key, val string) error

	// SetSqlQuery sets the SQL query to execute.
	SetSqlQuery(query string) error

	// ExecuteQuery runs the query and returns its results with the number
	// of rows affected, or -1 if unknown. Releasing the reader before its
	// end cancels the query (since ADBC 1.1.0).
	ExecuteQuery(context.Context) (array.RecordReader, int64, error)

	// ExecuteUpdate runs a query that returns no result set and returns the
	// number of rows affected, or -1 if unknown.
	ExecuteUpdate(context.Context) (int64, error)

	// Prepare prepares the query for repeated execution.
	Prepare(context.Context) error

	// SetSubstraitPlan sets a serialized Substrait plan to execute.
	SetSubstraitPlan(plan []byte) error

	// Bind binds a record batch as the query's parameters (or, for bulk
	// ingestion, its data). The driver retains values and releases it when
	// done, at Close at the latest; nil unbinds.
	Bind(ctx context.Context, values arrow.RecordBatch) error

	// BindStream is Bind for a stream of record batches.
	BindStream(ctx context.Context, stream array.RecordReader) error

	// GetParameterSchema returns the schema of the parameters of a prepared
	// query, in ordinal order: an empty name where a parameter has none, the
	// null type where its type is unknown. It fails with
	// StatusNotImplemented if the driver cannot tell.
	GetParameterSchema() (*arrow.Schema, error)

	// ExecutePartitions runs the query and returns the result set's schema,
	// its partitions and the number of rows affected (-1 if unknown). It
	// fails with StatusNotImplemented where partitioning is unsupported.
	// With OptionKeyIncremental set, call it until it returns no
	// partitions.
	ExecutePartitions(context.Context) (*arrow.Schema, Partitions, int64, error)
}

// StatementWithContext is Statement with a context in every method.
// AsStatementContext adapts a Statement.
type StatementWithContext interface {
	Close(ctx context.Context) error
	SetOption(ctx context.Context, key, val string) error
	SetSqlQuery(ctx context.Context, query string) error
	SetSubstraitPlan(ctx context.Context, plan []byte) error
	GetParameterSchema(ctx context.Context) (*arrow.Schema, error)
	ExecuteQuery(ctx context.Context) (array.RecordReader, int64, error)
	ExecuteUpdate(ctx context.Context) (int64, error)
	Prepare(ctx context.Context) error
	ExecutePartitions(ctx context.Context) (*arrow.Schema, Partitions, int64, error)
	Bind(ctx context.Context, values arrow.RecordBatch) error
	BindStream(ctx context.Context, stream array.RecordReader) error
}

// ConnectionGetStatistics is implemented by connections that report
// statistics on their tables' data (since ADBC 1.1.0).
type ConnectionGetStatistics interface {
	// GetStatistics returns statistics of the tables the filters select,
	// as a stream of GetStatisticsSchema. The filters work as in
	// GetObjects. approximate allows cached or estimated values, which
	// may be cheaper than exact ones.
	GetStatistics(ctx context.Context, catalog, dbSchema, tableName *string, approximate bool) (array.RecordReader, error)

	// GetStatisticNames returns the driver's own statistics, as a stream
	// of GetStatisticNamesSchema.
	GetStatisticNames(ctx context.Context) (array.RecordReader, error)
}

// StatementExecuteSchema is implemented by statements that can tell the
// schema of their result without executing (since ADBC 1.1.0).
type StatementExecuteSchema interface {
	ExecuteSchema(context.Context) (*arrow.Schema, error)
}

// GetSetOptions is implemented by objects with typed options (since ADBC
// 1.1.0). Getters fail with StatusNotFound for an unknown option, setters
// with StatusNotImplemented.
type GetSetOptions interface {
	PostInitOptions

	SetOptionBytes(key string, value []byte) error
	SetOptionInt(key string, value int64) error
	SetOptionDouble(key string, value float64) error
	GetOption(key string) (string, error)
	GetOptionBytes(key string) ([]byte, error)
	GetOptionInt(key string) (int64, error)
	GetOptionDouble(key string) (float64, error)
}

// GetSetOptionsWithContext is GetSetOptions with a context in every method,
// and the same errors.
type GetSetOptionsWithContext interface {
	SetOption(ctx context.Context, key, value string) error
	SetOptionBytes(ctx context.Context, key string, value []byte) error
	SetOptionInt(ctx context.Context, key string, value int64) error
	SetOptionDouble(ctx context.Context, key string, value float64) error
	GetOption(ctx context.Context, key string) (string, error)
	GetOptionBytes(ctx context.Context, key string) ([]byte, error)
	GetOptionInt(ctx context.Context, key string) (int64, error)
	GetOptionDouble(ctx context.Context, key string) (float64, error)
}

// ConnectionGetStatisticsWithContext is the context-aware form of
// ConnectionGetStatistics (whose methods already take one).
type ConnectionGetStatisticsWithContext interface {
	GetStatistics(ctx context.Context, catalog, dbSchema, tableName *string, approximate bool) (array.RecordReader, error)
	GetStatisticNames(ctx context.Context) (array.RecordReader, error)
}

// StatementExecuteSchemaWithContext is the context-aware form of
// StatementExecuteSchema (whose method already takes one).
type StatementExecuteSchemaWithContext interface {
	ExecuteSchema(ctx context.Context) (*arrow.Schema, error)
}

// DatabaseLogging is implemented by databases that log to a logger the
// application supplies. EXPERIMENTAL; not part of the ADBC specification.
type DatabaseLogging interface {
	SetLogger(*slog.Logger)
}
