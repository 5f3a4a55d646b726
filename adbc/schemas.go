package adbc

import "github.com/apache/arrow-go/v18/arrow"

// Shorthands for building the standard schemas below.
var (
	utf8  = arrow.BinaryTypes.String
	i16   = arrow.PrimitiveTypes.Int16
	i32   = arrow.PrimitiveTypes.Int32
	boolT = arrow.FixedWidthTypes.Boolean
)

func optField(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

func reqField(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t}
}

// The schemas of the results of the metadata methods, and the struct types
// nested in them. Drivers build results of exactly these schemas; clients
// may rely on them. Lists' elements are nullable fields named "item".
var (
	// GetInfoSchema is the result of Connection.GetInfo: info_name, an
	// InfoCode (uint32, not null), and info_value, a dense union whose
	// members' type codes are the InfoValue*Type constants.
	GetInfoSchema = arrow.NewSchema([]arrow.Field{
		reqField("info_name", arrow.PrimitiveTypes.Uint32),
		optField("info_value", arrow.DenseUnionOf([]arrow.Field{
			optField("string_value", utf8),
			optField("bool_value", boolT),
			optField("int64_value", arrow.PrimitiveTypes.Int64),
			optField("int32_bitmask", i32),
			optField("string_list", arrow.ListOf(utf8)),
			optField("int32_to_int32_list_map", arrow.MapOf(i32, arrow.ListOf(i32))),
		}, []arrow.UnionTypeCode{
			InfoValueStringType, InfoValueBooleanType, InfoValueInt64Type,
			InfoValueInt32BitmaskType, InfoValueStringListType, InfoValueInt32ToInt32ListMapType,
		})),
	}, nil)

	// TableTypesSchema is the result of Connection.GetTableTypes.
	TableTypesSchema = arrow.NewSchema([]arrow.Field{reqField("table_type", utf8)}, nil)

	// UsageSchema is a column a foreign key refers to.
	UsageSchema = arrow.StructOf(
		optField("fk_catalog", utf8),
		optField("fk_db_schema", utf8),
		reqField("fk_table", utf8),
		reqField("fk_column_name", utf8),
	)

	// ConstraintSchema is a table constraint: constraint_type is one of
	// "CHECK", "FOREIGN KEY", "PRIMARY KEY" and "UNIQUE"; the usage list
	// is for foreign keys only.
	ConstraintSchema = arrow.StructOf(
		optField("constraint_name", utf8),
		reqField("constraint_type", utf8),
		reqField("constraint_column_names", arrow.ListOf(utf8)),
		optField("constraint_column_usage", arrow.ListOf(UsageSchema)),
	)

	// ColumnSchema is a column of a table: its name, 1-based position and
	// remarks, then the optional JDBC/ODBC-style xdbc_ fields.
	ColumnSchema = arrow.StructOf(
		reqField("column_name", utf8),
		optField("ordinal_position", i32),
		optField("remarks", utf8),
		optField("xdbc_data_type", i16),
		optField("xdbc_type_name", utf8),
		optField("xdbc_column_size", i32),
		optField("xdbc_decimal_digits", i16),
		optField("xdbc_num_prec_radix", i16),
		optField("xdbc_nullable", i16),
		optField("xdbc_column_def", utf8),
		optField("xdbc_sql_data_type", i16),
		optField("xdbc_datetime_sub", i16),
		optField("xdbc_char_octet_length", i32),
		optField("xdbc_is_nullable", utf8),
		optField("xdbc_scope_catalog", utf8),
		optField("xdbc_scope_schema", utf8),
		optField("xdbc_scope_table", utf8),
		optField("xdbc_is_autoincrement", boolT),
		optField("xdbc_is_generatedcolumn", boolT),
	)

	// TableSchema is a table with its columns and constraints.
	TableSchema = arrow.StructOf(
		reqField("table_name", utf8),
		reqField("table_type", utf8),
		optField("table_columns", arrow.ListOf(ColumnSchema)),
		optField("table_constraints", arrow.ListOf(ConstraintSchema)),
	)

	// DBSchemaSchema is a database schema with its tables.
	DBSchemaSchema = arrow.StructOf(
		optField("db_schema_name", utf8),
		optField("db_schema_tables", arrow.ListOf(TableSchema)),
	)

	// GetObjectsSchema is the result of Connection.GetObjects: catalogs
	// with their database schemas.
	GetObjectsSchema = arrow.NewSchema([]arrow.Field{
		optField("catalog_name", utf8),
		optField("catalog_db_schemas", arrow.ListOf(DBSchemaSchema)),
	}, nil)

	// StatisticsSchema is one statistic of a table, or of one of its
	// columns when column_name is not null. statistic_value is a dense
	// union of int64, uint64, float64 and binary (type codes 0 to 3).
	StatisticsSchema = arrow.StructOf(
		reqField("table_name", utf8),
		optField("column_name", utf8),
		reqField("statistic_key", i16),
		reqField("statistic_value", arrow.DenseUnionOf([]arrow.Field{
			optField("int64", arrow.PrimitiveTypes.Int64),
			optField("uint64", arrow.PrimitiveTypes.Uint64),
			optField("float64", arrow.PrimitiveTypes.Float64),
			optField("binary", arrow.BinaryTypes.Binary),
		}, []arrow.UnionTypeCode{0, 1, 2, 3})),
		reqField("statistic_is_approximate", boolT),
	)

	// StatisticsDBSchemaSchema is a database schema with its statistics.
	StatisticsDBSchemaSchema = arrow.StructOf(
		optField("db_schema_name", utf8),
		reqField("db_schema_statistics", arrow.ListOf(StatisticsSchema)),
	)

	// GetStatisticsSchema is the result of
	// ConnectionGetStatistics.GetStatistics.
	GetStatisticsSchema = arrow.NewSchema([]arrow.Field{
		optField("catalog_name", utf8),
		reqField("catalog_db_schemas", arrow.ListOf(StatisticsDBSchemaSchema)),
	}, nil)

	// GetStatisticNamesSchema is the result of
	// ConnectionGetStatistics.GetStatisticNames.
	GetStatisticNamesSchema = arrow.NewSchema([]arrow.Field{
		reqField("statistic_name", utf8),
		reqField("statistic_key", i16),
	}, nil)

	// GetTableSchemaSchema lists tables with their Arrow schemas, as Flight
	// SQL's GetTables does when asked for schemas: table_schema holds a
	// table's schema serialized in the Arrow IPC format.
	GetTableSchemaSchema = arrow.NewSchema([]arrow.Field{
		optField("catalog_name", utf8),
		optField("db_schema_name", utf8),
		reqField("table_name", utf8),
		reqField("table_type", utf8),
		reqField("table_schema", arrow.BinaryTypes.Binary),
	}, nil)
)
