package drivermgr

import (
	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/adbc/adbcerr"
)

// checkBound validates, in full, a batch of parameters or rows bound to a
// statement: a C driver takes it on trust, and what is not valid Arrow (a
// string that is not UTF-8, which a Go string may be) can crash it
// (DuckDB aborts the process).
func checkBound(b arrow.RecordBatch) error {
	if err := cdevice.ValidateRecordBatch(b, cdevice.WithFullValidation()); err != nil {
		return adbcerr.New(adbc.StatusInvalidArgument, "the bound data is not valid Arrow: "+err.Error())
	}
	return nil
}

// A checkedReader is a bound stream whose every batch is checkBound's
// before the driver reads it; the first that fails ends the stream with
// its error (which the driver's call reports).
type checkedReader struct {
	array.RecordReader
	err error
}

func (r *checkedReader) Next() bool {
	if r.err != nil || !r.RecordReader.Next() {
		return false
	}
	r.err = checkBound(r.RecordReader.RecordBatch())
	return r.err == nil
}

func (r *checkedReader) Err() error {
	if r.err != nil {
		return r.err
	}
	return r.RecordReader.Err()
}
