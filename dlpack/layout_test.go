package dlpack_test

import (
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/dlpack"
	"github.com/purearrow/cdevice/internal/testkit/testsupport"
)

// The DLPack rows of ../testdata/abi_layout.tsv (measured with gcc from
// dlpack.h 1.3 on x86_64, aarch64, i386 and armv7hf) against the Go mirrors.

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
	"kDLCPU":         {int64(abi.DeviceCPU), unsafe.Sizeof(abi.DeviceCPU)},
	"kDLCUDA":        {int64(abi.DeviceCUDA), 4},
	"kDLCUDAHost":    {int64(abi.DeviceCUDAHost), 4},
	"kDLOpenCL":      {int64(abi.DeviceOpenCL), 4},
	"kDLVulkan":      {int64(abi.DeviceVulkan), 4},
	"kDLMetal":       {int64(abi.DeviceMetal), 4},
	"kDLVPI":         {int64(abi.DeviceVPI), 4},
	"kDLROCM":        {int64(abi.DeviceROCm), 4},
	"kDLROCMHost":    {int64(abi.DeviceROCmHost), 4},
	"kDLExtDev":      {int64(abi.DeviceExtDev), 4},
	"kDLCUDAManaged": {int64(abi.DeviceCUDAManaged), 4},
	"kDLOneAPI":      {int64(abi.DeviceOneAPI), 4},
	"kDLWebGPU":      {int64(abi.DeviceWebGPU), 4},
	"kDLHexagon":     {int64(abi.DeviceHexagon), 4},
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

func TestDLPackLayout(t *testing.T) {
	arch, ok := testsupport.LayoutArch[runtime.GOARCH]
	if !ok {
		t.Skipf("no C layout measured for GOARCH=%s", runtime.GOARCH)
	}
	rows := testsupport.ReadLayout(t, arch, func(strct string) bool {
		return strings.HasPrefix(strct, "DL") || strct == "(dlpack-macro)"
	})
	byStruct := map[string][]testsupport.LayoutRow{}
	for _, r := range rows {
		byStruct[r.Struct] = append(byStruct[r.Struct], r)
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
					seenEnum[r.Field] = true
					checkEnum(t, r)
				}
			})
		default:
			typ, ok := dlStructs[name]
			if !ok {
				t.Errorf("abi_layout.tsv:%d: %s has no Go mirror in package dlpack", rows[0].Line, name)
				continue
			}
			t.Run(name, func(t *testing.T) { testsupport.CheckStruct(t, typ, rows) })
		}
	}
	for name := range dlEnums {
		if !seenEnum[name] {
			t.Errorf("%s has no row in abi_layout.tsv for %s", name, arch)
		}
	}
}

func checkEnum(t *testing.T, r testsupport.LayoutRow) {
	want, err := strconv.ParseInt(r.Value, 10, 64)
	if err != nil {
		t.Errorf("tsv line %d: value %q: %v", r.Line, r.Value, err)
		return
	}
	got, ok := dlEnums[r.Field]
	switch {
	case !ok:
		t.Errorf("tsv line %d: %s has no Go constant", r.Line, r.Field)
	case got.v != want:
		t.Errorf("%s = %d in Go, C says %d (tsv line %d)", r.Field, got.v, want, r.Line)
	case got.size != r.Size:
		t.Errorf("sizeof(%s) = %d in Go's view, C says %d (tsv line %d)", r.Field, got.size, r.Size, r.Line)
	}
}
