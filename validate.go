package cdevice

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
)

// An ImportOption changes how an import treats its input.
type ImportOption struct{ apply func(*importConfig) }

type importConfig struct {
	full bool
	ctx  context.Context // nil: context.Background
}

// WithFullValidation makes the import run ValidateFull on the result and fail
// (releasing it) when it finds a problem. By default an import checks
// structure only (counts, pointers, lengths, buffer sizes from first/last
// offsets), in time independent of the array's length, like nanoarrow's
// default validation level.
func WithFullValidation() ImportOption {
	return ImportOption{func(c *importConfig) { c.full = true }}
}

// context is the import's context: the device import's, or
// context.Background.
func (c importConfig) context() context.Context {
	if c.ctx == nil {
		return context.Background()
	}
	return c.ctx
}

// applyImportOptions is the configuration opts ask for.
func applyImportOptions(opts []ImportOption) importConfig {
	if len(opts) == 0 {
		// The common case, per batch: c below escapes to the heap (the
		// options are calls through unknown functions), and is not made.
		return importConfig{}
	}
	var c importConfig
	for _, o := range opts {
		if o.apply != nil {
			o.apply(&c)
		}
	}
	return c
}

// validate runs the validation that c asks for on an imported array.
func (c importConfig) validate(arr arrow.Array) error {
	if !c.full {
		return nil
	}
	return ValidateFull(arr)
}

// ValidateRecordBatch checks rb as an import with opts would. Without
// options it checks nothing more than the structure arrow-go already holds
// (it returns nil); with WithFullValidation it checks every column's
// contents as ValidateFull does. Stream readers use it for batches that
// reach them without an import; use it with WithFullValidation on a batch
// of uncertain origin before exporting it.
func ValidateRecordBatch(rb arrow.RecordBatch, opts ...ImportOption) error {
	return applyImportOptions(opts).validateBatch(rb)
}

// validateBatch is validate for an imported record batch, naming columns.
func (c importConfig) validateBatch(rb arrow.RecordBatch) error {
	if !c.full {
		return nil
	}
	for i, col := range rb.Columns() {
		if err := validateData(col.Data(), fmt.Sprintf("column %d (%s)", i, rb.Schema().Field(i).Name)); err != nil {
			return err
		}
	}
	return nil
}

// ValidateFull checks the contents of arr, O(n) in its size, so a consumer
// can refuse a corrupt array (typically one imported from C) before reading
// it. It returns nil or an error wrapping ErrInvalid that names the path
// and the type of the level at fault (e.g. "array > child 1 (name) of
// struct (utf8): offsets decrease at slot 17").
// Slot numbers are logical indexes, relative to that level's offset.
func ValidateFull(arr arrow.Array) (err error) {
	defer func() {
		// A typed nil arr (or a Data whose accessors fail) lands here.
		if r := recover(); r != nil {
			err = invalidf("array: malformed (%v)", r)
		}
	}()
	if arr == nil {
		return invalidf("array: nil")
	}
	return validateData(arr.Data(), "array")
}

// validateDepth bounds the recursion: arrow-go data could be built with a
// cycle, and real schemas are nowhere near this deep.
const validateDepth = 64

// validateData is ValidateFull for one ArrayData, named root in errors.
func validateData(d arrow.ArrayData, root string) (err error) {
	v := validator{path: []string{root}}
	defer func() {
		// Last backstop: the explicit checks should have caught the
		// problem, but no input may crash the caller.
		if r := recover(); r != nil {
			err = invalidf("%s: malformed array (%v)", v.where(), r)
		}
	}()
	return v.walk(d, 0)
}

// validator walks an ArrayData tree, keeping the path to the level being
// checked so that errors (and a recovered panic) can name it.
type validator struct {
	path []string
	lvl  *vlevel // the level being checked, for errorf's type name
}

// vlevel is one ArrayData under check, with its header already checked.
type vlevel struct {
	d           arrow.ArrayData
	dt          arrow.DataType // storage type
	off, length int
	end         int    // off + length
	valid       []byte // validity bitmap, nil when every slot is valid
}

func (v *validator) where() string { return strings.Join(v.path, " > ") }

func (v *validator) errorf(format string, args ...any) error {
	name := "?"
	if v.lvl != nil && v.lvl.dt != nil {
		name = v.lvl.dt.Name()
	}
	return invalidf("%s (%s): %s", v.where(), name, fmt.Sprintf(format, args...))
}

