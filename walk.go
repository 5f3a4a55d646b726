package cdevice

// The one checked walk of a foreign ArrowArray tree, shared by the host
// import (import.go) and the device import (device_import.go): each node is
// checked by visit, in an order that follows no pointer the checks before
// it have not vouched for, and reached only through child and dictionary.

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
)

// node is one ArrowArray being imported, with checked header fields.
type node struct {
	a        *abi.Array
	dt       arrow.DataType // storage type
	id       arrow.Type     // dt.ID(), asked once
	end      int64          // offset + length
	cbuffers []uintptr
	depth    int
}

func (n *node) errorf(format string, args ...any) error {
	return invalidf("%s array: %s", n.dt, fmt.Sprintf(format, args...))
}

// visit checks a, an array of type dt at depth, as every import does before
// it reads anything of it: depth, header (lengths, counts, pointers), buffer
// and child counts against the type, the dictionary against the type, and
// a null count against the validity bitmap.
func visit(a *abi.Array, dt arrow.DataType, depth int) (node, error) {
	if depth > maxDepth {
		return node{}, invalidf("array nesting deeper than %d (or a cycle)", maxDepth)
	}
	n := node{a: a, dt: storageType(dt), depth: depth}
	n.id = n.dt.ID()
	if err := n.checkHeader(); err != nil {
		return n, err
	}
	// Counts first: nothing below may follow a pointer the type does not have.
	if err := n.checkCounts(); err != nil {
		return n, err
	}
	switch isDict := n.id == arrow.DICTIONARY; {
	case isDict && a.Dictionary == 0:
		return n, n.errorf("dictionary-encoded array without a dictionary")
	case !isDict && a.Dictionary != 0:
		return n, n.errorf("has a dictionary but its type is not dictionary-encoded")
	case len(n.cbuffers) > 0 && n.cbuffers[0] == 0 && a.NullCount > 0 && hasValidity(n.id):
		return n, n.errorf("null_count %d without a validity bitmap", a.NullCount)
	}
	return n, nil
}

func (n *node) checkHeader() error {
	a := n.a
	switch {
	case a.Length < 0:
		return n.errorf("negative length %d", a.Length)
	case a.Offset < 0:
		return n.errorf("negative offset %d", a.Offset)
	case a.NullCount < -1 || a.NullCount > a.Length:
		return n.errorf("null_count %d out of range for length %d", a.NullCount, a.Length)
	case a.Length > math.MaxInt64-a.Offset || a.Length+a.Offset > min(math.MaxInt, maxElements):
		return n.errorf("offset %d + length %d overflows (over %d elements)", a.Offset, a.Length, min(math.MaxInt, maxElements))
	case a.NBuffers < 0 || a.NBuffers > maxChildren:
		return n.errorf("n_buffers is %d", a.NBuffers)
	case a.NChildren < 0 || a.NChildren > maxChildren:
		return n.errorf("n_children is %d", a.NChildren)
	case a.NBuffers > 0 && a.Buffers == 0:
		return n.errorf("buffers is NULL with n_buffers %d", a.NBuffers)
	case a.NChildren > 0 && a.Children == 0:
		return n.errorf("children is NULL with n_children %d", a.NChildren)
	}
	n.end = a.Offset + a.Length
	if a.NBuffers > 0 {
		n.cbuffers = unsafe.Slice((*uintptr)(abi.Pointer(a.Buffers)), a.NBuffers)
	}
	return nil
}

// checkCounts checks n_buffers and n_children against the type.
func (n *node) checkCounts() error {
	want, legacy := cBuffersOf(n.dt)
	nb := int(n.a.NBuffers)
	switch {
	case want < 0 && nb < 2: // views: validity, views, [variadic...], sizes
		return n.errorf("has %d buffers, want at least 2", nb)
	case want >= 0 && nb != want && !(legacy && nb == want+1):
		return n.errorf("has %d buffers, want %d", nb, want)
	}
	if nc := numChildFields(n.dt); int(n.a.NChildren) != nc {
		return n.errorf("has %d children, want %d", n.a.NChildren, nc)
	}
	return nil
}

// hasValidity reports whether C arrays of a storage type carry a validity
// bitmap as buffer 0.
func hasValidity(id arrow.Type) bool {
	switch id {
	case arrow.NULL, arrow.RUN_END_ENCODED, arrow.SPARSE_UNION, arrow.DENSE_UNION:
		return false
	}
	return true
}

// child returns C child i of n and its type, checked to be present and
// live.
func (n *node) child(i int) (*abi.Array, arrow.DataType, error) {
	return n.sub(n.a.Child(i), childField(n.dt, i).Type, "child", i)
}

// dictionary returns the dictionary of a dictionary-encoded n and its value
// type, checked to be live.
func (n *node) dictionary() (*abi.Array, arrow.DataType, error) {
	return n.sub((*abi.Array)(abi.Pointer(n.a.Dictionary)), n.dt.(*arrow.DictionaryType).ValueType, "dictionary", -1)
}

// sub checks c, n's child (what i) or dictionary (what, i < 0); the name is
// formatted only for an error.
func (n *node) sub(c *abi.Array, dt arrow.DataType, what string, i int) (*abi.Array, arrow.DataType, error) {
	if c != nil && c.Release != 0 {
		return c, dt, nil
	}
	if i >= 0 {
		what = fmt.Sprintf("%s %d", what, i)
	}
	switch {
	case c == nil:
		return nil, nil, n.errorf("%s ArrowArray pointer is NULL", what)
	case c.Release == 0:
		return nil, nil, n.errorf("%s ArrowArray is released", what)
	}
	return c, dt, nil
}
