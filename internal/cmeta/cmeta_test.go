package cmeta

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/device"
)

func md(kv ...string) arrow.Metadata {
	var k, v []string
	for i := 0; i < len(kv); i += 2 {
		k, v = append(k, kv[i]), append(v, kv[i+1])
	}
	return arrow.NewMetadata(k, v)
}

func blobAddr(t *testing.T, b []byte) uintptr {
	var p runtime.Pinner
	p.Pin(&b[0])
	t.Cleanup(p.Unpin)
	return uintptr(unsafe.Pointer(&b[0]))
}

func blob(words ...any) []byte {
	var b []byte
	for _, w := range words {
		switch w := w.(type) {
		case int:
			b = binary.NativeEndian.AppendUint32(b, uint32(int32(w)))
		case string:
			b = append(b, w...)
		}
	}
	return b
}

func TestMetadataRoundTrip(t *testing.T) {
	long := strings.Repeat("λ", 5000)
	var manyK, manyV []string
	for i := range 1000 {
		manyK, manyV = append(manyK, fmt.Sprint("k", i)), append(manyV, fmt.Sprint(i))
	}
	cases := []arrow.Metadata{
		{},
		md("ARROW:extension:name", "arrow.uuid"),
		md("", ""),
		md("ключ", "値🎉", "empty", "", "", "empty key"),
		md("dup", "1", "dup", "2"),
		md("nul\x00inside", "v\x00", "long", long),
		arrow.NewMetadata(manyK, manyV),
	}
	for i, md := range cases {
		b := Encode(md)
		if md.Len() == 0 {
			if b != nil {
				t.Errorf("case %d: empty metadata encodes to %v, want nil", i, b)
			}
		}
		var p uintptr
		if b != nil {
			p = blobAddr(t, b)
		}
		got, err := Decode(p)
		runtime.KeepAlive(b)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !reflect.DeepEqual(got.Keys(), md.Keys()) || !reflect.DeepEqual(got.Values(), md.Values()) {
			t.Fatalf("case %d: got %v, want %v", i, got, md)
		}
		// Decoded strings are copies: scribbling over the blob must not change them.
		for j := range b {
			b[j] = 0xff
		}
		if md.Len() > 0 && got.Keys()[0] != md.Keys()[0] {
			t.Fatalf("case %d: decoded key aliases C memory", i)
		}
	}
}

func TestMetadataLayout(t *testing.T) {
	md := md("ab", "xyz")
	want := blob(1, 2, "ab", 3, "xyz")
	if got := Encode(md); !reflect.DeepEqual(got, want) {
		t.Fatalf("Encode = %v, want %v", got, want)
	}
	// An explicit zero count is valid and means no metadata.
	zero := blob(0)
	got, err := Decode(blobAddr(t, zero))
	runtime.KeepAlive(zero)
	if err != nil || got.Len() != 0 {
		t.Fatalf("zero pairs: %v, %v", got, err)
	}
	// Odd addresses: C metadata is a char*, so reads must not assume alignment.
	odd := append([]byte{0}, want...)
	got, err = Decode(blobAddr(t, odd) + 1)
	runtime.KeepAlive(odd)
	if err != nil || !got.Equal(md) {
		t.Fatalf("unaligned: %v, %v", got, err)
	}
}

// TestMetadataMalformed: every blob lies about a count or length, and each is
// caught before the decoder reads past the bytes that really exist.
func TestMetadataMalformed(t *testing.T) {
	blobs := []struct {
		name string
		b    []byte
	}{
		{"negative count", blob(-1)},
		{"min int32 count", blob(math.MinInt32)},
		{"count over 1<<20", blob(1<<20 + 1)},
		{"max int32 count", blob(math.MaxInt32)},
		{"negative key length", blob(1, -1)},
		{"negative value length", blob(1, 1, "k", -7)},
		{"max key length", blob(1, math.MaxInt32)},
		{"key length past 2 GiB total", blob(1, 1<<31-7)},
		{"value length past 2 GiB total", blob(1, 1, "k", 0x7ffffff8)},
		{"second key negative", blob(2, 1, "a", 1, "b", -100)},
		{"second key past cap", blob(2, 1, "a", 1, "b", 0x7ffffff5)},
		{"second value min int32", blob(2, 1, "a", 1, "b", 1, "c", math.MinInt32)},
	}
	for _, c := range blobs {
		md, err := Decode(blobAddr(t, c.b))
		runtime.KeepAlive(c.b)
		if !errors.Is(err, device.ErrInvalid) {
			t.Errorf("%s: Decode = %v, %v; want ErrInvalid", c.name, md, err)
		}
	}
}
