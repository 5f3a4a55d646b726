// Package apicheck fails to build when the exported API of package adbc
// drifts from arrow-adbc's (github.com/apache/arrow-adbc/go/adbc, release
// apache-arrow-adbc-24). Its declarations spell out that API: each function
// and method is assigned to a variable of arrow-adbc's signature, each
// constant to a variable of its type, each struct is built naming all its
// fields, and each interface is checked against a copy of arrow-adbc's
// method set, in both directions. A changed signature, type or constant
// kind, or a method added to or missing from an interface, breaks the build.
//
// It has no code to run and nothing imports it.
package apicheck

import (
	"context"
	"log/slog"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/purearrow/cdevice/adbc"
)

// Functions.
var (
	_ func(adbc.Database) adbc.DatabaseWithContext     = adbc.AsDatabaseContext
	_ func(adbc.Connection) adbc.ConnectionWithContext = adbc.AsConnectionContext
	_ func(adbc.Statement) adbc.StatementWithContext   = adbc.AsStatementContext

	_ func(context.Context, adbc.Connection, array.RecordReader, string, string, adbc.IngestStreamOptions) (int64, error)            = adbc.IngestStream
	_ func(context.Context, adbc.ConnectionWithContext, array.RecordReader, string, string, adbc.IngestStreamOptions) (int64, error) = adbc.IngestStreamContext
	_ func(context.Context, adbc.Connection) (adbc.DriverInfo, error)                                                                = adbc.GetDriverInfo
)

// Methods of the concrete types.
var (
	_ func(adbc.Error) string                       = adbc.Error.Error
	_ func(adbc.Status) string                      = adbc.Status.String
	_ func(adbc.InfoCode) string                    = adbc.InfoCode.String
	_ func(*adbc.TextErrorDetail) string            = (*adbc.TextErrorDetail).Key
	_ func(*adbc.TextErrorDetail) ([]byte, error)   = (*adbc.TextErrorDetail).Serialize
	_ func(*adbc.BinaryErrorDetail) string          = (*adbc.BinaryErrorDetail).Key
	_ func(*adbc.BinaryErrorDetail) ([]byte, error) = (*adbc.BinaryErrorDetail).Serialize

	// arrow-adbc gives Error a value receiver: both forms are errors.
	_ error = adbc.Error{}
	_ error = (*adbc.Error)(nil)

	_ adbc.ErrorDetail = (*adbc.TextErrorDetail)(nil)
	_ adbc.ErrorDetail = (*adbc.BinaryErrorDetail)(nil)
)

// Struct fields, by composite literals naming every field.
var (
	_ = adbc.Error{Msg: "", Code: adbc.StatusOK, VendorCode: int32(0), SqlState: [5]byte{}, Details: []adbc.ErrorDetail(nil)}
	_ = adbc.TextErrorDetail{Name: "", Detail: ""}
	_ = adbc.BinaryErrorDetail{Name: "", Detail: []byte(nil)}
	_ = adbc.Partitions{NumPartitions: uint64(0), PartitionIDs: [][]byte(nil)}
	_ = adbc.IngestStreamOptions{Catalog: "", DBSchema: "", Temporary: false, Extra: map[string]string(nil)}
	_ = adbc.DriverInfo{DriverName: "", DriverVersion: "", VendorName: "", VendorVersion: "", DriverADBCVersion: int64(0), LibraryInfo: map[string]string(nil)}
)

// Underlying types, by conversion both ways.
var (
	_ = adbc.Status(uint8(0))
	_ = uint8(adbc.StatusOK)
	_ = adbc.InfoCode(uint32(0))
	_ = uint32(adbc.InfoVendorName)
	_ = adbc.ObjectDepth(int(0))
	_ = int(adbc.ObjectDepthAll)
	_ = adbc.OptionIsolationLevel("")
	_ = string(adbc.LevelDefault)
	_ = adbc.OptionTelemetryExporter("")
	_ = string(adbc.TelemetryExporterNone)

	// InfoValueTypeCode is an alias, not a defined type.
	_ arrow.UnionTypeCode    = adbc.InfoValueTypeCode(0)
	_ adbc.InfoValueTypeCode = arrow.UnionTypeCode(0)
)

