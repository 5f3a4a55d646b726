package cdatatest

import (
	"math"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/purearrow/cdevice/abi"
)

const (
	nullable   = abi.FlagNullable
	keysSorted = abi.FlagMapKeysSorted
)

var (
	metadata1 = arrow.NewMetadata([]string{"key1", "key2"}, []string{"", "bar"})
	metadata2 = arrow.NewMetadata([]string{"key"}, []string{"abcde"})
)

// count is the number of nodes of n's tree.
func (n node) count() int {
	c := 1
	for _, k := range n.children {
		c += k.count()
	}
	if n.dictionary != nil {
		c += n.dictionary.count()
	}
	return c
}

// chain is a list-like nesting: fmts[0] holding fmts[1] holding …, each
// child named names[i] with the nullability in isNull[i-1].
func chain(fmts, names []string, isNull []bool) node {
	n := node{format: fmts[len(fmts)-1], name: names[len(names)-1]}
	for i := len(fmts) - 2; i >= 0; i-- {
		if isNull[i] {
			n.flags = nullable
		}
		n = node{format: fmts[i], name: names[i], children: []node{n}}
	}
	return n
}

// importField imports n, built by C, as a field and checks the schema was
// released, each node once.
func (s *suite) importField(t *testing.T, n node) (arrow.Field, error) {
	t.Helper()
	tk := s.p.token(t)
	sc := tk.schema(t, n)
	f, err := s.api.ImportCArrowField(addr(sc))
	wantSchemaReleased(t, tk, sc, n.count())
	return f, err
}

// rejectField wants n's import as a field to fail with arrow.ErrInvalid.
func (s *suite) rejectField(t *testing.T, n node) {
	t.Helper()
	_, err := s.importField(t, n)
	wantError(t, "ImportCArrowField("+n.format+")", err, arrow.ErrInvalid)
}

