package adbc

// The statistics ADBC defines. A GetStatistics result names a statistic by
// its Key (its statistic_key column, an int16); GetStatisticNames maps the
// driver's own keys, 1024 and up, to names. Keys below 1024 are ADBC's.
//
// Where a statistic is a count or width, its value is an int64 when exact
// and a float64 when approximate.
const (
	// StatisticAverageByteWidthKey / Name: the mean size in bytes of a
	// column's values (for strings, roughly their mean length); a float64.
	StatisticAverageByteWidthKey  = 0
	StatisticAverageByteWidthName = "adbc.statistic.byte_width"
	// StatisticDistinctCountKey / Name: the number of distinct values in
	// a column.
	StatisticDistinctCountKey  = 1
	StatisticDistinctCountName = "adbc.statistic.distinct_count"
	// StatisticMaxByteWidthKey / Name: the largest size in bytes of a
	// column's values.
	StatisticMaxByteWidthKey  = 2
	StatisticMaxByteWidthName = "adbc.statistic.max_byte_width"
	// StatisticMaxValueKey / Name: a column's largest value, of the
	// column's type.
	StatisticMaxValueKey  = 3
	StatisticMaxValueName = "adbc.statistic.max_value"
	// StatisticMinValueKey / Name: a column's smallest value, of the
	// column's type.
	StatisticMinValueKey  = 4
	StatisticMinValueName = "adbc.statistic.min_value"
	// StatisticNullCountKey / Name: the number of nulls in a column.
	StatisticNullCountKey  = 5
	StatisticNullCountName = "adbc.statistic.null_count"
	// StatisticRowCountKey / Name: the number of rows of a column or table.
	StatisticRowCountKey  = 6
	StatisticRowCountName = "adbc.statistic.row_count"
)
