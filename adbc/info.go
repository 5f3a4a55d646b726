package adbc

import (
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// InfoCode identifies one item of the metadata Connection.GetInfo returns.
// Codes below 10_000 are ADBC's; [500, 1_000) are the XDBC codes that Flight
// SQL's GetSqlInfo uses too.
type InfoCode uint32

// The standard info codes, with the type of their value in GetInfoSchema's
// info_value union.
const (
	// InfoVendorName is the database product's name (utf8).
	InfoVendorName InfoCode = 0
	// InfoVendorVersion is the database product's version (utf8).
	InfoVendorVersion InfoCode = 1
	// InfoVendorArrowVersion is the Arrow library version of the database
	// (utf8).
	InfoVendorArrowVersion InfoCode = 2
	// InfoVendorSql says whether the database takes SQL queries (bool).
	InfoVendorSql InfoCode = 3
	// InfoVendorSubstrait says whether the database takes Substrait plans
	// (bool).
	InfoVendorSubstrait InfoCode = 4
	// InfoVendorSubstraitMinVersion is the oldest Substrait version the
	// database takes, null without Substrait (utf8).
	InfoVendorSubstraitMinVersion InfoCode = 5
	// InfoVendorSubstraitMaxVersion is the newest Substrait version the
	// database takes, null without Substrait (utf8).
	InfoVendorSubstraitMaxVersion InfoCode = 6
	// InfoDriverName is the driver's name (utf8).
	InfoDriverName InfoCode = 100
	// InfoDriverVersion is the driver's version (utf8).
	InfoDriverVersion InfoCode = 101
	// InfoDriverArrowVersion is the Arrow library version of the driver
	// (utf8).
	InfoDriverArrowVersion InfoCode = 102
	// InfoDriverADBCVersion is the ADBC API revision the driver implements,
	// such as AdbcVersion1_1_0 (int64).
	InfoDriverADBCVersion InfoCode = 103
)

// String returns the code's name without its "Info" prefix ("VendorName",
// "DriverADBCVersion", ...), or "InfoCode(N)" otherwise. As in arrow-adbc,
// only the vendor name and versions and the driver codes are named: the SQL
// and Substrait codes (3 to 6) print as "InfoCode(N)".
func (c InfoCode) String() string {
	switch c {
	case InfoVendorName:
		return "VendorName"
	case InfoVendorVersion:
		return "VendorVersion"
	case InfoVendorArrowVersion:
		return "VendorArrowVersion"
	case InfoDriverName:
		return "DriverName"
	case InfoDriverVersion:
		return "DriverVersion"
	case InfoDriverArrowVersion:
		return "DriverArrowVersion"
	case InfoDriverADBCVersion:
		return "DriverADBCVersion"
	}
	return "InfoCode(" + strconv.FormatUint(uint64(c), 10) + ")"
}

// InfoValueTypeCode is a type code of the info_value union of GetInfoSchema:
// it says which member holds a row's value.
type InfoValueTypeCode = arrow.UnionTypeCode

// The members of GetInfoSchema's info_value union, by type code.
const (
	InfoValueStringType              InfoValueTypeCode = 0 // string_value: utf8
	InfoValueBooleanType             InfoValueTypeCode = 1 // bool_value: bool
	InfoValueInt64Type               InfoValueTypeCode = 2 // int64_value: int64
	InfoValueInt32BitmaskType        InfoValueTypeCode = 3 // int32_bitmask: int32
	InfoValueStringListType          InfoValueTypeCode = 4 // string_list: list<utf8>
	InfoValueInt32ToInt32ListMapType InfoValueTypeCode = 5 // int32_to_int32_list_map: map<int32, list<int32>>
)

// ObjectDepth is how deep Connection.GetObjects descends into the hierarchy
// of catalogs, database schemas, tables and columns.
type ObjectDepth int

// The depths of GetObjects.
const (
	// ObjectDepthAll returns everything, columns included.
	ObjectDepthAll ObjectDepth = iota
	// ObjectDepthCatalogs returns catalogs only.
	ObjectDepthCatalogs
	// ObjectDepthDBSchemas returns catalogs and their database schemas.
	ObjectDepthDBSchemas
	// ObjectDepthTables returns everything down to tables, without columns.
	ObjectDepthTables
	// ObjectDepthColumns is ObjectDepthAll.
	ObjectDepthColumns = ObjectDepthAll
)
