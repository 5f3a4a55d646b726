// Package ipcverify reads an Arrow IPC file or stream that may be hostile
// within limits on its total work, not only per allocation: every
// message's flatbuffer metadata is verified before arrow-go decodes it
// (metadata.go), a file's footer must list each block once, in order,
// compressed buffers are walked frame by frame by their headers
// (frames.go), arrow-go allocates through an allocator that holds it to
// the memory and data limits (limitalloc.go, budget.go), and every batch
// is validated in full before it is handed on (verify.go).
package ipcverify