// isNilData reports a nil ArrayData, including a nil *array.Data in a
// non-nil interface (what (*array.Data).Dictionary returns when unset).
func isNilData(d arrow.ArrayData) bool {
	p, ok := d.(*array.Data)
	return d == nil || ok && p == nil
}

// buf returns the bytes of buffer i, nil when it is missing or nil.
func (l *vlevel) buf(i int) []byte { return dataBuf(l.d, i) }

func dataBuf(d arrow.ArrayData, i int) []byte {
	bufs := d.Buffers()
	if i >= len(bufs) || bufs[i] == nil {
		return nil
	}
	return bufs[i].Bytes()
}

func (l *vlevel) isValid(i int) bool { return l.valid == nil || bitutil.BitIsSet(l.valid, i) }

// walk checks d and everything below it.
func (v *validator) walk(d arrow.ArrayData, depth int) error {
	v.lvl = nil
	if isNilData(d) {
		return v.errorf("missing array data")
	}
	l := &vlevel{d: d, dt: d.DataType(), off: d.Offset(), length: d.Len()}
	// Extension arrays are laid out as their storage.
	for {
		ext, ok := l.dt.(arrow.ExtensionType)
		if !ok {
			break
		}
		l.dt = ext.StorageType()
	}
	v.lvl = l
	switch {
	case depth > validateDepth:
		return v.errorf("nested deeper than %d (or a cycle)", validateDepth)
	case l.dt == nil:
		return v.errorf("no data type")
	case l.length < 0 || l.off < 0:
		return v.errorf("negative length %d or offset %d", l.length, l.off)
	case l.off > math.MaxInt-l.length || int64(l.off+l.length) > maxElements:
		return v.errorf("offset %d + length %d overflows (over %d elements)", l.off, l.length, int64(maxElements))
	}
	l.end = l.off + l.length

	if err := v.structure(l, depth); err != nil {
		return err
	}
	return v.contents(l)
}

// structure checks the children and dictionary of l (count, type, and
// recursively their contents): contents reads them, so they come first.
func (v *validator) structure(l *vlevel, depth int) error {
	var want []arrow.DataType
	switch t := l.dt.(type) {
	case *arrow.RunEndEncodedType:
		want = []arrow.DataType{t.RunEnds(), t.Encoded()}
	case arrow.ListLikeType: // list, large list, list views, fixed-size list, map
		want = []arrow.DataType{t.ElemField().Type}
	case arrow.NestedType: // struct, unions
		for _, f := range t.Fields() {
			want = append(want, f.Type)
		}
	}
	children := l.d.Children()
	if len(children) != len(want) {
		return v.errorf("has %d children, its type %d", len(children), len(want))
	}
	for i, c := range children {
		if err := v.child(c, want[i], depth, v.childLabel(l, i)); err != nil {
			return err
		}
	}
	dict := l.d.Dictionary()
	if dt, ok := l.dt.(*arrow.DictionaryType); ok {
		if isNilData(dict) {
			return v.errorf("dictionary-encoded array without a dictionary")
		}
		return v.child(dict, dt.ValueType, depth, "dictionary")
	}
	if !isNilData(dict) {
		return v.errorf("has a dictionary but its type is not dictionary-encoded")
	}
	return nil
}

func (v *validator) childLabel(l *vlevel, i int) string {
	switch t := l.dt.(type) {
	case *arrow.RunEndEncodedType:
		return [2]string{"run ends", "values of run_end_encoded"}[i]
	case arrow.ListLikeType:
		return "values of " + t.Name()
	case arrow.NestedType:
		return fmt.Sprintf("child %d (%s) of %s", i, t.Fields()[i].Name, t.Name())
	}
	return fmt.Sprintf("child %d", i)
}

func (v *validator) child(c arrow.ArrayData, want arrow.DataType, depth int, label string) error {
	// A child of another type than the parent's type declares would be read
	// with the wrong layout by whoever trusts the parent's type.
	if !isNilData(c) && c.DataType() != nil && c.DataType().ID() != want.ID() {
		return v.errorf("%s has type %s, its parent's type says %s", label, c.DataType(), want)
	}
	parent := v.lvl
	v.path = append(v.path, label)
	if err := v.walk(c, depth+1); err != nil {
		return err // keep the path to the problem
	}
	v.path, v.lvl = v.path[:len(v.path)-1], parent
	return nil
}

