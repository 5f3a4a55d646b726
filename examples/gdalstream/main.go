// Command gdalstream reads a vector file with GDAL, a C library loaded while
// the program runs, and prints it record batch by record batch. It shows how
// Go code built with CGO_ENABLED=0 consumes an ArrowArrayStream that a C
// library produces:
//
//   - load the library (clib.Open: dlopen on Linux and macOS,
//     LoadLibraryEx on Windows, never from the current directory) and bind
//     its functions to Go function variables with purego.RegisterFunc;
//   - allocate the ArrowArrayStream struct with cdevice.New, so that it lives
//     off the Go heap, where C may write into it and keep pointers in it;
//   - let the C library fill it (GDAL's OGR_L_GetArrowStream, GDAL 3.6 or
//     newer), then move it into a stream.Reader with stream.ImportReader;
//   - range over Reader.All: every batch wraps GDAL's buffers without a
//     copy and is released before the next one is asked for;
//   - release the reader, which calls GDAL's release callback, before
//     closing the dataset that owns the stream.
//
// Usage:
//
//	go run ./examples/gdalstream [-lib PATH] [-batch-size N] [-fid] [FILE]
//
// FILE is any vector dataset GDAL opens (CSV, GeoPackage, Shapefile,
// GeoJSON, ...); its first layer is read. The default is
// testdata/gdal/cities.csv, relative to the repository root. For .csv files
// the program asks GDAL's CSV driver to detect column types and to make
// point geometries from lon/lat columns.
//
// GDAL is found as libgdal.so.NN or libgdal.so on Linux (Debian 12:
// apt-get install libgdal32), libgdal.dylib on macOS (brew install gdal)
// and gdal.dll on Windows (conda or OSGeo4W), or wherever -lib says.
//
// Exit status: 0 on success, 1 on an error, 2 on bad usage, 3 when GDAL
// cannot be loaded.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/ebitengine/purego"
	"github.com/purearrow/cdevice"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/clib"
	"github.com/purearrow/cdevice/stream"
)

// Exit statuses.
const (
	exitError    = 1
	exitUsage    = 2
	exitNoGDAL   = 3
	defaultInput = "testdata/gdal/cities.csv"
)

// GDAL constants, from gdal.h.
const (
	gdalOfVector       = 0x04 // GDAL_OF_VECTOR
	gdalOfVerboseError = 0x40 // GDAL_OF_VERBOSE_ERROR: set an error message on failure
)

// errNoGDAL: the GDAL library could not be loaded.
var errNoGDAL = errors.New("GDAL not found")

// gdal holds the GDAL C functions this program calls. A handle (GDALDatasetH,
// OGRLayerH, char**) is a C pointer, held as a uintptr: it points at C
// memory, which Go's garbage collector neither scans nor moves.
type gdal struct {
	path string // the library that was loaded

	AllRegister     func()
	VersionInfo     func(request string) string
	OpenEx          func(name string, flags uint32, drivers, openOptions, siblings uintptr) uintptr
	Close           func(ds uintptr)
	GetDriver       func(ds uintptr) uintptr
	DriverShortName func(drv uintptr) string
	LayerCount      func(ds uintptr) int32
	GetLayer        func(ds uintptr, i int32) uintptr
	LayerName       func(layer uintptr) string
	GetArrowStream  func(layer uintptr, out *abi.ArrayStream, options uintptr) bool
	// char** string lists, built and freed by GDAL so that they live in C
	// memory: CSLAddString copies the string and returns the grown list.
	CSLAddString    func(list uintptr, s string) uintptr
	CSLDestroy      func(list uintptr)
	ErrorReset      func()
	LastErrorMsg    func() string
	SetErrorHandler func(handler uintptr) uintptr
}

