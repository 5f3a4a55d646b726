// Package async implements the Arrow Async Device Stream Interface
// (ArrowAsyncDeviceStreamHandler, ArrowAsyncTask, ArrowAsyncProducer) in both
// directions: a Handler that a C or Go producer drives, delivering device
// record batches with back-pressure, and Produce, which drives a C or Go
// handler from a Go source.
//
// Producers may call a Handler's callbacks from their own threads; request
// and cancel never call handler callbacks synchronously; nothing waits by
// spinning.
package async
