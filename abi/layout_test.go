package abi_test

import (
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// layoutStructs maps the C struct names of the tsv to their Go mirrors.
var layoutStructs = map[string]reflect.Type{
	"ArrowSchema":                   reflect.TypeFor[abi.Schema](),
	"ArrowArray":                    reflect.TypeFor[abi.Array](),
	"ArrowArrayStream":              reflect.TypeFor[abi.ArrayStream](),
	"ArrowDeviceArray":              reflect.TypeFor[abi.DeviceArray](),
	"ArrowDeviceArrayStream":        reflect.TypeFor[abi.DeviceArrayStream](),
	"ArrowAsyncTask":                reflect.TypeFor[abi.AsyncTask](),
	"ArrowAsyncProducer":            reflect.TypeFor[abi.AsyncProducer](),
	"ArrowAsyncDeviceStreamHandler": reflect.TypeFor[abi.AsyncDeviceStreamHandler](),
}

// layoutMacros holds the Go value of every (arrow-macro) row.
var layoutMacros = map[string]int64{
	"ARROW_FLAG_DICTIONARY_ORDERED": abi.FlagDictionaryOrdered,
	"ARROW_FLAG_NULLABLE":           abi.FlagNullable,
	"ARROW_FLAG_MAP_KEYS_SORTED":    abi.FlagMapKeysSorted,
	"ARROW_DEVICE_CPU":              int64(abi.DeviceCPU),
	"ARROW_DEVICE_CUDA":             int64(abi.DeviceCUDA),
	"ARROW_DEVICE_CUDA_HOST":        int64(abi.DeviceCUDAHost),
	"ARROW_DEVICE_OPENCL":           int64(abi.DeviceOpenCL),
	"ARROW_DEVICE_VULKAN":           int64(abi.DeviceVulkan),
	"ARROW_DEVICE_METAL":            int64(abi.DeviceMetal),
	"ARROW_DEVICE_VPI":              int64(abi.DeviceVPI),
	"ARROW_DEVICE_ROCM":             int64(abi.DeviceROCm),
	"ARROW_DEVICE_ROCM_HOST":        int64(abi.DeviceROCmHost),
	"ARROW_DEVICE_EXT_DEV":          int64(abi.DeviceExtDev),
	"ARROW_DEVICE_CUDA_MANAGED":     int64(abi.DeviceCUDAManaged),
	"ARROW_DEVICE_ONEAPI":           int64(abi.DeviceOneAPI),
	"ARROW_DEVICE_WEBGPU":           int64(abi.DeviceWebGPU),
	"ARROW_DEVICE_HEXAGON":          int64(abi.DeviceHexagon),
}

// TestABILayout checks every abi struct against the C compiler's layout for
// the architecture this test binary was built for. CI runs it natively on
// amd64 and 386 and under qemu-user for arm and arm64.
func TestABILayout(t *testing.T) {
	arch, ok := testsupport.LayoutArch[runtime.GOARCH]
	if !ok {
		t.Skipf("no C layout measured for GOARCH=%s", runtime.GOARCH)
	}
	rows := testsupport.ReadLayout(t, arch, nil)
	if len(rows) == 0 {
		t.Fatalf("abi_layout.tsv has no rows for %s", arch)
	}
	byStruct := map[string][]testsupport.LayoutRow{}
	var order []string
	for _, r := range rows {
		if _, seen := byStruct[r.Struct]; !seen {
			order = append(order, r.Struct)
		}
		byStruct[r.Struct] = append(byStruct[r.Struct], r)
	}
	for name := range layoutStructs {
		if _, ok := byStruct[name]; !ok {
			t.Errorf("abi_layout.tsv has no rows for %s on %s", name, arch)
		}
	}

	for _, name := range order {
		rows := byStruct[name]
		switch {
		case name == "(scalar)":
			t.Run("scalar", func(t *testing.T) { checkScalars(t, rows) })
		case name == "(arrow-macro)":
			t.Run("arrow-macro", func(t *testing.T) { checkMacros(t, rows) })
		case name == "(dlpack-macro)" || strings.HasPrefix(name, "DL"):
			// DLPack structs, enums and macros: dlpack/layout_test.go.
		default:
			typ, ok := layoutStructs[name]
			if !ok {
				t.Errorf("abi_layout.tsv:%d: struct %s has no Go mirror in package abi", rows[0].Line, name)
				continue
			}
			t.Run(name, func(t *testing.T) { testsupport.CheckStruct(t, typ, rows) })
		}
	}
}

func checkScalars(t *testing.T, rows []testsupport.LayoutRow) {
	for _, r := range rows {
		var got uintptr
		switch r.Field {
		case "void*":
			got = unsafe.Sizeof(uintptr(0))
		case "ArrowDeviceType":
			got = unsafe.Sizeof(abi.DeviceType(0))
		case "int":
			got = unsafe.Sizeof(int32(0)) // the C int in callback signatures
		case "int64_t(alignof)":
			// Go aligns int64 to 4 on 32-bit targets where C may use 8
			// (armv7hf); the structs carry explicit padding for that, and
			// checkStruct asserts the result.
			continue
		default:
			t.Errorf("tsv line %d: unknown scalar %q", r.Line, r.Field)
			continue
		}
		if got != r.Size {
			t.Errorf("sizeof(%s) = %d in Go, C says %d (tsv line %d)", r.Field, got, r.Size, r.Line)
		}
	}
}

func checkMacros(t *testing.T, rows []testsupport.LayoutRow) {
	for _, r := range rows {
		want, err := strconv.ParseInt(r.Value, 10, 64)
		if err != nil {
			t.Errorf("tsv line %d: value %q: %v", r.Line, r.Value, err)
			continue
		}
		got, ok := layoutMacros[r.Field]
		if !ok {
			t.Errorf("tsv line %d: macro %s has no abi constant", r.Line, r.Field)
			continue
		}
		if got != want {
			t.Errorf("%s = %d in package abi, C says %d", r.Field, got, want)
		}
	}
}