// contents checks l's own buffers against its header and children.
func (v *validator) contents(l *vlevel) error {
	id := l.dt.ID()
	if id == arrow.NULL {
		return nil // no buffers
	}
	// arrow-go's constructors index the buffers its layout names (but its
	// own run-end encoded arrays come with none).
	if n, want := len(l.d.Buffers()), len(l.dt.Layout().Buffers); n < want && id != arrow.RUN_END_ENCODED {
		return v.errorf("has %d buffers, its type %d", n, want)
	}
	switch id {
	case arrow.SPARSE_UNION, arrow.DENSE_UNION, arrow.RUN_END_ENCODED:
		// No validity bitmap: arrow-go would still read a non-nil
		// buffer 0 as one, and a null count other than 0 as nulls.
		if n := l.d.NullN(); len(l.buf(0)) > 0 || n != 0 && !(n == array.UnknownNullCount && l.length == 0) {
			return v.errorf("has a validity bitmap or null count %d, which its type does not allow", n)
		}
		if id == arrow.RUN_END_ENCODED {
			return v.runEnds(l)
		}
		return v.union(l)
	}
	if err := v.validity(l); err != nil {
		return err
	}
	switch t := l.dt.(type) {
	case *arrow.BinaryType, *arrow.StringType:
		return v.binary(l, 4, id == arrow.STRING)
	case *arrow.LargeBinaryType, *arrow.LargeStringType:
		return v.binary(l, 8, id == arrow.LARGE_STRING)
	case *arrow.BinaryViewType, *arrow.StringViewType:
		return v.views(l, id == arrow.STRING_VIEW)
	case *arrow.ListType:
		_, err := v.offsets(l, 4, l.d.Children()[0].Len(), "child")
		return err
	case *arrow.MapType:
		return v.mapEntries(l)
	case *arrow.LargeListType:
		_, err := v.offsets(l, 8, l.d.Children()[0].Len(), "child")
		return err
	case *arrow.ListViewType:
		return v.listView(l, 4)
	case *arrow.LargeListViewType:
		return v.listView(l, 8)
	case *arrow.FixedSizeListType:
		if t.Len() < 0 {
			return v.errorf("negative list size %d", t.Len())
		}
		need, ok := mulChecked(l.end, int(t.Len()))
		if n := l.d.Children()[0].Len(); !ok || n < need {
			return v.errorf("child has length %d, needs %d for offset+length %d of %d-element lists", n, need, l.end, t.Len())
		}
		return nil
	case *arrow.StructType:
		for i, c := range l.d.Children() {
			if c.Len() < l.end {
				return v.errorf("child %d has length %d, shorter than offset+length %d", i, c.Len(), l.end)
			}
		}
		return nil
	case *arrow.DictionaryType:
		return v.dictionary(l, t)
	case *arrow.BooleanType:
		return v.need(l, 1, int(bitutil.BytesForBits(int64(l.end))), 1, "values bitmap")
	case arrow.DecimalType:
		return v.decimals(l, t)
	case arrow.FixedWidthDataType:
		return v.need(l, 1, l.end, t.BitWidth()/8, "values buffer")
	}
	return v.errorf("no known layout for type %s", l.dt)
}

// need checks that buffer i holds at least count elements of width bytes.
func (v *validator) need(l *vlevel, i, count, width int, what string) error {
	n, _ := mulChecked(count, width)
	if got := len(l.buf(i)); got < n {
		return v.errorf("%s has %d bytes, needs %d for offset+length %d", what, got, n, l.end)
	}
	return nil
}

// validity checks the bitmap's size and that it agrees with the null count,
// which consumers use to skip the bitmap.
func (v *validator) validity(l *vlevel) error {
	nulls := l.d.NullN()
	if nulls < array.UnknownNullCount || nulls > l.length {
		return v.errorf("null count %d out of range for length %d", nulls, l.length)
	}
	b := l.buf(0)
	if len(b) == 0 { // arrow-go reads an empty bitmap as "all valid"
		if nulls > 0 {
			return v.errorf("null count %d without a validity bitmap", nulls)
		}
		if nulls < 0 && l.length > 0 { // arrow-go would count the bits of the missing bitmap
			return v.errorf("unknown null count without a validity bitmap")
		}
		return nil
	}
	if err := v.need(l, 0, int(bitutil.BytesForBits(int64(l.end))), 1, "validity bitmap"); err != nil {
		return err
	}
	if counted := l.length - bitutil.CountSetBits(b, l.off, l.length); nulls >= 0 && counted != nulls {
		return v.errorf("null count is %d, the validity bitmap has %d nulls", nulls, counted)
	}
	l.valid = b
	return nil
}

