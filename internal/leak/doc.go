// Package leak counts the live objects of every kind that crosses the C
// boundary (exported and imported structs, streams, async producers and
// handlers, DLPack tensors, device arrays and allocations) and, while
// tracing is on, remembers where each was made, so that a failed leak
// check names the code that made what is still held.
package leak
