package ipcverify

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Frames as the real encoders write them pass; each lie a header can tell
// is refused before a decoder would act on it, naming what is wrong.
func TestCheckFrames(t *testing.T) {
	data := bytes.Repeat([]byte("arrow "), 50000) // 300 KB: several blocks
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	zframe := enc.EncodeAll(data, nil)
	var lbuf bytes.Buffer
	lw := lz4.NewWriter(&lbuf)
	if err := lw.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
		t.Fatal(err)
	}
	lw.Write(data)
	lw.Close()
	lframe := lbuf.Bytes()
	skippable := []byte{0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'}
	patched := func(b []byte, at int, v byte) []byte {
		b = bytes.Clone(b)
		b[at] = v
		return b
	}
	big := &budget{Limits: Limits{Memory: 64 << 20}}
	declared := int64(len(data))
	for _, c := range []struct {
		name     string
		codec    int
		frame    []byte
		declared int64
		want     string // "" passes
	}{
		{"zstd as written", codecZSTD, zframe, declared, ""},
		{"two zstd frames and a skippable one", codecZSTD, append(append(bytes.Clone(zframe), skippable...), zframe...), 2 * declared, ""},
		{"zstd truncated", codecZSTD, zframe[:len(zframe)-5], declared, "runs past the end"},
		{"zstd content larger than declared", codecZSTD, zframe, declared - 1, "more than its buffer's"},
		{"zstd reserved bit", codecZSTD, patched(zframe, 4, zframe[4]|0x08), declared, "reserved bit"},
		// magic; no content size, window 2^29; the last block, raw, 1 byte
		{"zstd 512 MiB window", codecZSTD, []byte{0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x98, 0x09, 0, 0, 0}, declared, "window of 536870912 bytes"},
		{"not zstd", codecZSTD, lframe, declared, "holds no ZSTD frame"},
		{"lz4 as written", codecLZ4, lframe, declared, ""},
		{"lz4 truncated", codecLZ4, lframe[:len(lframe)-3], declared, "runs past the end"},
		{"lz4 of no known version", codecLZ4, patched(lframe, 4, 0x00), declared, "no known version"},
		{"lz4 4 MB blocks under a small --max-memory", codecLZ4, patched(lframe, 5, 0x70), declared, "LZ4 block size of 4194304"},
		{"lz4 block larger than its frame's", codecLZ4, lz4BlockTooLarge(lframe), declared, "an LZ4 block of"},
		{"empty", codecZSTD, nil, declared, "runs past the end"},
	} {
		b := big
		if strings.Contains(c.name, "small --max-memory") {
			b = &budget{Limits: Limits{Memory: 8 << 20}}
		}
		err := checkFrames(bytes.NewReader(c.frame), c.codec, c.declared, b)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// lz4BlockTooLarge is frame (64 KB blocks) with its first block's size
// raised past the frame's block size.
func lz4BlockTooLarge(frame []byte) []byte {
	b := bytes.Clone(frame)
	hdr := 7 // magic, FLG, BD, header checksum
	if b[4]&0x08 != 0 {
		hdr += 8 // the content size
	}
	binary.LittleEndian.PutUint32(b[hdr:], 1<<20)
	return b
}
