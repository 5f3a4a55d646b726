package cdevice

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
)

// ExportSchema exports s as a struct-typed ArrowSchema into out.
func ExportSchema(s *arrow.Schema, out *abi.Schema) error { return unsupportedf("TODO") }

// ExportField exports f into out.
func ExportField(f arrow.Field, out *abi.Schema) error { return unsupportedf("TODO") }

// ExportArray exports arr into out, and its type into outSchema when that is not nil.
func ExportArray(arr arrow.Array, out *abi.Array, outSchema *abi.Schema) error {
	return unsupportedf("TODO")
}

// ExportRecordBatch exports rb as a struct array into out, and its schema into outSchema when not nil.
func ExportRecordBatch(rb arrow.RecordBatch, out *abi.Array, outSchema *abi.Schema) error {
	return unsupportedf("TODO")
}

// ExportDeviceArray exports arr as a CPU ArrowDeviceArray.
func ExportDeviceArray(arr arrow.Array, out *abi.DeviceArray, outSchema *abi.Schema) error {
	return unsupportedf("TODO")
}