// intsView reads fixed-width integers from a buffer in native byte order,
// without assuming alignment.
type intsView struct {
	b      []byte
	w      int
	signed bool
}

func (x intsView) at(i int) int64 {
	ne := binary.NativeEndian
	if x.signed {
		switch x.w {
		case 1:
			return int64(int8(x.b[i]))
		case 2:
			return int64(int16(ne.Uint16(x.b[2*i:])))
		case 4:
			return int64(int32(ne.Uint32(x.b[4*i:])))
		}
		return int64(ne.Uint64(x.b[8*i:]))
	}
	switch x.w {
	case 1:
		return int64(x.b[i])
	case 2:
		return int64(ne.Uint16(x.b[2*i:]))
	case 4:
		return int64(ne.Uint32(x.b[4*i:]))
	}
	return int64(min(ne.Uint64(x.b[8*i:]), math.MaxInt64)) // still out of any range
}

// offsets checks buffer 1 of l as w-byte offsets over [off, end]:
// non-decreasing, first >= 0, last <= limit (the size of what they index).
// An empty array may have no offsets at all.
func (v *validator) offsets(l *vlevel, w, limit int, what string) (intsView, error) {
	offs := intsView{b: l.buf(1), w: w, signed: true}
	if l.length == 0 {
		// No slots, but an offset that is there still says where the
		// (empty) values start, and an importer sizes the values by it.
		if len(offs.b) >= (l.off+1)*w {
			if o := offs.at(l.off); o < 0 || o > int64(limit) {
				return offs, v.errorf("the offset of an empty array, %d, is outside the %s (%d)", o, what, limit)
			}
		}
		return offs, nil
	}
	if err := v.need(l, 1, l.end+1, w, "offsets buffer"); err != nil {
		return offs, err
	}
	prev := offs.at(l.off)
	if prev < 0 {
		return offs, v.errorf("first offset %d is negative", prev)
	}
	for i := l.off + 1; i <= l.end; i++ {
		o := offs.at(i)
		if o < prev {
			return offs, v.errorf("offsets decrease at slot %d (%d to %d)", i-1-l.off, prev, o)
		}
		prev = o
	}
	if prev > int64(limit) {
		return offs, v.errorf("last offset %d is past the end of the %s (%d)", prev, what, limit)
	}
	return offs, nil
}

// mapEntries checks a map's offsets and that its entries and keys have no
// nulls: arrow-go refuses a map otherwise, and it compares the null counts
// themselves with 0, so an unknown (-1) count is refused too.
func (v *validator) mapEntries(l *vlevel) error {
	entries := l.d.Children()[0]
	if _, err := v.offsets(l, 4, entries.Len(), "entries"); err != nil {
		return err
	}
	if len(entries.Children()) != 2 {
		return v.errorf("entries have %d children, want key and value", len(entries.Children()))
	}
	if n, k := entries.NullN(), entries.Children()[0].NullN(); n != 0 || k != 0 {
		return v.errorf("entries (null count %d) or keys (null count %d) are not known to have no nulls", n, k)
	}
	return nil
}

func (v *validator) binary(l *vlevel, w int, utf8Check bool) error {
	data := l.buf(2)
	offs, err := v.offsets(l, w, len(data), "data buffer")
	if err != nil || !utf8Check {
		return err
	}
	for i := l.off; i < l.end; i++ {
		if l.isValid(i) && !utf8.Valid(data[offs.at(i):offs.at(i+1)]) {
			return v.errorf("invalid UTF-8 at slot %d", i-l.off)
		}
	}
	return nil
}

// listView checks each non-null slot's offset and size against the child
// (null slots may hold anything).
func (v *validator) listView(l *vlevel, w int) error {
	for i, what := range []string{"offsets buffer", "sizes buffer"} {
		if err := v.need(l, i+1, l.end, w, what); err != nil {
			return err
		}
	}
	offs, sizes := intsView{l.buf(1), w, true}, intsView{l.buf(2), w, true}
	n := int64(l.d.Children()[0].Len())
	for i := l.off; i < l.end; i++ {
		if !l.isValid(i) {
			continue
		}
		if o, s := offs.at(i), sizes.at(i); o < 0 || s < 0 || o > n-s {
			return v.errorf("slot %d has offset %d and size %d, outside the child of length %d", i-l.off, o, s, n)
		}
	}
	return nil
}