// loadGDAL loads the GDAL library at path, or the first of the platform's
// usual names that loads, and binds the functions of gdal.
func loadGDAL(path string) (*gdal, error) {
	names := libraryNames
	if path != "" {
		names = []string{path}
	}
	// clib.Open loads as this module loads its own libraries: on Windows it never
	// searches the current directory, where LoadLibrary by a bare name
	// would (a program of your own: purego.Dlopen, or LoadLibraryEx with
	// LOAD_LIBRARY_SEARCH_* flags).
	var lib *clib.Library
	var tried []string
	for _, name := range names {
		l, err := clib.Open(name)
		if err == nil {
			lib, path = l, l.Path()
			break
		}
		tried = append(tried, err.Error())
	}
	if lib == nil {
		return nil, fmt.Errorf("%w: install libgdal32 (Debian 12; libgdal34 on Ubuntu 24.04), "+
			"gdal from Homebrew (macOS) or conda/OSGeo4W (Windows), or pass -lib PATH; tried:\n  %s",
			errNoGDAL, strings.Join(tried, "\n  "))
	}
	g := &gdal{path: path}
	// purego.RegisterLibFunc(&fn, lib, name) does lookup and binding in one
	// step but panics when a symbol is missing; looking each one up first
	// turns an old GDAL into an error message instead.
	for _, f := range []struct {
		fn   any
		name string
	}{
		{&g.AllRegister, "GDALAllRegister"},
		{&g.VersionInfo, "GDALVersionInfo"},
		{&g.OpenEx, "GDALOpenEx"},
		{&g.Close, "GDALClose"},
		{&g.GetDriver, "GDALGetDatasetDriver"},
		{&g.DriverShortName, "GDALGetDriverShortName"},
		{&g.LayerCount, "GDALDatasetGetLayerCount"},
		{&g.GetLayer, "GDALDatasetGetLayer"},
		{&g.LayerName, "OGR_L_GetName"},
		{&g.GetArrowStream, "OGR_L_GetArrowStream"},
		{&g.CSLAddString, "CSLAddString"},
		{&g.CSLDestroy, "CSLDestroy"},
		{&g.ErrorReset, "CPLErrorReset"},
		{&g.LastErrorMsg, "CPLGetLastErrorMsg"},
		{&g.SetErrorHandler, "CPLSetErrorHandler"},
	} {
		sym, err := lib.Symbol(f.name)
		if err != nil {
			return nil, fmt.Errorf("%s has no %s (OGR_L_GetArrowStream needs GDAL 3.6 or newer): %v", path, f.name, err)
		}
		purego.RegisterFunc(f.fn, sym)
	}
	// Keep GDAL from printing its errors to stderr: this program reports
	// them itself, with CPLGetLastErrorMsg. A C function's address is what
	// CPLSetErrorHandler takes.
	if quiet, err := lib.Symbol("CPLQuietErrorHandler"); err == nil {
		g.SetErrorHandler(quiet)
	}
	return g, nil
}

// lastError is GDAL's last error message on this thread, or what when
// there is none.
func (g *gdal) lastError(what string) error {
	if msg := g.LastErrorMsg(); msg != "" {
		return fmt.Errorf("%s: %s", what, msg)
	}
	return errors.New(what)
}

// stringList builds a NULL-terminated char** list in C memory; free it
// with CSLDestroy. An empty list is NULL.
func (g *gdal) stringList(items ...string) uintptr {
	var list uintptr
	for _, s := range items {
		list = g.CSLAddString(list, s)
	}
	return list
}

type options struct {
	lib       string
	batchSize int
	fid       bool
	input     string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the program: it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("gdalstream", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.lib, "lib", "", "the GDAL library to load (default: the platform's usual names)")
	fs.IntVar(&o.batchSize, "batch-size", 0, "rows per record batch (GDAL's MAX_FEATURES_IN_BATCH; 0: GDAL's default, 65536)")
	fs.BoolVar(&o.fid, "fid", false, "include the feature id column")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: gdalstream [flags] [FILE]\n\n"+
			"Reads the first layer of a vector file through GDAL's Arrow stream\n"+
			"(OGR_L_GetArrowStream) and prints its schema and record batches.\n"+
			"FILE defaults to %s.\n\nflags:\n", defaultInput)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	switch fs.NArg() {
	case 0:
		o.input = defaultInput
	case 1:
		o.input = fs.Arg(0)
	default:
		fs.Usage()
		return exitUsage
	}
	if o.batchSize < 0 {
		fmt.Fprintln(stderr, "gdalstream: -batch-size must be 0 or more")
		return exitUsage
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := readLayer(ctx, o, stdout); err != nil {
		fmt.Fprintf(stderr, "gdalstream: %v\n", err)
		if errors.Is(err, errNoGDAL) {
			return exitNoGDAL
		}
		return exitError
	}
	// Everything that crossed the C boundary has been released by now:
	// cdevice counts what is still held.
	if l := cdevice.LiveLeaks(); !l.Zero() {
		fmt.Fprintf(stderr, "gdalstream: still held after release: %s\n", l)
		return exitError
	}
	return 0
}

