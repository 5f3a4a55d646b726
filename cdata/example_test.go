package cdata_test

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/cdata"
)

func sampleBatch() arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{1, 2, 3}, nil)
	return b.NewRecordBatch()
}

// Code written for arrow-go's cdata runs unchanged: export a record batch
// to the C structs, import it back.
func Example() {
	rb := sampleBatch()
	defer rb.Release()

	var carr cdata.CArrowArray
	var cschema cdata.CArrowSchema
	cdata.ExportArrowRecordBatch(rb, &carr, &cschema)

	got, err := cdata.ImportCRecordBatch(&carr, &cschema)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer got.Release()
	fmt.Println(got.Schema().Field(0).Name, got.Column(0))
	// Output: x [1 2 3]
}

// A stream read with arrow-go's arrio.Reader loop.
func ExampleImportCRecordReader() {
	rb := sampleBatch()
	defer rb.Release()
	rdr, _ := array.NewRecordReader(rb.Schema(), []arrow.RecordBatch{rb, rb})
	defer rdr.Release()

	var cstream cdata.CArrowArrayStream
	cdata.ExportRecordReader(rdr, &cstream)

	r, err := cdata.ImportCRecordReader(&cstream, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.(array.RecordReader).Release()
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(rec.NumRows(), "rows") // valid until the next Read
	}
	// Output:
	// 3 rows
	// 3 rows
}

// The async pair: a handler in C memory, driven by a Go producer.
func ExampleCreateAsyncDeviceStreamHandler() {
	handler := cdevice.New[cdata.CArrowAsyncDeviceStreamHandler]()
	defer cdevice.Free(handler) // the producer releases it before this runs
	streams := cdata.CreateAsyncDeviceStreamHandler(context.Background(), 4, handler)

	msgs := make(chan cdata.RecordMessage, 2)
	rb := sampleBatch()
	msgs <- cdata.RecordMessage{Record: rb} // the producer takes the record
	close(msgs)
	done := make(chan error, 1)
	go func() { done <- cdata.ExportAsyncRecordBatchStream(rb.Schema(), msgs, handler) }()

	s := <-streams
	if s.Err != nil {
		fmt.Println(s.Err)
		return
	}
	for msg := range s.Stream {
		if msg.Err != nil {
			fmt.Println(msg.Err)
			return
		}
		fmt.Println(msg.Record.Column(0))
		msg.Record.Release()
	}
	fmt.Println(<-done)
	// Output:
	// [1 2 3]
	// <nil>
}
