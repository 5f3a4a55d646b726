package cdevice

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
)

// ImportSchema imports a struct-typed ArrowSchema as an arrow.Schema and releases it.
func ImportSchema(s *abi.Schema) (*arrow.Schema, error) { return nil, unsupportedf("TODO") }

// ImportField imports an ArrowSchema as an arrow.Field and releases it.
func ImportField(s *abi.Schema) (arrow.Field, error) { return arrow.Field{}, unsupportedf("TODO") }

// ImportArray imports arr, typed by schema (released too).
func ImportArray(arr *abi.Array, schema *abi.Schema) (arrow.Array, error) {
	return nil, unsupportedf("TODO")
}

// ImportArrayWithType imports arr with the given type.
func ImportArrayWithType(arr *abi.Array, dt arrow.DataType) (arrow.Array, error) {
	return nil, unsupportedf("TODO")
}

// ImportRecordBatch imports a struct array and its schema as a record batch.
func ImportRecordBatch(arr *abi.Array, schema *abi.Schema) (arrow.RecordBatch, error) {
	return nil, unsupportedf("TODO")
}

// ImportDeviceArray imports a CPU ArrowDeviceArray.
func ImportDeviceArray(arr *abi.DeviceArray, schema *abi.Schema) (arrow.Array, error) {
	return nil, unsupportedf("TODO")
}