// readLayer opens o.input, streams its first layer and prints it.
func readLayer(ctx context.Context, o options, w io.Writer) error {
	// GDAL keeps its last error per OS thread: stay on one, so that
	// CPLGetLastErrorMsg reports the error of the call just made.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	g, err := loadGDAL(o.lib)
	if err != nil {
		return err
	}
	g.AllRegister()

	var openOpts []string
	if strings.EqualFold(filepath.Ext(o.input), ".csv") {
		// CSV driver: typed columns instead of all strings, and a point
		// geometry from the lon/lat columns (kept as columns too).
		openOpts = []string{"AUTODETECT_TYPE=YES", "X_POSSIBLE_NAMES=lon*,x", "Y_POSSIBLE_NAMES=lat*,y"}
	}
	oo := g.stringList(openOpts...)
	g.ErrorReset()
	ds := g.OpenEx(o.input, gdalOfVector|gdalOfVerboseError, 0, oo, 0)
	g.CSLDestroy(oo)
	if ds == 0 {
		return g.lastError("cannot open " + o.input)
	}
	// Deferred first, so it runs last: the stream and every batch from it
	// must be released before the dataset that produced them is closed.
	defer g.Close(ds)

	if n := g.LayerCount(ds); n < 1 {
		return fmt.Errorf("%s has no vector layer", o.input)
	}
	layer := g.GetLayer(ds, 0)
	if layer == 0 {
		return g.lastError("cannot get the first layer of " + o.input)
	}
	fmt.Fprintf(w, "GDAL %s (%s)\n", g.VersionInfo("RELEASE_NAME"), g.path)
	fmt.Fprintf(w, "layer %q of %s (driver %s)\n", g.LayerName(layer), o.input, g.DriverShortName(g.GetDriver(ds)))

	// The ArrowArrayStream struct lives in C memory: GDAL writes its
	// callbacks and private data into it.
	s := cdevice.New[abi.ArrayStream]()
	defer cdevice.Free(s)
	streamOpts := []string{"INCLUDE_FID=NO"}
	if o.fid {
		streamOpts[0] = "INCLUDE_FID=YES"
	}
	if o.batchSize > 0 {
		streamOpts = append(streamOpts, fmt.Sprintf("MAX_FEATURES_IN_BATCH=%d", o.batchSize))
	}
	so := g.stringList(streamOpts...)
	g.ErrorReset()
	ok := g.GetArrowStream(layer, s, so)
	g.CSLDestroy(so)
	if !ok {
		return g.lastError("OGR_L_GetArrowStream failed")
	}

	// ImportReader moves the stream into the Reader (s is left released)
	// and asks GDAL for the schema. Release calls GDAL's release callback.
	r, err := stream.ImportReader(s)
	if err != nil {
		return fmt.Errorf("importing GDAL's stream: %w", err)
	}
	defer r.Release()
	printSchema(w, r.Schema())

	batches, rows := 0, int64(0)
	for rec, err := range r.All(ctx) {
		if err != nil {
			// A *cdevice.ProducerError carries GDAL's errno-style code and
			// its get_last_error message.
			return fmt.Errorf("reading batch %d: %w", batches+1, err)
		}
		batches++
		rows += rec.NumRows()
		printBatch(w, batches, rec) // rec is GDAL's memory, valid in this loop body
	}
	fmt.Fprintf(w, "%d %s in %d %s\n", rows, plural(rows, "row"), batches, plural(int64(batches), "batch"))
	return nil
}

// printSchema prints one line per field: name, Arrow type, nullability and
// field metadata (GDAL marks its geometry column with
// ARROW:extension:name=ogc.wkb).
func printSchema(w io.Writer, sc *arrow.Schema) {
	fmt.Fprintf(w, "schema: %d fields\n", sc.NumFields())
	for _, f := range sc.Fields() {
		line := fmt.Sprintf("  %s: %s", f.Name, f.Type)
		if f.Nullable {
			line += " (nullable)"
		}
		md := f.Metadata
		for i, k := range md.Keys() {
			line += fmt.Sprintf(" %s=%s", k, md.Values()[i])
		}
		fmt.Fprintln(w, line)
	}
}

// printBatch prints a batch as a table, one row a line.
func printBatch(w io.Writer, n int, rec arrow.RecordBatch) {
	fmt.Fprintf(w, "batch %d: %d %s\n", n, rec.NumRows(), plural(rec.NumRows(), "row"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	sc := rec.Schema()
	cells := make([]string, rec.NumCols())
	for i, f := range sc.Fields() {
		cells[i] = f.Name
	}
	fmt.Fprintf(tw, "  %s\n", strings.Join(cells, "\t"))
	for row := range int(rec.NumRows()) {
		for i, col := range rec.Columns() {
			cells[i] = cell(sc.Field(i), col, row)
		}
		fmt.Fprintf(tw, "  %s\n", strings.Join(cells, "\t"))
	}
	tw.Flush()
}

// cell is the text of one value: WKB points as WKT, other geometries by
// size, everything else as arrow-go prints it.
func cell(f arrow.Field, col arrow.Array, row int) string {
	if col.IsNull(row) {
		return "NULL"
	}
	if b, ok := col.(*array.Binary); ok {
		if ext, _ := f.Metadata.GetValue("ARROW:extension:name"); ext == "ogc.wkb" || ext == "geoarrow.wkb" {
			return wkbText(b.Value(row))
		}
	}
	return col.ValueStr(row)
}

// wkbText decodes a 2D WKB point as "POINT (x y)"; other geometries are
// described by their size.
func wkbText(wkb []byte) string {
	if len(wkb) == 21 && (wkb[0] == 0 || wkb[0] == 1) {
		var order binary.ByteOrder = binary.BigEndian
		if wkb[0] == 1 {
			order = binary.LittleEndian
		}
		if order.Uint32(wkb[1:]) == 1 { // wkbPoint
			x := math.Float64frombits(order.Uint64(wkb[5:]))
			y := math.Float64frombits(order.Uint64(wkb[13:]))
			return fmt.Sprintf("POINT (%g %g)", x, y)
		}
	}
	return fmt.Sprintf("WKB (%d bytes)", len(wkb))
}

func plural(n int64, word string) string {
	switch {
	case n == 1:
		return word
	case strings.HasSuffix(word, "ch"):
		return word + "es"
	}
	return word + "s"
}
