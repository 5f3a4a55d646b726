package cdevice

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/identity"
)

// The identity short-circuit: a struct tree we exported that comes back to
// an import untouched (its release is ours and its root unchanged) hands
// back the Go value it describes instead of being walked.

// exportedSchema returns the schema behind s when s is the untouched root of
// one of our schema exports: a Go consumer of a Go producer then skips the
// parse. Immutable arrow-go schemas make handing back the source safe.
func exportedSchema(s *abi.Schema) *arrow.Schema {
	if !identity.Enabled() || !schemaReleaseCB.Is(s.Release) {
		return nil
	}
	e, ok := ffi.Lookup[*export](s.PrivateData)
	if !ok {
		return nil
	}
	sc, _ := e.source.(*arrow.Schema)
	if sc == nil || e.schemaRoot != *s || !childrenLive(s, 0) {
		return nil
	}
	return sc
}

// childrenLive reports whether no child of s was moved out or released.
func childrenLive(s *abi.Schema, depth int) bool {
	if depth > maxDepth {
		return false
	}
	for i := range int(s.NChildren) {
		c := s.Child(i)
		if c == nil || c.Release == 0 || !childrenLive(c, depth+1) {
			return false
		}
	}
	if s.Dictionary != 0 {
		d := (*abi.Schema)(abi.Pointer(s.Dictionary))
		return d.Release != 0 && childrenLive(d, depth+1)
	}
	return true
}

// exportedSource returns the arrow.Array or arrow.RecordBatch that a was
// exported from, when a is the untouched root of one of our array exports
// and identity imports are on.
func exportedSource(a *abi.Array) any {
	if !identity.Enabled() || !arrayReleaseCB.Is(a.Release) {
		return nil
	}
	e, ok := ffi.Lookup[*export](a.PrivateData)
	if !ok {
		return nil
	}
	if e.source == nil || e.arrayRoot != *a || !arrayChildrenLive(a, 0) {
		return nil
	}
	return e.source
}

// arrayChildrenLive reports whether no child or dictionary of a was moved
// out or released.
func arrayChildrenLive(a *abi.Array, depth int) bool {
	if depth > maxDepth {
		return false
	}
	for i := range int(a.NChildren) {
		c := a.Child(i)
		if c == nil || c.Release == 0 || !arrayChildrenLive(c, depth+1) {
			return false
		}
	}
	if a.Dictionary != 0 {
		d := (*abi.Array)(abi.Pointer(a.Dictionary))
		return d.Release != 0 && arrayChildrenLive(d, depth+1)
	}
	return true
}