// Constants, typed as arrow-adbc types them. Its untyped string constants are
// assigned to a defined string type and its untyped integer ones to int16:
// that compiles only while they stay untyped.
var (
	_ int64 = adbc.AdbcVersion1_0_0
	_ int64 = adbc.AdbcVersion1_1_0

	_ = [...]adbc.Status{
		adbc.StatusOK, adbc.StatusUnknown, adbc.StatusNotImplemented, adbc.StatusNotFound,
		adbc.StatusAlreadyExists, adbc.StatusInvalidArgument, adbc.StatusInvalidState,
		adbc.StatusInvalidData, adbc.StatusIntegrity, adbc.StatusInternal, adbc.StatusIO,
		adbc.StatusCancelled, adbc.StatusTimeout, adbc.StatusUnauthenticated, adbc.StatusUnauthorized,
	}
	_ = [...]adbc.InfoCode{
		adbc.InfoVendorName, adbc.InfoVendorVersion, adbc.InfoVendorArrowVersion, adbc.InfoVendorSql,
		adbc.InfoVendorSubstrait, adbc.InfoVendorSubstraitMinVersion, adbc.InfoVendorSubstraitMaxVersion,
		adbc.InfoDriverName, adbc.InfoDriverVersion, adbc.InfoDriverArrowVersion, adbc.InfoDriverADBCVersion,
	}
	_ = [...]adbc.InfoValueTypeCode{
		adbc.InfoValueStringType, adbc.InfoValueBooleanType, adbc.InfoValueInt64Type,
		adbc.InfoValueInt32BitmaskType, adbc.InfoValueStringListType, adbc.InfoValueInt32ToInt32ListMapType,
	}
	_ = [...]adbc.ObjectDepth{
		adbc.ObjectDepthAll, adbc.ObjectDepthCatalogs, adbc.ObjectDepthDBSchemas,
		adbc.ObjectDepthTables, adbc.ObjectDepthColumns,
	}
	_ = [...]adbc.OptionIsolationLevel{
		adbc.LevelDefault, adbc.LevelReadUncommitted, adbc.LevelReadCommitted, adbc.LevelRepeatableRead,
		adbc.LevelSnapshot, adbc.LevelSerializable, adbc.LevelLinearizable,
	}
	_ = [...]adbc.OptionTelemetryExporter{
		adbc.TelemetryExporterNone, adbc.TelemetryExporterOtlp,
		adbc.TelemetryExporterConsole, adbc.TelemetryExporterAdbcFile,
	}

	_ = []myString{
		adbc.OptionValueEnabled, adbc.OptionValueDisabled,
		adbc.OptionKeyAutoCommit, adbc.OptionKeyCurrentCatalog, adbc.OptionKeyCurrentDbSchema,
		adbc.OptionKeyIncremental, adbc.OptionKeyProgress, adbc.OptionKeyMaxProgress,
		adbc.OptionKeyIngestTargetTable, adbc.OptionKeyIngestMode, adbc.OptionKeyIsolationLevel,
		adbc.OptionKeyReadOnly,
		adbc.OptionValueIngestModeCreate, adbc.OptionValueIngestModeAppend,
		adbc.OptionValueIngestModeReplace, adbc.OptionValueIngestModeCreateAppend,
		adbc.OptionValueIngestTargetCatalog, adbc.OptionValueIngestTargetDBSchema,
		adbc.OptionValueIngestTemporary,
		adbc.OptionKeyURI, adbc.OptionKeyUsername, adbc.OptionKeyPassword,
		adbc.OptionKeyTelemetryTraceParent, adbc.OptionKeyTelemetryTracesExporter,
		adbc.OptionKeyTelemetryTracesFolderPath,
		adbc.StatisticAverageByteWidthName, adbc.StatisticDistinctCountName,
		adbc.StatisticMaxByteWidthName, adbc.StatisticMaxValueName, adbc.StatisticMinValueName,
		adbc.StatisticNullCountName, adbc.StatisticRowCountName,
		adbc.DriverInfoKeyDriverArrowVersion, adbc.DriverInfoKeyVendorArrowVersion,
		adbc.DriverInfoKeyVendorSQLSupport, adbc.DriverInfoKeyVendorSubstraitSupport,
		adbc.DriverInfoKeyVendorSubstraitMinVersion, adbc.DriverInfoKeyVendorSubstraitMaxVersion,
	}
	_ = []int16{
		adbc.StatisticAverageByteWidthKey, adbc.StatisticDistinctCountKey, adbc.StatisticMaxByteWidthKey,
		adbc.StatisticMaxValueKey, adbc.StatisticMinValueKey, adbc.StatisticNullCountKey,
		adbc.StatisticRowCountKey,
	}
)

