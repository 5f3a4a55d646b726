// Package identity holds the switch behind identity imports: when a struct
// that this module exported comes back to it untouched, package cdevice
// hands back the exported schema, array or record batch itself and package
// stream reads its own exported stream directly, instead of taking the path
// a C producer's structs take.
//
// Identity imports are always on for users of the module. Tests turn them
// off to drive the full import path with Go-made structs (testsupport.Main
// does for every test binary, testsupport.ForEachIdentity runs a test both
// ways), and the cdevice command's selftest and bench measure both paths.
package identity

import "sync/atomic"

var off atomic.Bool

// Enabled reports whether identity imports are on (the default).
func Enabled() bool { return !off.Load() }

// Set turns identity imports on or off and returns the previous setting, so
// that defer identity.Set(identity.Set(on)) restores it.
func Set(on bool) (old bool) { return !off.Swap(!on) }