// views checks binary_view/string_view headers: each non-inline value must
// lie inside the variadic buffer it names, with a matching prefix.
func (v *validator) views(l *vlevel, utf8Check bool) error {
	const size, inline = arrow.ViewHeaderSizeBytes, 12 // views of up to 12 bytes are stored in the header
	if err := v.need(l, 1, l.end, size, "views buffer"); err != nil {
		return err
	}
	hdrs, data := l.buf(1), l.d.Buffers()
	data = data[min(2, len(data)):] // the variadic data buffers
	ne := binary.NativeEndian
	for i := l.off; i < l.end; i++ {
		if !l.isValid(i) {
			continue
		}
		h := hdrs[i*size : (i+1)*size]
		n := int(int32(ne.Uint32(h)))
		var val []byte
		switch {
		case n < 0:
			return v.errorf("view at slot %d has negative length %d", i-l.off, n)
		case n <= inline:
			val = h[4 : 4+n]
		default:
			bi, o := int(int32(ne.Uint32(h[8:]))), int(int32(ne.Uint32(h[12:])))
			if bi < 0 || bi >= len(data) {
				return v.errorf("view at slot %d refers to buffer %d of %d", i-l.off, bi, len(data))
			}
			var b []byte
			if data[bi] != nil {
				b = data[bi].Bytes()
			}
			if o < 0 || o > len(b)-n {
				return v.errorf("view at slot %d (offset %d, length %d) is past the end of buffer %d (%d bytes)", i-l.off, o, n, bi, len(b))
			}
			val = b[o : o+n]
			if !bytes.Equal(val[:arrow.ViewPrefixLen], h[4:4+arrow.ViewPrefixLen]) {
				return v.errorf("view at slot %d has a prefix that does not match its data", i-l.off)
			}
		}
		if utf8Check && !utf8.Valid(val) {
			return v.errorf("invalid UTF-8 at slot %d", i-l.off)
		}
	}
	return nil
}

// union checks type ids and, for dense unions, offsets. arrow-go lays a
// union out as [nil, type ids] or [nil, type ids, offsets].
func (v *validator) union(l *vlevel) error {
	ut := l.dt.(arrow.UnionType)
	children := l.d.Children()
	dense := ut.Mode() == arrow.DenseMode
	if err := v.need(l, 1, l.end, 1, "type ids buffer"); err != nil {
		return err
	}
	if dense {
		if err := v.need(l, 2, l.end, 4, "offsets buffer"); err != nil {
			return err
		}
	} else {
		for i, c := range children {
			if c.Len() < l.end {
				return v.errorf("child %d has length %d, shorter than offset+length %d", i, c.Len(), l.end)
			}
		}
	}
	ids, offs := l.buf(1), intsView{l.buf(2), 4, true}
	codes := ut.ChildIDs()
	// The spec (and Arrow C++'s ValidateFull) wants each child's offsets
	// in order: slots of one child never go back within it.
	var last []int64
	if dense {
		last = make([]int64, len(children))
	}
	for i := l.off; i < l.end; i++ {
		id := int8(ids[i])
		if id < 0 || int(id) >= len(codes) || codes[id] == arrow.InvalidUnionChildID {
			return v.errorf("type id %d at slot %d is not one of the union's codes %v", id, i-l.off, ut.TypeCodes())
		}
		if !dense {
			continue
		}
		c := codes[id]
		o := offs.at(i)
		if o < 0 || o >= int64(children[c].Len()) {
			return v.errorf("offset %d at slot %d is outside child %d of length %d", o, i-l.off, c, children[c].Len())
		}
		if o < last[c] {
			return v.errorf("offset %d at slot %d is before child %d's previous offset %d", o, i-l.off, c, last[c])
		}
		last[c] = o
	}
	return nil
}

