package ipcverify

import "io"

// A Message is one message of an IPC stream, verified: where its body
// starts and how long it is, and for a batch the buffers it asks of the
// body (offset and length pairs, within the body) and their codec (0
// LZ4_FRAME, 1 ZSTD, -1 none).
type Message struct {
	Body, BodyLen int64
	Buffers       []int64
	Codec         int
}

// StreamMessages verifies the metadata of every message of the IPC
// stream of size bytes in r and lists them, up to the end-of-stream
// marker or the end of the input. (It checks no body: Read does.)
func StreamMessages(r io.ReaderAt, size int64) ([]Message, error) {
	var vc *viewCounts
	var out []Message
	for i, pos := 0, int64(0); pos < size; i++ {
		body, next, bb, err := checkStreamMessage(r, size, pos, &vc)
		if err != nil {
			return out, &messageError{i, err}
		}
		if next < 0 {
			break
		}
		m := Message{Body: next, BodyLen: body, Codec: -1}
		if bb != nil {
			m.Buffers, m.Codec = bb.buffers, bb.codec
		}
		out = append(out, m)
		pos = next + body
	}
	return out, nil
}

// FooterBlocks is where an IPC file's footer (the flatbuffer before its
// trailing length and magic) lists its record batches' Blocks: the
// vector's offset in footer and its length (24 bytes a Block: offset,
// metadata length, body length).
func FooterBlocks(footer []byte) (start, n int64, err error) {
	f := newFBBuf(footer)
	pos, err := f.root(footerFB)
	if err != nil {
		return 0, 0, err
	}
	start, n = f.vectorAt(pos, 3)
	return start, n, nil
}
