package ipcverify

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
)

// Limits bound what reading one input may cost in all. A zero Memory or
// Data is the default for the input's size (DefaultMemory, DefaultData);
// a zero Batches is DefaultBatches.
type Limits struct {
	Memory  int64 // the most held at once
	Data    int64 // the most batch data produced (decompressed), and read by validation, in all
	Batches int64 // the most record and dictionary batches
}

// A Result is what Read found.
type Result struct {
	Format string // "file" (it starts with the magic "ARROW1") or "stream"
	Schema *arrow.Schema
}

// Read verifies the Arrow IPC file or stream of size bytes in r, within
// lim, and calls each for every batch, validated in full (a dictionary
// the first time a batch refers to it), in order; each's error ends the
// read. Errors name the batch and wrap a sentinel of this package
// (ErrCorrupt, ErrMemoryLimit, ErrDataLimit, ErrBatchLimit) or
// cdevice.ErrInvalid; a stream that was never one says so.
func Read(r io.ReaderAt, size int64, lim Limits, each func(arrow.RecordBatch) error) (*Result, error) {
	// Nothing past size (a file in /proc says 0 and reads on).
	f := io.NewSectionReader(r, 0, size)
	magic := make([]byte, 6)
	n, _ := io.ReadFull(f, magic)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	b := budget{Limits: lim}
	if b.Memory == 0 {
		b.Memory = DefaultMemory(size)
	}
	if b.Data == 0 {
		b.Data = DefaultData(size)
	}
	if b.Batches == 0 {
		b.Batches = DefaultBatches
	}
	mem := newLimitedAllocator(memory.NewGoAllocator(), b.Memory, b.Data)
	opts := []ipc.Option{ipc.WithAllocator(mem), ipc.WithMetadataSizeLimit(maxMetadataSize), ipc.WithBodySizeLimit(size)}
	v := &reading{b: &b, each: each, seen: map[arrow.ArrayData]bool{}}
	if bytes.Equal(magic[:n], []byte("ARROW1")) {
		return v.file(f, size, mem, opts)
	}
	return v.stream(f, size, mem, opts, magic[:n])
}

// A reading is one Read's state.
type reading struct {
	b       *budget
	each    func(arrow.RecordBatch) error
	seen    map[arrow.ArrayData]bool // dictionaries validated in full
	batches int
}

// batch checks a batch that arrow-go read, in full, then hands it on.
// Buffers may overlap in a body: what validation reads, at every
// reference, is charged to the data limit (on a count of its own) before
// it reads it. A dictionary that batches refer to again is read once.
func (v *reading) batch(rec arrow.RecordBatch) error {
	if err := v.b.spendWork(batchWork(rec, v.seen), "validating and exporting this batch's buffers"); err != nil {
		return err
	}
	if err := validateBatch(rec, v.seen); err != nil {
		return err
	}
	v.batches++
	return v.each(rec)
}

func (v *reading) file(f *io.SectionReader, size int64, mem *limitedAllocator, opts []ipc.Option) (*Result, error) {
	var r *ipc.FileReader
	err := checkFile(f, size, v.b)
	if err == nil {
		err = guard(mem, func() (err error) {
			r, err = ipc.NewFileReader(f, opts...)
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotFile, err)
	}
	defer r.Close()
	for i := range r.NumRecords() {
		var rec arrow.RecordBatch
		err := guard(mem, func() (err error) {
			rec, err = r.RecordBatchAt(i)
			return err
		})
		if err == nil {
			err = v.batch(rec)
			rec.Release()
		}
		if err != nil {
			return nil, &BatchError{Index: i, Err: err}
		}
	}
	return &Result{Format: "file", Schema: r.Schema()}, nil
}

func (v *reading) stream(f *io.SectionReader, size int64, mem *limitedAllocator, opts []ipc.Option, magic []byte) (*Result, error) {
	var r *ipc.Reader
	err := checkStream(f, size, v.b)
	if err == nil {
		err = guard(mem, func() (err error) {
			r, err = ipc.NewReader(f, opts...)
			return err
		})
	}
	if err != nil {
		// A stream starts with the continuation marker (since Arrow 0.15)
		// and a schema: without either, it was never one.
		var m *messageError
		if !bytes.HasPrefix(magic, []byte{0xff, 0xff, 0xff, 0xff}) && (!errors.As(err, &m) || m.index == 0) {
			return nil, fmt.Errorf("%w (no \"ARROW1\" magic at the start, and reading it as a stream failed: %w)", ErrNotArrow, err)
		}
		return nil, err
	}
	defer r.Release()
	for {
		var more bool
		err := guard(mem, func() error {
			more = r.Next()
			return r.Err()
		})
		if err == nil && more {
			err = v.batch(r.RecordBatch())
		}
		if err != nil {
			return nil, &BatchError{Index: v.batches, Err: err}
		}
		if !more {
			return &Result{Format: "stream", Schema: r.Schema()}, nil
		}
	}
}

// A BatchError is the failure of a batch, by its index.
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("batch %d: %v", e.Index, e.Err) }

