package adbc_test

import (
	"testing"

	"github.com/purearrow/cdevice/adbc"
)

func TestInfoCodeValuesAndStrings(t *testing.T) {
	// arrow-adbc's generated String covers only the codes that carried a
	// name when it was generated: 3 to 6 print as numbers.
	cases := []struct {
		c     adbc.InfoCode
		value uint32
		want  string
	}{
		{adbc.InfoVendorName, 0, "VendorName"},
		{adbc.InfoVendorVersion, 1, "VendorVersion"},
		{adbc.InfoVendorArrowVersion, 2, "VendorArrowVersion"},
		{adbc.InfoVendorSql, 3, "InfoCode(3)"},
		{adbc.InfoVendorSubstrait, 4, "InfoCode(4)"},
		{adbc.InfoVendorSubstraitMinVersion, 5, "InfoCode(5)"},
		{adbc.InfoVendorSubstraitMaxVersion, 6, "InfoCode(6)"},
		{adbc.InfoDriverName, 100, "DriverName"},
		{adbc.InfoDriverVersion, 101, "DriverVersion"},
		{adbc.InfoDriverArrowVersion, 102, "DriverArrowVersion"},
		{adbc.InfoDriverADBCVersion, 103, "DriverADBCVersion"},
		{7, 7, "InfoCode(7)"},
		{99, 99, "InfoCode(99)"},
		{104, 104, "InfoCode(104)"},
		{500, 500, "InfoCode(500)"},
		{1<<32 - 1, 1<<32 - 1, "InfoCode(4294967295)"},
	}
	for _, c := range cases {
		if uint32(c.c) != c.value {
			t.Errorf("%s = %d, want %d", c.want, uint32(c.c), c.value)
		}
		if got := c.c.String(); got != c.want {
			t.Errorf("InfoCode(%d).String() = %q, want %q", c.value, got, c.want)
		}
	}
}

func TestObjectDepth(t *testing.T) {
	got := []adbc.ObjectDepth{adbc.ObjectDepthAll, adbc.ObjectDepthCatalogs, adbc.ObjectDepthDBSchemas, adbc.ObjectDepthTables, adbc.ObjectDepthColumns}
	want := []adbc.ObjectDepth{0, 1, 2, 3, 0}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("depth %d = %d, want %d", i, got[i], want[i])
		}
	}
}

