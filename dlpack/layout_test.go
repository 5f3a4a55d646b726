package dlpack_test

import (
	"bufio"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/purearrow/cdevice/dlpack"
)

// The DLPack rows of ../testdata/abi_layout.tsv (measured with gcc from
// dlpack.h 1.3 on x86_64, aarch64, i386 and armv7hf) against the Go mirrors.

var layoutArch = map[string]string{"amd64": "x86_64", "arm64": "aarch64", "386": "i386", "arm": "armv7hf"}

var dlStructs = map[string]reflect.Type{
	"DLPackVersion":            reflect.TypeFor[dlpack.PackVersion](),
	"DLDevice":                 reflect.TypeFor[dlpack.Device](),
	"DLDataType":               reflect.TypeFor[dlpack.DataType](),
	"DLTensor":                 reflect.TypeFor[dlpack.Tensor](),
	"DLManagedTensor":          reflect.TypeFor[dlpack.ManagedTensor](),
	"DLManagedTensorVersioned": reflect.TypeFor[dlpack.ManagedTensorVersioned](),
	"DLPackExchangeAPIHeader":  reflect.TypeFor[dlpack.ExchangeAPIHeader](),
	"DLPackExchangeAPI":        reflect.TypeFor[dlpack.ExchangeAPI](),
}

// dlEnums holds the Go value of every enumerator row (struct DLDeviceType
// or DLDataTypeCode) and every (dlpack-macro) row, with the Go size.
var dlEnums = map[string]struct {
	v    int64
	size uintptr
}{
	"kDLCPU":         {int64(dlpack.DeviceCPU), unsafe.Sizeof(dlpack.DeviceCPU)},
	"kDLCUDA":        {int64(dlpack.DeviceCUDA), 4},
	"kDLCUDAHost":    {int64(dlpack.DeviceCUDAHost), 4},
	"kDLOpenCL":      {int64(dlpack.DeviceOpenCL), 4},
	"kDLVulkan":      {int64(dlpack.DeviceVulkan), 4},
	"kDLMetal":       {int64(dlpack.DeviceMetal), 4},
	"kDLVPI":         {int64(dlpack.DeviceVPI), 4},
	"kDLROCM":        {int64(dlpack.DeviceROCM), 4},
	"kDLROCMHost":    {int64(dlpack.DeviceROCMHost), 4},
	"kDLExtDev":      {int64(dlpack.DeviceExtDev), 4},
	"kDLCUDAManaged": {int64(dlpack.DeviceCUDAManaged), 4},
	"kDLOneAPI":      {int64(dlpack.DeviceOneAPI), 4},
	"kDLWebGPU":      {int64(dlpack.DeviceWebGPU), 4},
	"kDLHexagon":     {int64(dlpack.DeviceHexagon), 4},
	"kDLMAIA":        {int64(dlpack.DeviceMAIA), 4},
	"kDLTrn":         {int64(dlpack.DeviceTrn), 4},

	// The C enum is int-sized; DLDataType stores the code in a uint8_t.
	"kDLInt":                {int64(dlpack.CodeInt), 4},
	"kDLUInt":               {int64(dlpack.CodeUInt), 4},
	"kDLFloat":              {int64(dlpack.CodeFloat), 4},
	"kDLOpaqueHandle":       {int64(dlpack.CodeOpaqueHandle), 4},
	"kDLBfloat":             {int64(dlpack.CodeBfloat), 4},
	"kDLComplex":            {int64(dlpack.CodeComplex), 4},
	"kDLBool":               {int64(dlpack.CodeBool), 4},
	"kDLFloat8_e3m4":        {int64(dlpack.CodeFloat8E3M4), 4},
	"kDLFloat8_e4m3":        {int64(dlpack.CodeFloat8E4M3), 4},
	"kDLFloat8_e4m3b11fnuz": {int64(dlpack.CodeFloat8E4M3B11FNUZ), 4},
	"kDLFloat8_e4m3fn":      {int64(dlpack.CodeFloat8E4M3FN), 4},
	"kDLFloat8_e4m3fnuz":    {int64(dlpack.CodeFloat8E4M3FNUZ), 4},
	"kDLFloat8_e5m2":        {int64(dlpack.CodeFloat8E5M2), 4},
	"kDLFloat8_e5m2fnuz":    {int64(dlpack.CodeFloat8E5M2FNUZ), 4},
	"kDLFloat8_e8m0fnu":     {int64(dlpack.CodeFloat8E8M0FNU), 4},
	"kDLFloat6_e2m3fn":      {int64(dlpack.CodeFloat6E2M3FN), 4},
	"kDLFloat6_e3m2fn":      {int64(dlpack.CodeFloat6E3M2FN), 4},
	"kDLFloat4_e2m1fn":      {int64(dlpack.CodeFloat4E2M1FN), 4},

	// Macros: the tsv's size is the C expression's (1UL << n is a long).
	"DLPACK_MAJOR_VERSION":                       {dlpack.MajorVersion, 4},
	"DLPACK_MINOR_VERSION":                       {dlpack.MinorVersion, 4},
	"DLPACK_FLAG_BITMASK_READ_ONLY":              {int64(dlpack.FlagReadOnly), unsafe.Sizeof(uintptr(0))},
	"DLPACK_FLAG_BITMASK_IS_COPIED":              {int64(dlpack.FlagIsCopied), unsafe.Sizeof(uintptr(0))},
	"DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED": {int64(dlpack.FlagIsSubbyteTypePadded), unsafe.Sizeof(uintptr(0))},
}

type layoutRow struct {
	line                        int
	strct, field, offset, value string
	size                        uintptr
}

