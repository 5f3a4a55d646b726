package cdatatest

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/ffi"
	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

// peer is the Go half of testdata/c/cdata_compat.c.
type peer struct {
	lib   *ffi.Library
	mu    sync.Mutex
	funcs map[string]uintptr
}

var (
	peerOnce sync.Once
	thePeer  *peer
)

func loadPeer(t testing.TB) *peer {
	t.Helper()
	lib := ctest.Library(t, "cdata_compat") // skips or fails t without gcc
	peerOnce.Do(func() { thePeer = &peer{lib: lib, funcs: map[string]uintptr{}} })
	return thePeer
}

// fn returns the address of the C function name.
func (p *peer) fn(t testing.TB, name string) uintptr {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	fn, ok := p.funcs[name]
	if !ok {
		var err error
		if fn, err = p.lib.Symbol(name); err != nil {
			t.Fatalf("cdata_compat: %v", err)
		}
		p.funcs[name] = fn
	}
	return fn
}

// call calls the C function name with integer or pointer arguments.
func (p *peer) call(t testing.TB, name string, args ...uintptr) uintptr {
	t.Helper()
	return ffi.Call(p.fn(t, name), args...)
}

// cstring calls f with s as a C string, freed when f returns.
func cstring(t testing.TB, s string, f func(uintptr)) {
	t.Helper()
	c, err := ffi.CString(s)
	if err != nil {
		t.Fatal(err)
	}
	defer ffi.Free(c)
	f(uintptr(c))
}

func addr[T abi.Struct](s *T) uintptr { return uintptr(unsafe.Pointer(s)) }

// A token is one C-produced tree's account: its live allocations and the
// release callbacks that ran.
type token struct {
	p    *peer
	addr uintptr
}

func (p *peer) token(t testing.TB) *token {
	t.Helper()
	tk := &token{p: p, addr: p.call(t, "cc_token_new")}
	t.Cleanup(func() {
		// Free the token only when nothing of its tree is left: a release
		// that runs later (a finalizer) would use it.
		if tk.live(t) == 0 {
			p.call(t, "cc_free", tk.addr)
		}
	})
	return tk
}

func (tk *token) live(t testing.TB) int { return int(tk.p.call(t, "cc_token_live", tk.addr)) }

func (tk *token) releases(t testing.TB) int {
	return int(tk.p.call(t, "cc_token_releases", tk.addr))
}

// freeRoot frees a root struct that cc_schema_new or cc_array_new made,
// after its release (or a move) emptied it.
func (tk *token) freeRoot(t testing.TB, root uintptr) {
	tk.p.call(t, "cc_token_free_struct", tk.addr, root)
}

// node describes a C schema node for the peer to build.
type node struct {
	format, name string
	flags        int64
	metadata     int // 0: none; 1: key1="", key2="bar"; 2: key="abcde"
	children     []node
	dictionary   *node
}

// schema has the peer build n and returns the root, freed (after a release
// if it still needs one) when the test ends.
func (tk *token) schema(t testing.TB, n node) *abi.Schema {
	t.Helper()
	root := tk.build(t, n)
	t.Cleanup(func() {
		tk.p.call(t, "cc_release_schema", root)
		tk.freeRoot(t, root)
	})
	return abi.At[abi.Schema](root)
}

func (tk *token) build(t testing.TB, n node) uintptr {
	var s uintptr
	cstring(t, n.format, func(f uintptr) {
		cstring(t, n.name, func(nm uintptr) {
			s = tk.p.call(t, "cc_schema_new", tk.addr, f, nm, uintptr(n.flags))
		})
	})
	if n.metadata != 0 {
		tk.p.call(t, "cc_schema_set_metadata", s, uintptr(n.metadata))
	}
	for _, c := range n.children {
		if rc := tk.p.call(t, "cc_schema_add_child", s, tk.build(t, c)); int32(rc) != 0 {
			t.Fatalf("cc_schema_add_child: %d", int32(rc))
		}
	}
	if n.dictionary != nil {
		tk.p.call(t, "cc_schema_set_dictionary", s, tk.build(t, *n.dictionary))
	}
	return s
}

// array has the peer build a C array holding a copy of a's data (buffers,
// children, dictionary; the C Data Interface's buffer list, without the
// validity slot for types that have none), and returns the root, freed
// (after a release if it still needs one) when the test ends.
func (tk *token) array(t testing.TB, a arrow.ArrayData) *abi.Array {
	t.Helper()
	root := tk.buildArray(t, a)
	tk.cleanupArray(t, root)
	return abi.At[abi.Array](root)
}

func (tk *token) cleanupArray(t testing.TB, root uintptr) {
	t.Cleanup(func() {
		tk.p.call(t, "cc_release_array", root)
		tk.freeRoot(t, root)
	})
}

// newArray has the peer make an array node with n null buffers and the
// given header, freed as array's are.
func (tk *token) newArray(t testing.TB, length, nulls, offset int, nBuffers int) *abi.Array {
	t.Helper()
	root := tk.p.call(t, "cc_array_new", tk.addr, uintptr(length), uintptr(nulls), uintptr(offset), uintptr(nBuffers))
	tk.cleanupArray(t, root)
	return abi.At[abi.Array](root)
}

// buffer allocates buffer i of a (C memory) holding b.
func (tk *token) buffer(t testing.TB, a uintptr, i int, b []byte) {
	if len(b) == 0 {
		return
	}
	p := tk.p.call(t, "cc_array_buffer", a, uintptr(i), uintptr(len(b)))
	copy(unsafe.Slice((*byte)(abi.Pointer(p)), len(b)), b)
}

func hasValidity(id arrow.Type) bool {
	switch id {
	case arrow.NULL, arrow.SPARSE_UNION, arrow.DENSE_UNION, arrow.RUN_END_ENCODED:
		return false
	}
	return true
}

func (tk *token) buildArray(t testing.TB, d arrow.ArrayData) uintptr {
	bufs := d.Buffers()
	if !hasValidity(d.DataType().ID()) && len(bufs) > 0 {
		bufs = bufs[1:]
	}
	a := tk.p.call(t, "cc_array_new", tk.addr, uintptr(d.Len()), uintptr(d.NullN()), uintptr(d.Offset()), uintptr(len(bufs)))
	for i, b := range bufs {
		if b != nil {
			tk.buffer(t, a, i, b.Bytes())
		}
	}
	for _, c := range d.Children() {
		tk.p.call(t, "cc_array_add_child", a, tk.buildArray(t, c))
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		dict := d.Dictionary()
		tk.p.call(t, "cc_array_set_dictionary", a, tk.buildArray(t, dict))
	}
	return a
}
