//go:build arm

package abi

import "sync/atomic"

// On 32-bit ARM the C ABI aligns int64 to 8 bytes; Go aligns it to 4. The
// explicit padding and an 8-byte alignment marker (sync/atomic's 64-bit types
// are the one way to ask the Go compiler for it) restore C's layout.
type (
	padInt64 [4]byte
	align8   [0]atomic.Int64
)
