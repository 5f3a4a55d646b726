package ipcverify

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Compressed buffers are checked before arrow-go decodes them: its ZSTD
// decoder reserves the window a frame's header declares (512 MiB from 8
// bytes of input) outside any allocator of ours, and both codecs would
// decode whatever the frames hold. Every frame of a buffer is walked,
// block by block, by the sizes in its headers (the data is skipped, not
// decoded): the window or block size must fit the budget's decoder cap,
// a declared content size the buffer's, and the frames must end inside
// the buffer.

const (
	codecLZ4  = 0 // Arrow's CompressionType.LZ4_FRAME
	codecZSTD = 1 // CompressionType.ZSTD

	zstdMagic = 0xFD2FB528
	lz4Magic  = 0x184D2204
	// Skippable frames, in both formats: 0x184D2A50 to 0x184D2A5F.
	skippableMask, skippableMagic = 0xFFFFFFF0, 0x184D2A50
	// zstdBlockMax is ZSTD's largest block, decompressed.
	zstdBlockMax = 128 << 10
)

// frameReader reads a compressed buffer's frames.
type frameReader struct {
	r *bufio.Reader
}

func (f frameReader) u8() (byte, error) { return f.r.ReadByte() }

func (f frameReader) le(n int) (uint64, error) {
	var b [8]byte
	if _, err := io.ReadFull(f.r, b[:n]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

func (f frameReader) skip(n int64) error {
	for n > 0 {
		k := int(min(n, 1<<30))
		if d, err := f.r.Discard(k); err != nil {
			return err
		} else {
			n -= int64(d)
		}
	}
	return nil
}

// checkFrames checks the frames of a compressed buffer (r, after its
// 8-byte uncompressed length declared) of codec.
func checkFrames(r io.Reader, codec int, declared int64, b *budget) error {
	f := frameReader{bufio.NewReaderSize(r, 64<<10)}
	for first := true; ; first = false {
		magic, err := f.le(4)
		if err == io.EOF && !first {
			return nil
		}
		if err != nil {
			return truncatedFrame(err)
		}
		switch {
		case magic&skippableMask == skippableMagic:
			n, err := f.le(4)
			if err == nil {
				err = f.skip(int64(n))
			}
			if err != nil {
				return truncatedFrame(err)
			}
			continue
		case codec == codecZSTD && magic == zstdMagic:
			err = checkZSTDFrame(f, declared, b)
		case codec == codecLZ4 && magic == lz4Magic:
			err = checkLZ4Frame(f, declared, b)
		default:
			return corrupt("a compressed buffer holds no %s frame (it starts %#08x)", codecName(codec), magic)
		}
		if err != nil {
			return err
		}
	}
}

func codecName(codec int) string {
	if codec == codecZSTD {
		return "ZSTD"
	}
	return "LZ4"
}

func truncatedFrame(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return corrupt("a compressed frame runs past the end of its buffer")
	}
	return err
}

// tooLarge is the error for a decoder that would keep size bytes.
func tooLarge(what string, size int64, b *budget) error {
	return fmt.Errorf("%w: a compressed buffer's %s of %d bytes is more than the decoder may keep, %d (a quarter of --max-memory)",
		ErrMemoryLimit, what, size, b.decoderCap())
}

// checkZSTDFrame checks one ZSTD frame after its magic number (RFC 8878,
// section 3.1.1).
func checkZSTDFrame(f frameReader, declared int64, b *budget) error {
	fhd, err := f.u8()
	if err != nil {
		return truncatedFrame(err)
	}
	if fhd&0x08 != 0 {
		return corrupt("a ZSTD frame header sets its reserved bit")
	}
	single := fhd&0x20 != 0
	var window int64
	if !single {
		wd, err := f.u8()
		if err != nil {
			return truncatedFrame(err)
		}
		base := int64(1) << (10 + wd>>3)
		window = base + base/8*int64(wd&7)
	}
	if err := f.skip([]int64{0, 1, 2, 4}[fhd&3]); err != nil { // the dictionary id
		return truncatedFrame(err)
	}
	fcsBytes := []int{0, 2, 4, 8}[fhd>>6]
	if fcsBytes == 0 && single {
		fcsBytes = 1
	}
	if fcsBytes > 0 {
		v, err := f.le(fcsBytes)
		if err != nil {
			return truncatedFrame(err)
		}
		content := int64(v)
		if fcsBytes == 2 {
			content += 256
		}
		if v > 1<<62 || content > declared {
			return corrupt("a ZSTD frame's content is %d bytes, more than its buffer's %d", v, declared)
		}
		if single {
			window = content
		}
	}
	if window > b.decoderCap() {
		return tooLarge("ZSTD window", window, b)
	}
	for {
		hdr, err := f.le(3)
		if err != nil {
			return truncatedFrame(err)
		}
		size := int64(hdr >> 3)
		switch typ := (hdr >> 1) & 3; typ {
		case 1: // RLE: one byte, repeated
			err = f.skip(1)
		case 3:
			return corrupt("a ZSTD block of the reserved type")
		default: // raw, compressed
			if size > min(max(window, 1), zstdBlockMax) {
				return corrupt("a ZSTD block of %d bytes in a frame whose window is %d", size, window)
			}
			err = f.skip(size)
		}
		if err != nil {
			return truncatedFrame(err)
		}
		if hdr&1 != 0 { // the last block
			break
		}
	}
	if fhd&0x04 != 0 { // the content checksum
		return truncatedFrame(f.skip(4))
	}
	return nil
}

// checkLZ4Frame checks one LZ4 frame after its magic number (the LZ4
// frame format, version 1.6.x).
func checkLZ4Frame(f frameReader, declared int64, b *budget) error {
	flg, err := f.u8()
	if err != nil {
		return truncatedFrame(err)
	}
	bd, err := f.u8()
	if err != nil {
		return truncatedFrame(err)
	}
	if flg>>6 != 1 || bd&0x8F != 0 || bd>>4 < 4 {
		return corrupt("an LZ4 frame descriptor (FLG %#02x, BD %#02x) of no known version or block size", flg, bd)
	}
	blockMax := int64(64<<10) << (2 * (bd>>4 - 4))
	if flg&0x08 != 0 {
		content, err := f.le(8)
		if err != nil {
			return truncatedFrame(err)
		}
		if content > uint64(declared) {
			return corrupt("an LZ4 frame's content is %d bytes, more than its buffer's %d", content, declared)
		}
	}
	if err := f.skip(int64(4*(flg&1)) + 1); err != nil { // the dictionary id, the header checksum
		return truncatedFrame(err)
	}
	if blockMax > b.decoderCap() {
		return tooLarge("LZ4 block size", blockMax, b)
	}
	for {
		v, err := f.le(4)
		if err != nil {
			return truncatedFrame(err)
		}
		if v == 0 { // the end mark
			break
		}
		size := int64(v & 0x7FFFFFFF)
		if size > blockMax {
			return corrupt("an LZ4 block of %d bytes in a frame of %d-byte blocks", size, blockMax)
		}
		if flg&0x10 != 0 { // each block's checksum
			size += 4
		}
		if err := f.skip(size); err != nil {
			return truncatedFrame(err)
		}
	}
	if flg&0x04 != 0 { // the content checksum
		return truncatedFrame(f.skip(4))
	}
	return nil
}
