package cdata

import "github.com/purearrow/cdevice/abi"

// The C structs, as arrow-go names them. Unlike arrow-go's (cgo types,
// opaque outside their package), their fields are exported: see package abi.
type (
	// CArrowSchema is the C Data Interface's struct ArrowSchema.
	CArrowSchema = abi.Schema
	// CArrowArray is the C Data Interface's struct ArrowArray.
	CArrowArray = abi.Array
	// CArrowArrayStream is the C Stream Interface's struct ArrowArrayStream.
	CArrowArrayStream = abi.ArrayStream
	// CArrowDeviceArray is the C Device Interface's struct ArrowDeviceArray.
	CArrowDeviceArray = abi.DeviceArray
	// CArrowAsyncDeviceStreamHandler is the Async Device Stream Interface's
	// struct ArrowAsyncDeviceStreamHandler.
	CArrowAsyncDeviceStreamHandler = abi.AsyncDeviceStreamHandler
	// CArrowAsyncProducer is the Async Device Stream Interface's struct
	// ArrowAsyncProducer.
	CArrowAsyncProducer = abi.AsyncProducer
	// CArrowAsyncTask is the Async Device Stream Interface's struct
	// ArrowAsyncTask.
	CArrowAsyncTask = abi.AsyncTask
)

// SchemaFromPtr returns the ArrowSchema at address ptr (abi.At).
func SchemaFromPtr(ptr uintptr) *CArrowSchema { return abi.At[CArrowSchema](ptr) }

// ArrayFromPtr returns the ArrowArray at address ptr (abi.At).
func ArrayFromPtr(ptr uintptr) *CArrowArray { return abi.At[CArrowArray](ptr) }
