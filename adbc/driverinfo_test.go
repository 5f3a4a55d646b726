package adbc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/purearrow/cdevice/adbc"
)

// infoRow is one row of a GetInfo result: value nil makes a null of member
// code.
type infoRow struct {
	code  adbc.InfoCode
	ucode adbc.InfoValueTypeCode
	value any
}

// infoBatch builds a GetInfoSchema batch of rows.
func infoBatch(t *testing.T, mem memory.Allocator, rows []infoRow) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(mem, adbc.GetInfoSchema)
	defer b.Release()
	names := b.Field(0).(*array.Uint32Builder)
	values := b.Field(1).(*array.DenseUnionBuilder)
	for _, r := range rows {
		names.Append(uint32(r.code))
		values.Append(r.ucode)
		child := values.Child(int(r.ucode))
		if r.value == nil {
			child.AppendNull()
			continue
		}
		switch v := r.value.(type) {
		case string:
			child.(*array.StringBuilder).Append(v)
		case bool:
			child.(*array.BooleanBuilder).Append(v)
		case int64:
			child.(*array.Int64Builder).Append(v)
		case int32:
			child.(*array.Int32Builder).Append(v)
		default:
			t.Fatalf("no builder for %T", v)
		}
	}
	return b.NewRecordBatch()
}

func TestGetDriverInfo(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)

	// Two batches, to check that all are read.
	b1 := infoBatch(t, mem, []infoRow{
		{adbc.InfoVendorName, adbc.InfoValueStringType, "PostgreSQL"},
		{adbc.InfoVendorVersion, adbc.InfoValueStringType, "15.3"},
		{adbc.InfoVendorArrowVersion, adbc.InfoValueStringType, "v18"},
		{adbc.InfoVendorSql, adbc.InfoValueBooleanType, true},
		{adbc.InfoVendorSubstrait, adbc.InfoValueBooleanType, false},
		{adbc.InfoVendorSubstraitMinVersion, adbc.InfoValueStringType, nil},
		{adbc.InfoVendorSubstraitMaxVersion, adbc.InfoValueStringType, "0.50"},
	})
	b2 := infoBatch(t, mem, []infoRow{
		{adbc.InfoDriverName, adbc.InfoValueStringType, "ADBC PostgreSQL Driver"},
		{adbc.InfoDriverVersion, adbc.InfoValueStringType, "1.7.0"},
		{adbc.InfoDriverArrowVersion, adbc.InfoValueStringType, "v18.8.0"},
		{adbc.InfoDriverADBCVersion, adbc.InfoValueInt64Type, adbc.AdbcVersion1_1_0},
		{500, adbc.InfoValueStringType, "an XDBC item"},
		{501, adbc.InfoValueInt32BitmaskType, int32(3)},
	})
	rdr, err := array.NewRecordReader(adbc.GetInfoSchema, []arrow.RecordBatch{b1, b2})
	if err != nil {
		t.Fatal(err)
	}
	b1.Release()
	b2.Release()

	c, db := newFakes()
	db.conn.reader = rdr
	info, err := adbc.GetDriverInfo(tagged("di"), db.conn)
	if err != nil {
		t.Fatal(err)
	}
	expectLog(t, c, "GetInfo(di, [])")
	want := adbc.DriverInfo{
		DriverName:        "ADBC PostgreSQL Driver",
		DriverVersion:     "1.7.0",
		VendorName:        "PostgreSQL",
		VendorVersion:     "15.3",
		DriverADBCVersion: 1_001_000,
		LibraryInfo: map[string]string{
			adbc.DriverInfoKeyDriverArrowVersion:        "v18.8.0",
			adbc.DriverInfoKeyVendorArrowVersion:        "v18",
			adbc.DriverInfoKeyVendorSQLSupport:          "true",
			adbc.DriverInfoKeyVendorSubstraitSupport:    "false",
			adbc.DriverInfoKeyVendorSubstraitMaxVersion: "0.50",
		},
	}
	if info.DriverName != want.DriverName || info.DriverVersion != want.DriverVersion ||
		info.VendorName != want.VendorName || info.VendorVersion != want.VendorVersion ||
		info.DriverADBCVersion != want.DriverADBCVersion || len(info.LibraryInfo) != len(want.LibraryInfo) {
		t.Fatalf("GetDriverInfo = %+v\nwant %+v", info, want)
	}
	for k, v := range want.LibraryInfo {
		if info.LibraryInfo[k] != v {
			t.Errorf("LibraryInfo[%q] = %q, want %q", k, info.LibraryInfo[k], v)
		}
	}
	// The reader was released: the checked allocator sees no leak.
}

func TestGetDriverInfoEmpty(t *testing.T) {
	_, db := newFakes()
	info, err := adbc.GetDriverInfo(tagged(""), db.conn)
	if err != nil {
		t.Fatal(err)
	}
	if info.LibraryInfo == nil || len(info.LibraryInfo) != 0 || info.DriverName != "" {
		t.Errorf("GetDriverInfo of an empty stream = %+v", info)
	}
}

// errReader is a stream that fails at once.
type errReader struct{ err error }

func (errReader) Retain()                        {}
func (errReader) Release()                       {}
func (errReader) Schema() *arrow.Schema          { return adbc.GetInfoSchema }
func (errReader) Next() bool                     { return false }
func (errReader) RecordBatch() arrow.RecordBatch { return nil }
func (errReader) Record() arrow.RecordBatch      { return nil }
func (r errReader) Err() error                   { return r.err }

func TestGetDriverInfoErrors(t *testing.T) {
	boom := adbc.Error{Msg: "boom", Code: adbc.StatusIO}

	c, db := newFakes()
	c.fail["GetInfo"] = boom
	info, err := adbc.GetDriverInfo(tagged(""), db.conn)
	if err == nil || err.Error() != "error during GetInfo: "+boom.Error() || !errors.Is(err, adbc.ErrIO) {
		t.Errorf("failing GetInfo: %v", err)
	}
	if info.LibraryInfo != nil {
		t.Errorf("failing GetInfo gave %+v", info)
	}

	_, db = newFakes()
	db.conn.reader = errReader{boom}
	if _, err := adbc.GetDriverInfo(tagged(""), db.conn); err == nil ||
		err.Error() != "error reading info stream: "+boom.Error() || !errors.Is(err, adbc.ErrIO) {
		t.Errorf("failing stream: %v", err)
	}

	// A stream not of GetInfoSchema is an error, not a panic.
	_, db = newFakes()
	mem := memory.NewGoAllocator()
	bad := array.NewRecordBuilder(mem, testSchema)
	bad.Field(0).(*array.Int64Builder).Append(1)
	rec := bad.NewRecordBatch()
	bad.Release()
	db.conn.reader, _ = array.NewRecordReader(testSchema, []arrow.RecordBatch{rec})
	rec.Release()
	if _, err := adbc.GetDriverInfo(tagged(""), db.conn); err == nil || !strings.HasPrefix(err.Error(), "error reading info stream") {
		t.Errorf("stream of the wrong schema: %v", err)
	}
}
