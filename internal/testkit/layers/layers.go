// Package layers is the house written down as data: every package of the
// module in its layer, from the leaves up, and the rules its test keeps
// (layers_test.go): a package imports only packages of lower layers, or
// of its own where Same allows it; only internal/ffi imports purego; no
// production file imports the test kit (internal/testkit/...); examples
// import nothing internal. ARCHITECTURE.md's table of layers is drawn
// from Layers (go test ./internal/testkit/layers -update redraws it).
package layers

// A Layer is a group of packages (their paths in the module, "." for the
// root) that may import any package of a lower layer.
type Layer struct {
	Name     string
	Packages []string
	Owns     string // what the layer owns, for ARCHITECTURE.md
}

// Layers lists the module's production packages, lowest first. The test
// kit (internal/testkit/...) and the examples stand outside: they may
// import any package (examples nothing internal).
var Layers = []Layer{
	{"leaves", []string{"abi", "internal/errs", "internal/leak", "internal/identity", "internal/regular",
		"internal/hostwait", "internal/sample", "internal/gpurt/gpurtgen", "adbc/adbcerr", "adbc/internal/cabi", "adbc/internal/redact"},
		"the C structs as Go structs (layout only), the sentinel errors of every layer, live-object accounting, the identity short-circuit's switch, opening only regular files, context-bounded host waits, sample batches, the generator of the GPU runtimes' methods; ADBC's status sentinels, its C structs, masking of the credentials a user gave"},
	{"the C ABI", []string{"internal/ffi"},
		"the only code that calls purego: the callback table, the handle table, foreign calls, off-heap memory, library loading"},
	{"system", []string{"internal/sysmem", "clib"},
		"the memory available (per platform, through internal/ffi on Windows), which bounds any allocation sized by input; loading a C library for a program's own calls, as safely as the module loads its own"},
	{"device", []string{"device", "internal/cmeta"},
		"the Device interface, the CPU device, the registry; the C metadata encoding"},
	{"runtimes", []string{"internal/gpurt", "device/opencl"},
		"the table-driven CUDA/HIP binding (runtime and driver API); OpenCL"},
	{"vendors", []string{"device/cuda", "device/hip"},
		"one GPU vendor's runtime each, on internal/gpurt"},
	{"discovery", []string{"loader"},
		"which runtimes this machine has, why others do not, the default device"},
	{"bridge", []string{"."},
		"format strings, export and import of every arrow-go type, DeviceArray, validation, leak accounting"},
	{"interchange", []string{"stream", "async", "tensor"},
		"ArrowArrayStream and ArrowDeviceArrayStream, the async trio, the fixed-shape tensor type"},
	{"tensor layouts", []string{"internal/ndarray"},
		"strided layouts of tensors, their extents checked for overflow"},
	{"tensor interchange", []string{"dlpack", "cai"},
		"DLPack and the CUDA Array Interface"},
	{"compatibility and databases", []string{"cdata", "adbc/drivermgr", "adbc/sqldriver", "internal/ipcverify"},
		"arrow-go's arrow/cdata API; the ADBC driver manager; database/sql over any adbc.Driver; the Arrow IPC file verifier"},
	{"commands", []string{"cmd/cdevice", "adbc/cmd/adbcsql"},
		"what a user runs: flags and output"},
}

// Same lists the imports allowed within one layer: importer → imported.
var Same = map[string][]string{
	"adbc/internal/redact": {"adbc/adbcerr"}, // a masked error's adbc.Error, found as adbcerr finds it
}

// Debt lists imports that break a rule today, each with what must change:
// the test fails on any other, and on one of these once it is gone.
var Debt = map[string][]string{}

// TestKit is the prefix of the packages only tests import.
const TestKit = "internal/testkit/"
