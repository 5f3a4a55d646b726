package cabi

// ADBC versions, as AdbcDriverInitFunc takes them.
const (
	Version100 = 1000000 // ADBC_VERSION_1_0_0
	Version110 = 1001000 // ADBC_VERSION_1_1_0
)

// ErrorVendorCodePrivateData is AdbcError.vendor_code's value
// (ADBC_ERROR_VENDOR_CODE_PRIVATE_DATA, INT32_MIN) that asks a 1.1 driver
// for error details: they are then behind private_data, read through
// Driver.ErrorGetDetail.
const ErrorVendorCodePrivateData = -1 << 31

// Error is struct AdbcError.
type Error struct {
	Message       uintptr // char*, NUL-terminated; freed by Release
	VendorCode    int32
	SQLState      [5]byte
	Release       uintptr // void (*)(struct AdbcError*); may be NULL
	PrivateData   uintptr // 1.1
	PrivateDriver uintptr // struct AdbcDriver*, 1.1
}

// ErrorDetail is struct AdbcErrorDetail, which ErrorGetDetail returns by
// value.
type ErrorDetail struct {
	Key         uintptr // const char*
	Value       uintptr // const uint8_t*
	ValueLength uintptr // size_t
}

// Handle is struct AdbcDatabase, AdbcConnection and AdbcStatement: the
// same two pointers each.
type Handle struct {
	PrivateData   uintptr
	PrivateDriver uintptr // struct AdbcDriver*, set by the driver manager
}

// Partitions is struct AdbcPartitions.
type Partitions struct {
	NumPartitions    uintptr // size_t
	Partitions       uintptr // const uint8_t**
	PartitionLengths uintptr // const size_t*
	PrivateData      uintptr
	Release          uintptr // void (*)(struct AdbcPartitions*)
}

// Driver is struct AdbcDriver: the driver's function table, filled by its
// entry point. Size100 bytes of it are ADBC 1.0.0's; a driver initialized
// at 1.0.0 leaves the rest alone.
type Driver struct {
	PrivateData    uintptr
	PrivateManager uintptr
	Release        uintptr // may be NULL

	DatabaseInit      uintptr
	DatabaseNew       uintptr
	DatabaseSetOption uintptr
	DatabaseRelease   uintptr

	ConnectionCommit         uintptr
	ConnectionGetInfo        uintptr
	ConnectionGetObjects     uintptr
	ConnectionGetTableSchema uintptr
	ConnectionGetTableTypes  uintptr
	ConnectionInit           uintptr
	ConnectionNew            uintptr
	ConnectionSetOption      uintptr
	ConnectionReadPartition  uintptr
	ConnectionRelease        uintptr
	ConnectionRollback       uintptr

	StatementBind               uintptr
	StatementBindStream         uintptr
	StatementExecuteQuery       uintptr
	StatementExecutePartitions  uintptr
	StatementGetParameterSchema uintptr
	StatementNew                uintptr
	StatementPrepare            uintptr
	StatementRelease            uintptr
	StatementSetOption          uintptr
	StatementSetSqlQuery        uintptr
	StatementSetSubstraitPlan   uintptr

	// ADBC 1.1.0.
	ErrorGetDetailCount  uintptr
	ErrorGetDetail       uintptr
	ErrorFromArrayStream uintptr

	DatabaseGetOption       uintptr
	DatabaseGetOptionBytes  uintptr
	DatabaseGetOptionDouble uintptr
	DatabaseGetOptionInt    uintptr
	DatabaseSetOptionBytes  uintptr
	DatabaseSetOptionDouble uintptr
	DatabaseSetOptionInt    uintptr

	ConnectionCancel            uintptr
	ConnectionGetOption         uintptr
	ConnectionGetOptionBytes    uintptr
	ConnectionGetOptionDouble   uintptr
	ConnectionGetOptionInt      uintptr
	ConnectionGetStatistics     uintptr
	ConnectionGetStatisticNames uintptr
	ConnectionSetOptionBytes    uintptr
	ConnectionSetOptionDouble   uintptr
	ConnectionSetOptionInt      uintptr

	StatementCancel          uintptr
	StatementExecuteSchema   uintptr
	StatementGetOption       uintptr
	StatementGetOptionBytes  uintptr
	StatementGetOptionDouble uintptr
	StatementGetOptionInt    uintptr
	StatementSetOptionBytes  uintptr
	StatementSetOptionDouble uintptr
	StatementSetOptionInt    uintptr
}

// Size100 is the size of ADBC 1.0.0's part of Driver: 29 pointers.
const Size100 = 29 * ptrSize

const ptrSize = 4 << (^uintptr(0) >> 63)
