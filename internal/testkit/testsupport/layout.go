package testsupport

import (
	"bufio"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// LayoutArch maps GOARCH to the arch column of testdata/abi_layout.tsv
// (measured with gcc from Arrow's abi.h and DLPack's dlpack.h).
var LayoutArch = map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "i386", "arm": "armv7hf"}

// A LayoutRow is one row of the layout table.
type LayoutRow struct {
	Line                         int
	Struct, Field, Offset, Value string
	Size                         uintptr
}

// ReadLayout returns the table's rows for arch whose struct column keep
// accepts (every row when keep is nil).
func ReadLayout(t *testing.T, arch string, keep func(strct string) bool) []LayoutRow {
	t.Helper()
	f, err := os.Open(Testdata(t, "abi_layout.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []LayoutRow
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if n == 1 { // header: arch struct field offset size value
			continue
		}
		col := strings.Split(sc.Text(), "\t")
		if len(col) != 6 {
			t.Fatalf("abi_layout.tsv:%d: %d columns, want 6", n, len(col))
		}
		if col[0] != arch || (keep != nil && !keep(col[1])) {
			continue
		}
		size, err := strconv.ParseUint(col[4], 10, 64)
		if err != nil {
			t.Fatalf("abi_layout.tsv:%d: size %q: %v", n, col[4], err)
		}
		rows = append(rows, LayoutRow{Line: n, Struct: col[1], Field: col[2], Offset: col[3], Size: uintptr(size), Value: col[5]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// initialisms are the C name parts the Go mirrors write in capitals
// (device_id → DeviceID, dl_tensor → DLTensor, prev_api → PrevAPI).
var initialisms = map[string]string{"id": "ID", "dl": "DL", "api": "API", "dltensor": "DLTensor"}

// GoFieldName turns a C member name into the Go field name.
func GoFieldName(c string) string {
	var b strings.Builder
	for _, part := range strings.Split(c, "_") {
		if s, ok := initialisms[part]; ok {
			b.WriteString(s)
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// ResolveField finds the C member path (e.g. "array.length", "reserved[1]")
// in typ and returns its offset, its size and the top-level Go field name.
func ResolveField(typ reflect.Type, path string) (off, size uintptr, top string, ok bool) {
	cur := typ
	for i, part := range strings.Split(path, ".") {
		index := -1
		if j := strings.IndexByte(part, '['); j >= 0 && strings.HasSuffix(part, "]") {
			n, err := strconv.Atoi(part[j+1 : len(part)-1])
			if err != nil {
				return 0, 0, "", false
			}
			index, part = n, part[:j]
		}
		if cur.Kind() != reflect.Struct {
			return 0, 0, "", false
		}
		f, found := cur.FieldByName(GoFieldName(part))
		if !found || len(f.Index) != 1 {
			return 0, 0, "", false
		}
		if i == 0 {
			top = f.Name
		}
		off += f.Offset
		cur = f.Type
		if index >= 0 {
			if cur.Kind() != reflect.Array || index >= cur.Len() {
				return 0, 0, "", false
			}
			cur = cur.Elem()
			off += uintptr(index) * cur.Size()
		}
	}
	return off, cur.Size(), top, true
}

// CheckStruct asserts typ's size, alignment and every member's offset and
// size against rows (one struct's rows), and that every named Go field
// stands for a C member.
func CheckStruct(t *testing.T, typ reflect.Type, rows []LayoutRow) {
	t.Helper()
	covered := map[string]bool{}
	var sawSize, sawAlign bool
	for _, r := range rows {
		switch r.Field {
		case "(sizeof)":
			sawSize = true
			if got := typ.Size(); got != r.Size {
				t.Errorf("sizeof(%s) = %d, C says %d (tsv line %d)", typ, got, r.Size, r.Line)
			}
		case "(alignof)":
			sawAlign = true
			got := uintptr(typ.Align())
			switch {
			case got == r.Size:
			case runtime.GOARCH == "arm" && got == 4 && r.Size == 8:
				// Documented in package abi: Go cannot ask for 8 on arm
				// without sync/atomic's noCopy types; structs that C sees come
				// from C memory or the Go heap, which align them to 8.
				t.Logf("alignof(%s) = 4 in Go, 8 in C: allowed on arm", typ)
			default:
				t.Errorf("alignof(%s) = %d, C says %d (tsv line %d)", typ, got, r.Size, r.Line)
			}
		default:
			off, size, top, ok := ResolveField(typ, r.Field)
			if !ok {
				t.Errorf("C member %s (tsv line %d) has no Go field %s in %s", r.Field, r.Line, GoFieldName(r.Field), typ)
				continue
			}
			covered[top] = true
			want, err := strconv.ParseUint(r.Offset, 10, 64)
			if err != nil {
				t.Errorf("tsv line %d: offset %q: %v", r.Line, r.Offset, err)
				continue
			}
			if off != uintptr(want) {
				t.Errorf("offsetof(%s.%s) = %d, C says %d (tsv line %d)", typ, r.Field, off, want, r.Line)
			}
			if size != r.Size {
				t.Errorf("sizeof(%s.%s) = %d, C says %d (tsv line %d)", typ, r.Field, size, r.Size, r.Line)
			}
		}
	}
	if !sawSize || !sawAlign {
		t.Errorf("tsv lacks (sizeof) or (alignof) for %s", typ)
	}
	for i := 0; i < typ.NumField(); i++ {
		if f := typ.Field(i); f.Name != "_" && !covered[f.Name] {
			t.Errorf("Go field %s.%s has no C member in the tsv", typ, f.Name)
		}
	}
}