// myString is a string type no constant of adbc could have.
type myString string

// Standard schemas and the struct types nested in them.
var (
	_ = []*arrow.Schema{
		adbc.GetInfoSchema, adbc.TableTypesSchema, adbc.GetObjectsSchema, adbc.GetStatisticsSchema,
		adbc.GetStatisticNamesSchema, adbc.GetTableSchemaSchema,
	}
	_ = []*arrow.StructType{
		adbc.UsageSchema, adbc.ConstraintSchema, adbc.ColumnSchema, adbc.TableSchema,
		adbc.DBSchemaSchema, adbc.StatisticsSchema, adbc.StatisticsDBSchemaSchema,
	}
)

// Interfaces. Each interface below has exactly the method set arrow-adbc
// declares for the adbc interface of the same name. Assigning each to the
// other both ways compiles only while the two method sets are equal: a
// missing, extra or changed method breaks the build. Equal method sets also
// mean that any type implementing arrow-adbc's interface implements ours.

type Driver interface {
	NewDatabase(opts map[string]string) (adbc.Database, error)
}

type DriverWithContext interface {
	NewDatabaseWithContext(ctx context.Context, opts map[string]string) (adbc.Database, error)
}

type Database interface {
	SetOptions(map[string]string) error
	Open(ctx context.Context) (adbc.Connection, error)
	Close() error
}

type DatabaseWithContext interface {
	SetOptions(ctx context.Context, opts map[string]string) error
	Open(ctx context.Context) (adbc.ConnectionWithContext, error)
	Close(ctx context.Context) error
}

type Connection interface {
	GetInfo(ctx context.Context, infoCodes []adbc.InfoCode) (array.RecordReader, error)
	GetObjects(ctx context.Context, depth adbc.ObjectDepth, catalog, dbSchema, tableName, columnName *string, tableType []string) (array.RecordReader, error)
	GetTableSchema(ctx context.Context, catalog, dbSchema *string, tableName string) (*arrow.Schema, error)
	GetTableTypes(context.Context) (array.RecordReader, error)
	Commit(context.Context) error
	Rollback(context.Context) error
	NewStatement() (adbc.Statement, error)
	Close() error
	ReadPartition(ctx context.Context, serializedPartition []byte) (array.RecordReader, error)
}

type ConnectionWithContext interface {
	GetInfo(ctx context.Context, infoCodes []adbc.InfoCode) (array.RecordReader, error)
	GetObjects(ctx context.Context, depth adbc.ObjectDepth, catalog, dbSchema, tableName, columnName *string, tableType []string) (array.RecordReader, error)
	GetTableSchema(ctx context.Context, catalog, dbSchema *string, tableName string) (*arrow.Schema, error)
	GetTableTypes(ctx context.Context) (array.RecordReader, error)
	Commit(ctx context.Context) error
	Rollback(ctx context.Context) error
	NewStatement(ctx context.Context) (adbc.StatementWithContext, error)
	Close(ctx context.Context) error
	ReadPartition(ctx context.Context, serializedPartition []byte) (array.RecordReader, error)
}

type PostInitOptions interface {
	SetOption(key, value string) error
}

type Statement interface {
	Close() error
	SetOption(key, val string) error
	SetSqlQuery(query string) error
	ExecuteQuery(context.Context) (array.RecordReader, int64, error)
	ExecuteUpdate(context.Context) (int64, error)
	Prepare(context.Context) error
	SetSubstraitPlan(plan []byte) error
	Bind(ctx context.Context, values arrow.RecordBatch) error
	BindStream(ctx context.Context, stream array.RecordReader) error
	GetParameterSchema() (*arrow.Schema, error)
	ExecutePartitions(context.Context) (*arrow.Schema, adbc.Partitions, int64, error)
}