func TestConstants(t *testing.T) {
	// Every string and integer constant, with the value arrow-adbc gives it.
	strs := []struct{ got, want string }{
		{adbc.OptionValueEnabled, "true"},
		{adbc.OptionValueDisabled, "false"},
		{adbc.OptionKeyAutoCommit, "adbc.connection.autocommit"},
		{adbc.OptionKeyCurrentCatalog, "adbc.connection.catalog"},
		{adbc.OptionKeyCurrentDbSchema, "adbc.connection.db_schema"},
		{adbc.OptionKeyIncremental, "adbc.statement.exec.incremental"},
		{adbc.OptionKeyProgress, "adbc.statement.exec.progress"},
		{adbc.OptionKeyMaxProgress, "adbc.statement.exec.max_progress"},
		{adbc.OptionKeyIngestTargetTable, "adbc.ingest.target_table"},
		{adbc.OptionKeyIngestMode, "adbc.ingest.mode"},
		{adbc.OptionKeyIsolationLevel, "adbc.connection.transaction.isolation_level"},
		{adbc.OptionKeyReadOnly, "adbc.connection.readonly"},
		{adbc.OptionValueIngestModeCreate, "adbc.ingest.mode.create"},
		{adbc.OptionValueIngestModeAppend, "adbc.ingest.mode.append"},
		{adbc.OptionValueIngestModeReplace, "adbc.ingest.mode.replace"},
		{adbc.OptionValueIngestModeCreateAppend, "adbc.ingest.mode.create_append"},
		{adbc.OptionValueIngestTargetCatalog, "adbc.ingest.target_catalog"},
		{adbc.OptionValueIngestTargetDBSchema, "adbc.ingest.target_db_schema"},
		{adbc.OptionValueIngestTemporary, "adbc.ingest.temporary"},
		{adbc.OptionKeyURI, "uri"},
		{adbc.OptionKeyUsername, "username"},
		{adbc.OptionKeyPassword, "password"},
		{adbc.OptionKeyTelemetryTraceParent, "adbc.telemetry.trace_parent"},
		{adbc.OptionKeyTelemetryTracesExporter, "adbc.telemetry.traces_exporter"},
		{adbc.OptionKeyTelemetryTracesFolderPath, "adbc.telemetry.traces_folder_path"},
		{string(adbc.TelemetryExporterNone), "none"},
		{string(adbc.TelemetryExporterOtlp), "otlp"},
		{string(adbc.TelemetryExporterConsole), "console"},
		{string(adbc.TelemetryExporterAdbcFile), "adbcfile"},
		{string(adbc.LevelDefault), "adbc.connection.transaction.isolation.default"},
		{string(adbc.LevelReadUncommitted), "adbc.connection.transaction.isolation.read_uncommitted"},
		{string(adbc.LevelReadCommitted), "adbc.connection.transaction.isolation.read_committed"},
		{string(adbc.LevelRepeatableRead), "adbc.connection.transaction.isolation.repeatable_read"},
		{string(adbc.LevelSnapshot), "adbc.connection.transaction.isolation.snapshot"},
		{string(adbc.LevelSerializable), "adbc.connection.transaction.isolation.serializable"},
		{string(adbc.LevelLinearizable), "adbc.connection.transaction.isolation.linearizable"},
		{adbc.StatisticAverageByteWidthName, "adbc.statistic.byte_width"},
		{adbc.StatisticDistinctCountName, "adbc.statistic.distinct_count"},
		{adbc.StatisticMaxByteWidthName, "adbc.statistic.max_byte_width"},
		{adbc.StatisticMaxValueName, "adbc.statistic.max_value"},
		{adbc.StatisticMinValueName, "adbc.statistic.min_value"},
		{adbc.StatisticNullCountName, "adbc.statistic.null_count"},
		{adbc.StatisticRowCountName, "adbc.statistic.row_count"},
		{adbc.DriverInfoKeyDriverArrowVersion, "driver_arrow_version"},
		{adbc.DriverInfoKeyVendorArrowVersion, "vendor_arrow_version"},
		{adbc.DriverInfoKeyVendorSQLSupport, "vendor_sql_support"},
		{adbc.DriverInfoKeyVendorSubstraitSupport, "vendor_substrait_support"},
		{adbc.DriverInfoKeyVendorSubstraitMinVersion, "vendor_substrait_min_version"},
		{adbc.DriverInfoKeyVendorSubstraitMaxVersion, "vendor_substrait_max_version"},
	}
	for _, c := range strs {
		if c.got != c.want {
			t.Errorf("constant %q, want %q", c.got, c.want)
		}
	}
	ints := []struct{ got, want int64 }{
		{adbc.AdbcVersion1_0_0, 1_000_000},
		{adbc.AdbcVersion1_1_0, 1_001_000},
		{adbc.StatisticAverageByteWidthKey, 0},
		{adbc.StatisticDistinctCountKey, 1},
		{adbc.StatisticMaxByteWidthKey, 2},
		{adbc.StatisticMaxValueKey, 3},
		{adbc.StatisticMinValueKey, 4},
		{adbc.StatisticNullCountKey, 5},
		{adbc.StatisticRowCountKey, 6},
		{int64(adbc.InfoValueStringType), 0},
		{int64(adbc.InfoValueBooleanType), 1},
		{int64(adbc.InfoValueInt64Type), 2},
		{int64(adbc.InfoValueInt32BitmaskType), 3},
		{int64(adbc.InfoValueStringListType), 4},
		{int64(adbc.InfoValueInt32ToInt32ListMapType), 5},
	}
	for i, c := range ints {
		if c.got != c.want {
			t.Errorf("integer constant %d = %d, want %d", i, c.got, c.want)
		}
	}
}
