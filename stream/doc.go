// Package stream exports and imports Arrow streams across the C ABI: the
// ArrowArrayStream of record batches and the ArrowDeviceArrayStream of
// device record batches, both directions.
//
// An exported stream is safe against concurrent misuse (its callbacks are
// serialized); an imported Reader or DeviceReader is not safe for concurrent
// use, as C streams are not. Errors from a Go source reach a C consumer as
// an errno-style code with a message from get_last_error; errors from a C
// producer reach Go as a *ProducerError carrying both.
package stream