type StatementWithContext interface {
	Close(ctx context.Context) error
	SetOption(ctx context.Context, key, val string) error
	SetSqlQuery(ctx context.Context, query string) error
	SetSubstraitPlan(ctx context.Context, plan []byte) error
	GetParameterSchema(ctx context.Context) (*arrow.Schema, error)
	ExecuteQuery(ctx context.Context) (array.RecordReader, int64, error)
	ExecuteUpdate(ctx context.Context) (int64, error)
	Prepare(ctx context.Context) error
	ExecutePartitions(ctx context.Context) (*arrow.Schema, adbc.Partitions, int64, error)
	Bind(ctx context.Context, values arrow.RecordBatch) error
	BindStream(ctx context.Context, stream array.RecordReader) error
}

type ConnectionGetStatistics interface {
	GetStatistics(ctx context.Context, catalog, dbSchema, tableName *string, approximate bool) (array.RecordReader, error)
	GetStatisticNames(ctx context.Context) (array.RecordReader, error)
}

type ConnectionGetStatisticsWithContext interface {
	GetStatistics(ctx context.Context, catalog, dbSchema, tableName *string, approximate bool) (array.RecordReader, error)
	GetStatisticNames(ctx context.Context) (array.RecordReader, error)
}

type StatementExecuteSchema interface {
	ExecuteSchema(context.Context) (*arrow.Schema, error)
}

type StatementExecuteSchemaWithContext interface {
	ExecuteSchema(ctx context.Context) (*arrow.Schema, error)
}

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

type DatabaseLogging interface {
	SetLogger(*slog.Logger)
}

type ErrorDetail interface {
	Key() string
	Serialize() ([]byte, error)
}

var (
	_ Driver                             = adbc.Driver(nil)
	_ DriverWithContext                  = adbc.DriverWithContext(nil)
	_ Database                           = adbc.Database(nil)
	_ DatabaseWithContext                = adbc.DatabaseWithContext(nil)
	_ Connection                         = adbc.Connection(nil)
	_ ConnectionWithContext              = adbc.ConnectionWithContext(nil)
	_ PostInitOptions                    = adbc.PostInitOptions(nil)
	_ Statement                          = adbc.Statement(nil)
	_ StatementWithContext               = adbc.StatementWithContext(nil)
	_ ConnectionGetStatistics            = adbc.ConnectionGetStatistics(nil)
	_ ConnectionGetStatisticsWithContext = adbc.ConnectionGetStatisticsWithContext(nil)
	_ StatementExecuteSchema             = adbc.StatementExecuteSchema(nil)
	_ StatementExecuteSchemaWithContext  = adbc.StatementExecuteSchemaWithContext(nil)
	_ GetSetOptions                      = adbc.GetSetOptions(nil)
	_ GetSetOptionsWithContext           = adbc.GetSetOptionsWithContext(nil)
	_ DatabaseLogging                    = adbc.DatabaseLogging(nil)
	_ ErrorDetail                        = adbc.ErrorDetail(nil)

	_ adbc.Driver                             = Driver(nil)
	_ adbc.DriverWithContext                  = DriverWithContext(nil)
	_ adbc.Database                           = Database(nil)
	_ adbc.DatabaseWithContext                = DatabaseWithContext(nil)
	_ adbc.Connection                         = Connection(nil)
	_ adbc.ConnectionWithContext              = ConnectionWithContext(nil)
	_ adbc.PostInitOptions                    = PostInitOptions(nil)
	_ adbc.Statement                          = Statement(nil)
	_ adbc.StatementWithContext               = StatementWithContext(nil)
	_ adbc.ConnectionGetStatistics            = ConnectionGetStatistics(nil)
	_ adbc.ConnectionGetStatisticsWithContext = ConnectionGetStatisticsWithContext(nil)
	_ adbc.StatementExecuteSchema             = StatementExecuteSchema(nil)
	_ adbc.StatementExecuteSchemaWithContext  = StatementExecuteSchemaWithContext(nil)
	_ adbc.GetSetOptions                      = GetSetOptions(nil)
	_ adbc.GetSetOptionsWithContext           = GetSetOptionsWithContext(nil)
	_ adbc.DatabaseLogging                    = DatabaseLogging(nil)
	_ adbc.ErrorDetail                        = ErrorDetail(nil)

	// GetSetOptions embeds PostInitOptions, as in arrow-adbc.
	_ adbc.PostInitOptions = adbc.GetSetOptions(nil)
)
