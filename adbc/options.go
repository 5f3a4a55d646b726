package adbc

// ADBC API revisions, as the C API encodes them (major*1_000_000 +
// minor*1_000 + patch). InfoDriverADBCVersion reports one of these.
const (
	AdbcVersion1_0_0 int64 = 1_000_000
	AdbcVersion1_1_0 int64 = 1_001_000
)

// Standard option keys and values, for SetOption and friends on databases,
// connections and statements. Keys are namespaced by the object they apply
// to; drivers define further keys of their own.
const (
	// OptionValueEnabled and OptionValueDisabled are the values of boolean
	// options.
	OptionValueEnabled  = "true"
	OptionValueDisabled = "false"

	// OptionKeyAutoCommit turns a connection's autocommit mode on or off.
	OptionKeyAutoCommit = "adbc.connection.autocommit"
	// OptionKeyCurrentCatalog is the connection's current catalog.
	OptionKeyCurrentCatalog = "adbc.connection.catalog"
	// OptionKeyCurrentDbSchema is the connection's current database schema.
	OptionKeyCurrentDbSchema = "adbc.connection.db_schema"
	// OptionKeyIncremental makes a statement's ExecutePartitions return
	// partitions as they become available, over repeated calls.
	OptionKeyIncremental = "adbc.statement.exec.incremental"
	// OptionKeyProgress reads how far a statement's execution has got.
	OptionKeyProgress = "adbc.statement.exec.progress"
	// OptionKeyMaxProgress reads the value OptionKeyProgress reaches at
	// the end of execution.
	OptionKeyMaxProgress = "adbc.statement.exec.max_progress"
	// OptionKeyIngestTargetTable names the table a bulk ingestion writes to.
	OptionKeyIngestTargetTable = "adbc.ingest.target_table"
	// OptionKeyIngestMode picks how a bulk ingestion treats the target
	// table: one of the OptionValueIngestMode values.
	OptionKeyIngestMode = "adbc.ingest.mode"
	// OptionKeyIsolationLevel sets a connection's transaction isolation: an
	// OptionIsolationLevel value.
	OptionKeyIsolationLevel = "adbc.connection.transaction.isolation_level"
	// OptionKeyReadOnly makes a connection read-only.
	OptionKeyReadOnly = "adbc.connection.readonly"

	// OptionValueIngestModeCreate creates the target table; it fails if the
	// table exists.
	OptionValueIngestModeCreate = "adbc.ingest.mode.create"
	// OptionValueIngestModeAppend appends to an existing table; it fails if
	// the table does not exist.
	OptionValueIngestModeAppend = "adbc.ingest.mode.append"
	// OptionValueIngestModeReplace drops the table if it exists, then
	// creates it.
	OptionValueIngestModeReplace = "adbc.ingest.mode.replace"
	// OptionValueIngestModeCreateAppend creates the table if it does not
	// exist, then appends to it.
	OptionValueIngestModeCreateAppend = "adbc.ingest.mode.create_append"
	// OptionValueIngestTargetCatalog is the key of the catalog of a bulk
	// ingestion's target table (a key despite its name).
	OptionValueIngestTargetCatalog = "adbc.ingest.target_catalog"
	// OptionValueIngestTargetDBSchema is the key of the database schema of
	// a bulk ingestion's target table (a key despite its name).
	OptionValueIngestTargetDBSchema = "adbc.ingest.target_db_schema"
	// OptionValueIngestTemporary is the key that makes a bulk ingestion
	// target a temporary table (a key despite its name).
	OptionValueIngestTemporary = "adbc.ingest.temporary"

	// OptionKeyURI is the database's URI.
	OptionKeyURI = "uri"
	// OptionKeyUsername is the user name to authenticate as.
	OptionKeyUsername = "username"
	// OptionKeyPassword is the password to authenticate with.
	OptionKeyPassword = "password"

	// OptionKeyTelemetryTraceParent gets or sets the W3C trace parent that
	// a driver's OpenTelemetry spans hang under. EXPERIMENTAL.
	OptionKeyTelemetryTraceParent = "adbc.telemetry.trace_parent"
	// OptionKeyTelemetryTracesExporter picks the traces exporter a driver
	// sets up (an OptionTelemetryExporter value); on a database it takes
	// precedence over the OTEL_TRACES_EXPORTER environment variable.
	// EXPERIMENTAL.
	OptionKeyTelemetryTracesExporter = "adbc.telemetry.traces_exporter"
	// OptionKeyTelemetryTracesFolderPath is the folder the "adbcfile"
	// exporter writes its trace files to, instead of the platform's default
	// ADBC traces folder; other exporters ignore it. EXPERIMENTAL.
	OptionKeyTelemetryTracesFolderPath = "adbc.telemetry.traces_folder_path"
)

// OptionTelemetryExporter is a value of OptionKeyTelemetryTracesExporter.
// EXPERIMENTAL.
type OptionTelemetryExporter string

// The traces exporters, named as the OTEL_TRACES_EXPORTER environment
// variable names them. EXPERIMENTAL.
const (
	TelemetryExporterNone     OptionTelemetryExporter = "none"
	TelemetryExporterOtlp     OptionTelemetryExporter = "otlp"
	TelemetryExporterConsole  OptionTelemetryExporter = "console"
	TelemetryExporterAdbcFile OptionTelemetryExporter = "adbcfile"
)

// OptionIsolationLevel is a value of OptionKeyIsolationLevel.
type OptionIsolationLevel string

// The transaction isolation levels, weakest to strongest after
// LevelDefault, which leaves the choice to the database.
const (
	LevelDefault         OptionIsolationLevel = "adbc.connection.transaction.isolation.default"
	LevelReadUncommitted OptionIsolationLevel = "adbc.connection.transaction.isolation.read_uncommitted"
	LevelReadCommitted   OptionIsolationLevel = "adbc.connection.transaction.isolation.read_committed"
	LevelRepeatableRead  OptionIsolationLevel = "adbc.connection.transaction.isolation.repeatable_read"
	LevelSnapshot        OptionIsolationLevel = "adbc.connection.transaction.isolation.snapshot"
	LevelSerializable    OptionIsolationLevel = "adbc.connection.transaction.isolation.serializable"
	LevelLinearizable    OptionIsolationLevel = "adbc.connection.transaction.isolation.linearizable"
)
