package adbc

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Keys of DriverInfo.LibraryInfo, for the GetInfo items DriverInfo has no
// field of its own for. Should a field be added for one later, the item
// stays in LibraryInfo as well.
const (
	DriverInfoKeyDriverArrowVersion        = "driver_arrow_version"
	DriverInfoKeyVendorArrowVersion        = "vendor_arrow_version"
	DriverInfoKeyVendorSQLSupport          = "vendor_sql_support"
	DriverInfoKeyVendorSubstraitSupport    = "vendor_substrait_support"
	DriverInfoKeyVendorSubstraitMinVersion = "vendor_substrait_min_version"
	DriverInfoKeyVendorSubstraitMaxVersion = "vendor_substrait_max_version"
)

// DriverInfo gathers what a connection's GetInfo says about its driver and
// database; GetDriverInfo fills it in.
type DriverInfo struct {
	DriverName        string            `json:"driver_name"`         // InfoDriverName
	DriverVersion     string            `json:"driver_version"`      // InfoDriverVersion
	VendorName        string            `json:"vendor_name"`         // InfoVendorName
	VendorVersion     string            `json:"vendor_version"`      // InfoVendorVersion
	DriverADBCVersion int64             `json:"driver_adbc_version"` // InfoDriverADBCVersion
	LibraryInfo       map[string]string `json:"library_info"`        // the other items, by DriverInfoKey*
}

// GetDriverInfo calls cnxn.GetInfo for every code and collects the driver
// and vendor items into a DriverInfo. Booleans go into LibraryInfo as "true"
// or "false". Null values and codes it does not know are skipped; strings
// are copied, so the result outlives the stream. LibraryInfo is never nil
// on success. On failure, including a stream whose first two columns are not
// uint32 and dense union (where arrow-adbc panics), it returns a zero
// DriverInfo and an error.
//
// GetDriverInfo is a helper, not part of the ADBC specification.
func GetDriverInfo(ctx context.Context, cnxn Connection) (DriverInfo, error) {
	rdr, err := cnxn.GetInfo(ctx, nil)
	if err != nil {
		return DriverInfo{}, fmt.Errorf("error during GetInfo: %w", err)
	}
	defer rdr.Release()

	info := DriverInfo{LibraryInfo: map[string]string{}}
	for rdr.Next() {
		if err := info.addBatch(rdr.RecordBatch()); err != nil {
			return DriverInfo{}, err
		}
	}
	if err := rdr.Err(); err != nil {
		return DriverInfo{}, fmt.Errorf("error reading info stream: %w", err)
	}
	return info, nil
}

// addBatch takes the items of one batch of a GetInfoSchema stream.
func (d *DriverInfo) addBatch(batch arrow.RecordBatch) error {
	if batch.NumCols() < 2 {
		return fmt.Errorf("error reading info stream: %d columns, want 2", batch.NumCols())
	}
	names, ok := batch.Column(0).(*array.Uint32)
	if !ok {
		return fmt.Errorf("error reading info stream: info_name is %s, want uint32", batch.Column(0).DataType())
	}
	values, ok := batch.Column(1).(*array.DenseUnion)
	if !ok {
		return fmt.Errorf("error reading info stream: info_value is %s, want dense_union", batch.Column(1).DataType())
	}
	for i := range names.Len() {
		if names.IsNull(i) {
			continue
		}
		code := InfoCode(names.Value(i))
		child, at := values.Field(values.ChildID(i)), int(values.ValueOffset(i))
		if child.IsNull(at) {
			continue
		}
		switch col := child.(type) {
		case *array.String:
			d.setString(code, strings.Clone(col.Value(at)))
		case *array.Boolean:
			d.setBool(code, col.Value(at))
		case *array.Int64:
			if code == InfoDriverADBCVersion {
				d.DriverADBCVersion = col.Value(at)
			}
		}
	}
	return nil
}

func (d *DriverInfo) setString(code InfoCode, v string) {
	switch code {
	case InfoDriverName:
		d.DriverName = v
	case InfoDriverVersion:
		d.DriverVersion = v
	case InfoVendorName:
		d.VendorName = v
	case InfoVendorVersion:
		d.VendorVersion = v
	case InfoDriverArrowVersion:
		d.LibraryInfo[DriverInfoKeyDriverArrowVersion] = v
	case InfoVendorArrowVersion:
		d.LibraryInfo[DriverInfoKeyVendorArrowVersion] = v
	case InfoVendorSubstraitMinVersion:
		d.LibraryInfo[DriverInfoKeyVendorSubstraitMinVersion] = v
	case InfoVendorSubstraitMaxVersion:
		d.LibraryInfo[DriverInfoKeyVendorSubstraitMaxVersion] = v
	}
}

func (d *DriverInfo) setBool(code InfoCode, v bool) {
	switch code {
	case InfoVendorSql:
		d.LibraryInfo[DriverInfoKeyVendorSQLSupport] = strconv.FormatBool(v)
	case InfoVendorSubstrait:
		d.LibraryInfo[DriverInfoKeyVendorSubstraitSupport] = strconv.FormatBool(v)
	}
}