func readLayout(t *testing.T, arch string) []layoutRow {
	t.Helper()
	f, err := os.Open("../testdata/abi_layout.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []layoutRow
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		col := strings.Split(sc.Text(), "\t")
		if n == 1 || len(col) != 6 || col[0] != arch {
			if n > 1 && len(col) != 6 {
				t.Fatalf("abi_layout.tsv:%d: %d columns, want 6", n, len(col))
			}
			continue
		}
		if !strings.HasPrefix(col[1], "DL") && col[1] != "(dlpack-macro)" {
			continue
		}
		size, err := strconv.ParseUint(col[4], 10, 64)
		if err != nil {
			t.Fatalf("abi_layout.tsv:%d: size %q: %v", n, col[4], err)
		}
		rows = append(rows, layoutRow{line: n, strct: col[1], field: col[2], offset: col[3], size: uintptr(size), value: col[5]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// goFieldName: snake_case to CamelCase with the initialisms this package
// uses (device_id → DeviceID, dl_tensor → DLTensor, prev_api → PrevAPI).
func goFieldName(c string) string {
	special := map[string]string{"id": "ID", "dl": "DL", "api": "API", "dltensor": "DLTensor"}
	var b strings.Builder
	for _, part := range strings.Split(c, "_") {
		if s, ok := special[part]; ok {
			b.WriteString(s)
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

func resolveField(typ reflect.Type, path string) (off, size uintptr, top string, ok bool) {
	cur := typ
	for i, part := range strings.Split(path, ".") {
		if cur.Kind() != reflect.Struct {
			return 0, 0, "", false
		}
		f, found := cur.FieldByName(goFieldName(part))
		if !found || len(f.Index) != 1 {
			return 0, 0, "", false
		}
		if i == 0 {
			top = f.Name
		}
		off += f.Offset
		cur = f.Type
	}
	return off, cur.Size(), top, true
}

func TestDLPackLayout(t *testing.T) {
	arch, ok := layoutArch[runtime.GOARCH]
	if !ok {
		t.Skipf("no C layout measured for GOARCH=%s", runtime.GOARCH)
	}
	rows := readLayout(t, arch)
	byStruct := map[string][]layoutRow{}
	for _, r := range rows {
		byStruct[r.strct] = append(byStruct[r.strct], r)
	}
	for name := range dlStructs {
		if len(byStruct[name]) == 0 {
			t.Errorf("abi_layout.tsv has no rows for %s on %s", name, arch)
		}
	}
	seenEnum := map[string]bool{}
	for name, rows := range byStruct {
		switch name {
		case "(dlpack-macro)", "DLDeviceType", "DLDataTypeCode":
			t.Run(name, func(t *testing.T) {
				for _, r := range rows {
					seenEnum[r.field] = true
					checkEnum(t, r)
				}
			})
		default:
			typ, ok := dlStructs[name]
			if !ok {
				t.Errorf("abi_layout.tsv:%d: %s has no Go mirror in package dlpack", rows[0].line, name)
				continue
			}
			t.Run(name, func(t *testing.T) { checkStruct(t, typ, rows) })
		}
	}
	for name := range dlEnums {
		if !seenEnum[name] {
			t.Errorf("%s has no row in abi_layout.tsv for %s", name, arch)
		}
	}
}

func checkEnum(t *testing.T, r layoutRow) {
	want, err := strconv.ParseInt(r.value, 10, 64)
	if err != nil {
		t.Errorf("tsv line %d: value %q: %v", r.line, r.value, err)
		return
	}
	got, ok := dlEnums[r.field]
	switch {
	case !ok:
		t.Errorf("tsv line %d: %s has no Go constant", r.line, r.field)
	case got.v != want:
		t.Errorf("%s = %d in Go, C says %d (tsv line %d)", r.field, got.v, want, r.line)
	case got.size != r.size:
		t.Errorf("sizeof(%s) = %d in Go's view, C says %d (tsv line %d)", r.field, got.size, r.size, r.line)
	}
}

func checkStruct(t *testing.T, typ reflect.Type, rows []layoutRow) {
	covered := map[string]bool{}
	var sawSize, sawAlign bool
	for _, r := range rows {
		switch r.field {
		case "(sizeof)":
			sawSize = true
			if got := typ.Size(); got != r.size {
				t.Errorf("sizeof(%s) = %d, C says %d (tsv line %d)", typ, got, r.size, r.line)
			}
		case "(alignof)":
			sawAlign = true
			got := uintptr(typ.Align())
			switch {
			case got == r.size:
			case runtime.GOARCH == "arm" && got == 4 && r.size == 8:
				// As in package abi: Go cannot ask for 8-byte alignment on
				// arm; structs C sees come from C memory (Export) or the Go
				// heap, which align them to 8.
				t.Logf("alignof(%s) = 4 in Go, 8 in C: allowed on arm", typ)
			default:
				t.Errorf("alignof(%s) = %d, C says %d (tsv line %d)", typ, got, r.size, r.line)
			}
		default:
			off, size, top, ok := resolveField(typ, r.field)
			if !ok {
				t.Errorf("C member %s (tsv line %d) has no Go field %s in %s", r.field, r.line, goFieldName(r.field), typ)
				continue
			}
			covered[top] = true
			want, err := strconv.ParseUint(r.offset, 10, 64)
			if err != nil {
				t.Errorf("tsv line %d: offset %q: %v", r.line, r.offset, err)
				continue
			}
			if off != uintptr(want) {
				t.Errorf("offsetof(%s.%s) = %d, C says %d (tsv line %d)", typ, r.field, off, want, r.line)
			}
			if size != r.size {
				t.Errorf("sizeof(%s.%s) = %d, C says %d (tsv line %d)", typ, r.field, size, r.size, r.line)
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