// decimals checks that every non-null value fits the type's precision
// (|v| < 10^precision), as Arrow C++'s ValidateFull does: a consumer that
// formats or rescales by the declared precision would misread one that
// does not. Values are read word by word, lowest first, as arrow-go lays
// them out, without assuming alignment.
func (v *validator) decimals(l *vlevel, t arrow.DecimalType) error {
	bits, prec := t.BitWidth(), t.GetPrecision()
	if maxPrec, ok := decimalMaxPrecision[bits]; !ok || prec < 1 || prec > maxPrec {
		return v.errorf("precision %d is outside 1..%d for %d-bit decimals", prec, maxPrec, bits)
	}
	w := bits / 8
	if err := v.need(l, 1, l.end, w, "values buffer"); err != nil {
		return err
	}
	// inRange reports -10^prec < x < 10^prec for the value at x.
	var inRange func(x []byte) bool
	ne := binary.NativeEndian
	switch bits {
	case 32, 64:
		pow := int64(1) // 10^prec <= 10^18 < 2^63
		for range prec {
			pow *= 10
		}
		inRange = func(x []byte) bool {
			var v int64
			if bits == 32 {
				v = int64(int32(ne.Uint32(x)))
			} else {
				v = int64(ne.Uint64(x))
			}
			return -pow < v && v < pow
		}
	case 128:
		pow := decimal128.GetScaleMultiplier(int(prec))
		neg := pow.Negate()
		inRange = func(x []byte) bool {
			v := decimal128.New(int64(ne.Uint64(x[8:])), ne.Uint64(x))
			return v.Less(pow) && neg.Less(v)
		}
	default:
		pow := decimal256.GetScaleMultiplier(int(prec))
		neg := pow.Negate()
		inRange = func(x []byte) bool {
			v := decimal256.New(ne.Uint64(x[24:]), ne.Uint64(x[16:]), ne.Uint64(x[8:]), ne.Uint64(x))
			return v.Less(pow) && neg.Less(v)
		}
	}
	b := l.buf(1)
	for i := l.off; i < l.end; i++ {
		if l.isValid(i) && !inRange(b[i*w:(i+1)*w]) {
			return v.errorf("value at slot %d does not fit precision %d", i-l.off, prec)
		}
	}
	return nil
}

// dictionary checks every non-null index against the dictionary's length
// (the dictionary itself was checked by structure).
func (v *validator) dictionary(l *vlevel, t *arrow.DictionaryType) error {
	iw, ok := t.IndexType.(arrow.FixedWidthDataType)
	if !ok || !arrow.IsInteger(t.IndexType.ID()) {
		return v.errorf("index type %s is not an integer type", t.IndexType)
	}
	w := iw.BitWidth() / 8
	if err := v.need(l, 1, l.end, w, "indices buffer"); err != nil {
		return err
	}
	idx := intsView{l.buf(1), w, arrow.IsSignedInteger(t.IndexType.ID())}
	n := int64(l.d.Dictionary().Len())
	for i := l.off; i < l.end; i++ {
		if x := idx.at(i); l.isValid(i) && (x < 0 || x >= n) {
			return v.errorf("index %d at slot %d is outside the dictionary of length %d", x, i-l.off, n)
		}
	}
	return nil
}

// runEnds checks a run-end encoded array (no buffers of its own; children
// run ends and values): run ends positive, strictly increasing, without
// nulls, and covering offset+length.
func (v *validator) runEnds(l *vlevel) error {
	children := l.d.Children()
	re, vals := children[0], children[1]
	id := re.DataType().ID()
	if id != arrow.INT16 && id != arrow.INT32 && id != arrow.INT64 {
		return v.errorf("run ends must be int16, int32 or int64, not %s", re.DataType())
	}
	// re was validated: its bitmap is long enough and agrees with NullN >= 0.
	if nulls := re.NullN(); nulls > 0 || nulls < 0 && len(dataBuf(re, 0)) > 0 &&
		bitutil.CountSetBits(dataBuf(re, 0), re.Offset(), re.Len()) != re.Len() {
		return v.errorf("run ends have nulls")
	}
	if vals.Len() < re.Len() {
		return v.errorf("%d values for %d runs", vals.Len(), re.Len())
	}
	ends := intsView{b: dataBuf(re, 1), w: re.DataType().(arrow.FixedWidthDataType).BitWidth() / 8, signed: true}
	prev := int64(0)
	for i := range re.Len() {
		e := ends.at(re.Offset() + i)
		if e <= prev {
			return v.errorf("run end %d at run %d is not greater than %d", e, i, prev)
		}
		if e > math.MaxInt { // arrow-go indexes runs with int: 32 bits here
			return v.errorf("run end %d at run %d exceeds this platform's int", e, i)
		}
		prev = e
	}
	if prev < int64(l.end) {
		return v.errorf("last run end %d is before offset+length %d", prev, l.end)
	}
	return nil
}