var schemaScenarios = []scenario{
	{"SchemaExport", func(t *testing.T, s *suite) {
		f, err := s.importField(t, node{format: "i", metadata: 1})
		noError(t, "ImportCArrowField", err)
		if !arrow.TypeEqual(f.Type, arrow.PrimitiveTypes.Int32) {
			t.Errorf("type %s, want int32", f.Type)
		}
		if !slices.Equal(f.Metadata.Keys(), metadata1.Keys()) || !slices.Equal(f.Metadata.Values(), metadata1.Values()) {
			t.Errorf("metadata %v, want %v", f.Metadata, metadata1)
		}
	}},
	{"ImportSchemaRejectsMalformedFormats", func(t *testing.T, s *suite) {
		for _, format := range []string{"", "+", "+v", "+l", "+w", "+m", "+u"} {
			t.Run(format, func(t *testing.T) { s.rejectField(t, node{format: format}) })
		}
	}},
	{"ImportSchemaRejectsInvalidNestedFormats", func(t *testing.T, s *suite) {
		for _, format := range []string{"+vx", "+vlx", "+vLx", "+lx", "+Lx", "+w:0", "+w:-1", "+w:2147483648"} {
			t.Run(format, func(t *testing.T) {
				s.rejectField(t, chain([]string{format, "i"}, []string{"", "item"}, []bool{true}))
			})
		}
		t.Run("+sx", func(t *testing.T) { s.rejectField(t, node{format: "+sx"}) })
	}},
	{"ImportSchemaRejectsInvalidFixedSizeBinaryWidths", func(t *testing.T, s *suite) {
		for _, format := range []string{"w:0", "w:-1"} {
			t.Run(format, func(t *testing.T) { s.rejectField(t, node{format: format}) })
		}
	}},
	{"ImportCArrowSchemaRejectsPrimitiveTopLevel", func(t *testing.T, s *suite) {
		tk := s.p.token(t)
		sc := tk.schema(t, node{format: "i"})
		_, err := s.api.ImportCArrowSchema(addr(sc))
		wantError(t, "ImportCArrowSchema(i)", err, arrow.ErrInvalid)
		wantSchemaReleased(t, tk, sc, 1)
	}},
	{"ImportSchemaRejectsOversizedChildCount", func(t *testing.T, s *suite) {
		tk := s.p.token(t)
		sc := tk.schema(t, node{format: "+s"})
		sc.NChildren = math.MaxInt64 // children stays NULL
		_, err := s.api.ImportCArrowField(addr(sc))
		wantError(t, "ImportCArrowField(+s with 2^63-1 children)", err, arrow.ErrInvalid)
		wantSchemaReleased(t, tk, sc, 1)
	}},
	{"PrimitiveSchemas", func(t *testing.T, s *suite) {
		s.importTypes(t, []typeCase{
			{arrow.PrimitiveTypes.Int8, "c"},
			{arrow.PrimitiveTypes.Int16, "s"},
			{arrow.PrimitiveTypes.Int32, "i"},
			{arrow.PrimitiveTypes.Int64, "l"},
			{arrow.PrimitiveTypes.Uint8, "C"},
			{arrow.PrimitiveTypes.Uint16, "S"},
			{arrow.PrimitiveTypes.Uint32, "I"},
			{arrow.PrimitiveTypes.Uint64, "L"},
			{arrow.FixedWidthTypes.Boolean, "b"},
			{arrow.Null, "n"},
			{arrow.FixedWidthTypes.Float16, "e"},
			{arrow.PrimitiveTypes.Float32, "f"},
			{arrow.PrimitiveTypes.Float64, "g"},
			{&arrow.FixedSizeBinaryType{ByteWidth: 3}, "w:3"},
			{arrow.BinaryTypes.Binary, "z"},
			{arrow.BinaryTypes.LargeBinary, "Z"},
			{arrow.BinaryTypes.String, "u"},
			{arrow.BinaryTypes.LargeString, "U"},
			{&arrow.Decimal128Type{Precision: 16, Scale: 4}, "d:16,4"},
			{&arrow.Decimal128Type{Precision: 15, Scale: 0}, "d:15,0"},
			{&arrow.Decimal128Type{Precision: 15, Scale: -4}, "d:15,-4"},
			{&arrow.Decimal256Type{Precision: 15, Scale: -4}, "d:15,-4,256"},
		})
	}},
	{"DecimalSchemaErrors", func(t *testing.T, s *suite) {
		for _, c := range []struct{ format, msg string }{
			{"d:", "invalid decimal spec 'd:': wrong number of properties"},
			{"d:1", "invalid decimal spec 'd:1': wrong number of properties"},
			{"d:1,2,3,4", "invalid decimal spec 'd:1,2,3,4': wrong number of properties"},
			{"d:a,2,3", "could not parse decimal precision in 'd:a,2,3':"},
			{"d:1,a,3", "could not parse decimal scale in 'd:1,a,3':"},
			{"d:1,2,a", "could not parse decimal bitwidth in 'd:1,2,a':"},
			{"d:1,2,384", "unsupported decimal bitwidth, got 'd:1,2,384'"},
		} {
			t.Run(c.format, func(t *testing.T) {
				_, err := s.importField(t, node{format: c.format})
				wantErrorContaining(t, "ImportCArrowField("+c.format+")", err, c.msg)
			})
		}
	}},
	{"UnionSchemaErrors", func(t *testing.T, s *suite) {
		for _, format := range []string{"+us", "+ud"} { // no ":<type codes>"
			t.Run(format, func(t *testing.T) {
				_, err := s.importField(t, node{format: format})
				wantError(t, "ImportCArrowField("+format+")", err)
			})
		}
	}},
	{"ImportTemporalSchema", func(t *testing.T, s *suite) {
		ts := func(u arrow.TimeUnit, tz string) arrow.DataType { return &arrow.TimestampType{Unit: u, TimeZone: tz} }
		s.importTypes(t, []typeCase{
			{arrow.FixedWidthTypes.Date32, "tdD"},
			{arrow.FixedWidthTypes.Date64, "tdm"},
			{arrow.FixedWidthTypes.Time32s, "tts"},
			{arrow.FixedWidthTypes.Time32ms, "ttm"},
			{arrow.FixedWidthTypes.Time64us, "ttu"},
			{arrow.FixedWidthTypes.Time64ns, "ttn"},
			{arrow.FixedWidthTypes.Duration_s, "tDs"},
			{arrow.FixedWidthTypes.Duration_ms, "tDm"},
			{arrow.FixedWidthTypes.Duration_us, "tDu"},
			{arrow.FixedWidthTypes.Duration_ns, "tDn"},
			{arrow.FixedWidthTypes.MonthInterval, "tiM"},
			{arrow.FixedWidthTypes.DayTimeInterval, "tiD"},
			{arrow.FixedWidthTypes.MonthDayNanoInterval, "tin"},
			{arrow.FixedWidthTypes.Timestamp_s, "tss:UTC"},
			{ts(arrow.Second, ""), "tss:"},
			{ts(arrow.Second, "Europe/Paris"), "tss:Europe/Paris"},
			{ts(arrow.Second, "Etc/GMT+1"), "tss:Etc/GMT+1"},
			{ts(arrow.Second, "+01:00"), "tss:+01:00"},
			{arrow.FixedWidthTypes.Timestamp_ms, "tsm:UTC"},
			{ts(arrow.Millisecond, ""), "tsm:"},
			{ts(arrow.Millisecond, "Europe/Paris"), "tsm:Europe/Paris"},
			{ts(arrow.Millisecond, "-07:30"), "tsm:-07:30"},
			{arrow.FixedWidthTypes.Timestamp_us, "tsu:UTC"},
			{ts(arrow.Microsecond, ""), "tsu:"},
			{ts(arrow.Microsecond, "Europe/Paris"), "tsu:Europe/Paris"},
			{arrow.FixedWidthTypes.Timestamp_ns, "tsn:UTC"},
			{ts(arrow.Nanosecond, ""), "tsn:"},
			{ts(arrow.Nanosecond, "Europe/Paris"), "tsn:Europe/Paris"},
		})
	}},
	{"ListSchemas", func(t *testing.T, s *suite) {
		for _, c := range []struct {
			want   arrow.DataType
			fmts   []string
			names  []string
			isNull []bool
		}{
			{arrow.ListOf(arrow.PrimitiveTypes.Int8), []string{"+l", "c"}, []string{"", "item"}, []bool{true}},
			{arrow.FixedSizeListOfNonNullable(2, arrow.PrimitiveTypes.Int64), []string{"+w:2", "l"}, []string{"", "item"}, []bool{false}},
			{arrow.ListOfNonNullable(arrow.ListOf(arrow.PrimitiveTypes.Int32)), []string{"+l", "+l", "i"}, []string{"", "item", "item"}, []bool{false, true}},
		} {
			t.Run(c.want.String(), func(t *testing.T) {
				s.importType(t, c.want, chain(c.fmts, c.names, c.isNull))
			})
		}
	}},
	{"StructSchemas", func(t *testing.T, s *suite) {
		want := arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true, Metadata: metadata2},
		)
		s.importType(t, want, node{format: "+s", flags: nullable, children: []node{
			{format: "c", name: "a", flags: nullable},
			{format: "u", name: "b", flags: nullable, metadata: 2},
		}})
	}},
	{"MapSchemas", func(t *testing.T, s *suite) {
		for _, sorted := range []bool{false, true} {
			want := arrow.MapOf(arrow.PrimitiveTypes.Int8, arrow.BinaryTypes.String)
			want.KeysSorted = sorted
			flags := nullable
			if sorted {
				flags |= keysSorted
			}
			t.Run(want.String(), func(t *testing.T) {
				s.importType(t, want, node{format: "+m", flags: flags, children: []node{
					{format: "+s", name: "entries", children: []node{
						{format: "c", name: "key"},
						{format: "u", name: "value", flags: nullable},
					}},
				}})
			})
		}
	}},
	{"Schema", func(t *testing.T, s *suite) {
		want := arrow.NewSchema([]arrow.Field{
			{Name: "nulls", Type: arrow.Null, Nullable: false},
			{Name: "values", Type: arrow.PrimitiveTypes.Int64, Nullable: true, Metadata: metadata1},
		}, &metadata2)
		n := node{format: "+s", metadata: 2, children: []node{
			{format: "n", name: "nulls"},
			{format: "l", name: "values", flags: nullable, metadata: 1},
		}}
		tk := s.p.token(t)
		sc := tk.schema(t, n)
		got, err := s.api.ImportCArrowSchema(addr(sc))
		noError(t, "ImportCArrowSchema", err)
		if !want.Equal(got) || !want.Metadata().Equal(got.Metadata()) {
			t.Errorf("got schema\n%s\nwant\n%s", got, want)
		}
		wantSchemaReleased(t, tk, sc, n.count())
	}},
}

type typeCase struct {
	want   arrow.DataType
	format string
}

func (s *suite) importTypes(t *testing.T, cases []typeCase) {
	for _, c := range cases {
		t.Run(c.format, func(t *testing.T) { s.importType(t, c.want, node{format: c.format}) })
	}
}

// importType wants n, built by C, to import as a field of type want.
func (s *suite) importType(t *testing.T, want arrow.DataType, n node) {
	t.Helper()
	f, err := s.importField(t, n)
	noError(t, "ImportCArrowField("+n.format+")", err)
	if !arrow.TypeEqual(want, f.Type) {
		t.Errorf("%s imports as %s, want %s", n.format, f.Type, want)
	}
}