func (e *BatchError) Unwrap() error { return e.Err }

// batchWork is what validating and exporting rec reads: its buffers at
// every reference (buffers that overlap in a body count each time), but
// of a dictionary in seen only the indices.
func batchWork(rec arrow.RecordBatch, seen map[arrow.ArrayData]bool) int64 {
	var work int64
	for _, c := range rec.Columns() {
		if d := seenDictionary(c, seen); d != nil {
			work += bufferBytes(d.Indices().Data())
		} else {
			work += bufferBytes(c.Data())
		}
	}
	return work
}

// seenDictionary is c as a dictionary column whose dictionary is in seen,
// or nil.
func seenDictionary(c arrow.Array, seen map[arrow.ArrayData]bool) *array.Dictionary {
	if d, ok := c.(*array.Dictionary); ok && seen[d.Data().Dictionary()] {
		return d
	}
	return nil
}

// validateBatch validates rec in full, but for the dictionary columns
// whose dictionary an earlier batch's validation read (in seen): of those,
// the indices only, each within the dictionary. It adds rec's
// dictionaries to seen.
func validateBatch(rec arrow.RecordBatch, seen map[arrow.ArrayData]bool) error {
	var fields []arrow.Field
	var cols []arrow.Array
	for i, c := range rec.Columns() {
		d := seenDictionary(c, seen)
		if d == nil {
			fields, cols = append(fields, rec.Schema().Field(i)), append(cols, c)
			continue
		}
		if err := cdevice.ValidateFull(d.Indices()); err != nil {
			return fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
		}
		n := d.Dictionary().Len()
		for j := range d.Len() {
			if k := d.GetValueIndex(j); d.IsValid(j) && (k < 0 || k >= n) {
				return fmt.Errorf("%w: column %q: index %d at %d is outside the dictionary of %d", cdevice.ErrInvalid, rec.ColumnName(i), k, j, n)
			}
		}
	}
	check := rec
	if len(cols) < int(rec.NumCols()) {
		check = array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
		defer check.Release()
	}
	if err := cdevice.ValidateRecordBatch(check, cdevice.WithFullValidation()); err != nil {
		return err
	}
	for _, c := range rec.Columns() {
		if d, ok := c.(*array.Dictionary); ok {
			seen[d.Data().Dictionary()] = true
		}
	}
	return nil
}

// bufferBytes is the size of every buffer of d and of what it holds
// (children, dictionary), counted at each reference: what reading it in
// full reads.
func bufferBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += bufferBytes(c)
	}
	if dict, ok := d.Dictionary().(*array.Data); ok && dict != nil { // a nil *array.Data: none
		n += bufferBytes(dict)
	}
	return n
}

// guard runs f, a call into arrow-go's IPC readers, which panic on some
// corrupt data that checkFile and checkStream let through: the panic
// becomes an error wrapping cdevice.ErrInvalid. When mem refused an
// allocation, that is the error (arrow-go may have turned the refusal into
// an error of its own).
func guard(mem *limitedAllocator, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: arrow-go's IPC reader failed on it: %v", cdevice.ErrInvalid, p)
		}
		if err != nil && mem.Err() != nil {
			err = fmt.Errorf("%w (a corrupt length, or a file that needs more of the limit)", mem.Err())
		}
	}()
	return f()
}
