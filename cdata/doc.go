// Package cdata is a drop-in for arrow-go's cgo package
// github.com/apache/arrow-go/v18/arrow/cdata, built without cgo: the same
// exported names, signatures and behaviour on valid input, so that changing
// the import path is the whole migration for code that does not itself use
// cgo. Each function is a thin layer over the rest of cdevice:
//
//	arrow-go arrow/cdata                  cdevice
//	CArrowSchema, CArrowArray, …          abi.Schema, abi.Array, … (aliases)
//	SchemaFromPtr, ArrayFromPtr           abi.At
//	ImportCArrowField, ImportCArrowSchema cdevice.ImportField, cdevice.ImportSchema
//	ImportCArrayWithType, ImportCArray    cdevice.ImportArrayWithType (after ImportField)
//	ImportCRecordBatch(WithSchema)        cdevice.ImportRecordBatch(WithSchema)
//	ImportCRecordReader, ImportCArrayStream stream.ImportReader
//	ExportArrowSchema                     cdevice.ExportSchema
//	ExportArrowArray, ExportArrowRecordBatch cdevice.ExportArray, cdevice.ExportRecordBatch
//	ExportRecordReader                    stream.ExportReader
//	ReleaseCArrowSchema, …Array, …ArrayStream cdevice.ReleaseSchema, ReleaseArray, ReleaseArrayStream
//	CreateAsyncDeviceStreamHandler        async.NewHandler with async.WithHandlerStruct
//	ExportAsyncRecordBatchStream          async.Produce of cdevice.CPURecordBatch (no copy)
//
// Where arrow-go panics or would crash, this package does not:
//
//   - Bad input from C returns an error (every count, offset and pointer is
//     checked before it is followed); a nil struct pointer is an error.
//   - The export functions, which return no error, leave the output struct
//     released (release = NULL, as a consumer checks) when the input cannot be
//     exported; use the cdevice functions to get the error.
//   - ImportCArrayStream returns a reader whose Read and Err report the error
//     instead of panicking when the stream's schema cannot be imported.
//   - Structs from the import functions may live on the Go heap
//     (new(cdata.CArrowArray)) or in C memory; every import moves the root
//     struct, so it may be reused at once, and a failed import releases what
//     it was given (arrow-go leaves the array for the caller to release;
//     releasing a released struct does nothing, so code written for arrow-go
//     is correct with both).
//
// Errors wrap arrow-go's sentinels where arrow-go's do (arrow.ErrInvalid,
// arrow.ErrNotImplemented, a stream's syscall.Errno) and cdevice's as well
// (cdevice.ErrInvalid, cdevice.ErrProducer, …), so errors.Is works with
// either. docs/migrating-cdata.md lists every difference.
package cdata
