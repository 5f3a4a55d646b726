// Package stream exports and imports Arrow streams across the C ABI: the
// ArrowArrayStream of record batches and the ArrowDeviceArrayStream of
// device record batches, both directions.
//
// An exported stream is safe against concurrent misuse (its callbacks are
// serialized); an imported Reader or DeviceReader is not safe for concurrent
// use, as C streams are not. Errors from a Go source reach a C consumer as
// an errno-style code with a message from get_last_error; errors from a C
// producer reach Go as a *cdevice.ProducerError carrying both.
//
// Ownership follows one rule, as in package async: a batch that an
// iterator (Reader.All, DeviceReader.All, DeviceReader.HostRecords) yields
// is valid in the loop body and released after it unless the body retains
// it; a batch that a method returns (DeviceReader.Next) is the caller's to
// release; Reader.RecordBatch is valid until the next call of Next, as
// array.RecordReader has it.
package stream
