package adbc_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/purearrow/cdevice/adbc"
)

// flatten lists every field of fields and of the types nested in them, one
// "path type[ null]" line each; union members also show their type code.
func flatten(prefix string, fields []arrow.Field) []string {
	var out []string
	for _, f := range fields {
		path := prefix + f.Name
		line := path + " " + f.Type.Name()
		if f.Nullable {
			line += " null"
		}
		if len(f.Metadata.Keys()) > 0 {
			line += " " + f.Metadata.String()
		}
		out = append(out, line)
		if u, ok := f.Type.(arrow.UnionType); ok {
			out = append(out, fmt.Sprintf("%s codes %v", path, u.TypeCodes()))
		}
		if n, ok := f.Type.(arrow.NestedType); ok {
			out = append(out, flatten(path+".", n.Fields())...)
		}
	}
	return out
}

func checkFields(t *testing.T, name string, fields []arrow.Field, want string) {
	t.Helper()
	got := strings.Join(flatten("", fields), "\n")
	want = strings.TrimSpace(want)
	if got != want {
		t.Errorf("%s fields:\n%s\nwant:\n%s", name, got, want)
	}
}

// The expectations below are arrow-adbc's standard_schemas.go, field by
// field. Lists' elements are "item" and maps' entries "entries" with "key"
// and "value", as arrow.ListOf and arrow.MapOf make them.

const usageFields = `
fk_catalog utf8 null
fk_db_schema utf8 null
fk_table utf8
fk_column_name utf8`

const columnFields = `
column_name utf8
ordinal_position int32 null
remarks utf8 null
xdbc_data_type int16 null
xdbc_type_name utf8 null
xdbc_column_size int32 null
xdbc_decimal_digits int16 null
xdbc_num_prec_radix int16 null
xdbc_nullable int16 null
xdbc_column_def utf8 null
xdbc_sql_data_type int16 null
xdbc_datetime_sub int16 null
xdbc_char_octet_length int32 null
xdbc_is_nullable utf8 null
xdbc_scope_catalog utf8 null
xdbc_scope_schema utf8 null
xdbc_scope_table utf8 null
xdbc_is_autoincrement bool null
xdbc_is_generatedcolumn bool null`

// nest prefixes every line of fields with prefix.
func nest(prefix, fields string) string {
	lines := strings.Split(strings.TrimSpace(fields), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n")
}

var constraintFields = `
constraint_name utf8 null
constraint_type utf8
constraint_column_names list
constraint_column_names.item utf8 null
constraint_column_usage list null
constraint_column_usage.item struct null
` + nest("constraint_column_usage.item.", usageFields)

var tableFields = `
table_name utf8
table_type utf8
table_columns list null
table_columns.item struct null
` + nest("table_columns.item.", columnFields) + `
table_constraints list null
table_constraints.item struct null
` + nest("table_constraints.item.", constraintFields)

var dbSchemaFields = `
db_schema_name utf8 null
db_schema_tables list null
db_schema_tables.item struct null
` + nest("db_schema_tables.item.", tableFields)

const statisticsFields = `
table_name utf8
column_name utf8 null
statistic_key int16
statistic_value dense_union
statistic_value codes [0 1 2 3]
statistic_value.int64 int64 null
statistic_value.uint64 uint64 null
statistic_value.float64 float64 null
statistic_value.binary binary null
statistic_is_approximate bool`

var statisticsDBSchemaFields = `
db_schema_name utf8 null
db_schema_statistics list
db_schema_statistics.item struct null
` + nest("db_schema_statistics.item.", statisticsFields)

func TestStandardStructTypes(t *testing.T) {
	for _, c := range []struct {
		name string
		st   *arrow.StructType
		want string
	}{
		{"UsageSchema", adbc.UsageSchema, usageFields},
		{"ConstraintSchema", adbc.ConstraintSchema, constraintFields},
		{"ColumnSchema", adbc.ColumnSchema, columnFields},
		{"TableSchema", adbc.TableSchema, tableFields},
		{"DBSchemaSchema", adbc.DBSchemaSchema, dbSchemaFields},
		{"StatisticsSchema", adbc.StatisticsSchema, statisticsFields},
		{"StatisticsDBSchemaSchema", adbc.StatisticsDBSchemaSchema, statisticsDBSchemaFields},
	} {
		checkFields(t, c.name, c.st.Fields(), c.want)
	}
}

func TestStandardSchemas(t *testing.T) {
	for _, c := range []struct {
		name string
		s    *arrow.Schema
		want string
	}{
		{"GetInfoSchema", adbc.GetInfoSchema, `
info_name uint32
info_value dense_union null
info_value codes [0 1 2 3 4 5]
info_value.string_value utf8 null
info_value.bool_value bool null
info_value.int64_value int64 null
info_value.int32_bitmask int32 null
info_value.string_list list null
info_value.string_list.item utf8 null
info_value.int32_to_int32_list_map map null
info_value.int32_to_int32_list_map.entries struct
info_value.int32_to_int32_list_map.entries.key int32
info_value.int32_to_int32_list_map.entries.value list null
info_value.int32_to_int32_list_map.entries.value.item int32 null`},
		{"TableTypesSchema", adbc.TableTypesSchema, `table_type utf8`},
		{"GetObjectsSchema", adbc.GetObjectsSchema, `
catalog_name utf8 null
catalog_db_schemas list null
catalog_db_schemas.item struct null
` + nest("catalog_db_schemas.item.", dbSchemaFields)},
		{"GetStatisticsSchema", adbc.GetStatisticsSchema, `
catalog_name utf8 null
catalog_db_schemas list
catalog_db_schemas.item struct null
` + nest("catalog_db_schemas.item.", statisticsDBSchemaFields)},
		{"GetStatisticNamesSchema", adbc.GetStatisticNamesSchema, `
statistic_name utf8
statistic_key int16`},
		{"GetTableSchemaSchema", adbc.GetTableSchemaSchema, `
catalog_name utf8 null
db_schema_name utf8 null
table_name utf8
table_type utf8
table_schema binary`},
	} {
		if c.s.HasMetadata() {
			t.Errorf("%s has metadata %v", c.name, c.s.Metadata())
		}
		checkFields(t, c.name, c.s.Fields(), c.want)
	}
}

func TestInfoUnionCodes(t *testing.T) {
	u := adbc.GetInfoSchema.Field(1).Type.(*arrow.DenseUnionType)
	for code, name := range map[adbc.InfoValueTypeCode]string{
		adbc.InfoValueStringType:              "string_value",
		adbc.InfoValueBooleanType:             "bool_value",
		adbc.InfoValueInt64Type:               "int64_value",
		adbc.InfoValueInt32BitmaskType:        "int32_bitmask",
		adbc.InfoValueStringListType:          "string_list",
		adbc.InfoValueInt32ToInt32ListMapType: "int32_to_int32_list_map",
	} {
		if got := u.Fields()[u.ChildIDs()[code]].Name; got != name {
			t.Errorf("type code %d is %q, want %q", code, got, name)
		}
	}
}
