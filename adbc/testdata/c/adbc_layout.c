/* adbc_layout.c: the offsets and sizes of ADBC's C structs, as the C
 * compiler lays them out from adbc.h (ADBC 1.1, ../shared/adbc/include),
 * for internal/cabi's layout test: layout(name) answers "Struct.GoField"
 * or "Struct" (its size), or (size_t)-1 for a name it does not know. */
#include <stddef.h>
#include <string.h>

/* adbc.h's ADBC_EXPORT empty: mingw-w64 warns of dllexport or dllimport on
 * its structs, and the functions exported here say so themselves (EXPORT). */
#define ADBC_EXPORT
#include "adbc.h"

#ifdef _WIN32
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif

#define F(s, go, c) {#s "." #go, offsetof(struct s, c)},
#define S(s) {#s, sizeof(struct s)},

static const struct {
	const char *name;
	size_t value;
} table[] = {
	S(AdbcError)
	F(AdbcError, Message, message)
	F(AdbcError, VendorCode, vendor_code)
	F(AdbcError, SQLState, sqlstate)
	F(AdbcError, Release, release)
	F(AdbcError, PrivateData, private_data)
	F(AdbcError, PrivateDriver, private_driver)
	S(AdbcErrorDetail)
	F(AdbcErrorDetail, Key, key)
	F(AdbcErrorDetail, Value, value)
	F(AdbcErrorDetail, ValueLength, value_length)
	S(AdbcDatabase)
	F(AdbcDatabase, PrivateData, private_data)
	F(AdbcDatabase, PrivateDriver, private_driver)
	S(AdbcConnection)
	S(AdbcStatement)
	S(AdbcPartitions)
	F(AdbcPartitions, NumPartitions, num_partitions)
	F(AdbcPartitions, Partitions, partitions)
	F(AdbcPartitions, PartitionLengths, partition_lengths)
	F(AdbcPartitions, PrivateData, private_data)
	F(AdbcPartitions, Release, release)
	S(AdbcDriver)
	F(AdbcDriver, PrivateData, private_data)
	F(AdbcDriver, PrivateManager, private_manager)
	F(AdbcDriver, Release, release)
	F(AdbcDriver, DatabaseInit, DatabaseInit)
	F(AdbcDriver, DatabaseNew, DatabaseNew)
	F(AdbcDriver, DatabaseSetOption, DatabaseSetOption)
	F(AdbcDriver, DatabaseRelease, DatabaseRelease)
	F(AdbcDriver, ConnectionCommit, ConnectionCommit)
	F(AdbcDriver, ConnectionGetInfo, ConnectionGetInfo)
	F(AdbcDriver, ConnectionGetObjects, ConnectionGetObjects)
	F(AdbcDriver, ConnectionGetTableSchema, ConnectionGetTableSchema)
	F(AdbcDriver, ConnectionGetTableTypes, ConnectionGetTableTypes)
	F(AdbcDriver, ConnectionInit, ConnectionInit)
	F(AdbcDriver, ConnectionNew, ConnectionNew)
	F(AdbcDriver, ConnectionSetOption, ConnectionSetOption)
	F(AdbcDriver, ConnectionReadPartition, ConnectionReadPartition)
	F(AdbcDriver, ConnectionRelease, ConnectionRelease)
	F(AdbcDriver, ConnectionRollback, ConnectionRollback)
	F(AdbcDriver, StatementBind, StatementBind)
	F(AdbcDriver, StatementBindStream, StatementBindStream)
	F(AdbcDriver, StatementExecuteQuery, StatementExecuteQuery)
	F(AdbcDriver, StatementExecutePartitions, StatementExecutePartitions)
	F(AdbcDriver, StatementGetParameterSchema, StatementGetParameterSchema)
	F(AdbcDriver, StatementNew, StatementNew)
	F(AdbcDriver, StatementPrepare, StatementPrepare)
	F(AdbcDriver, StatementRelease, StatementRelease)
	F(AdbcDriver, StatementSetOption, StatementSetOption)
	F(AdbcDriver, StatementSetSqlQuery, StatementSetSqlQuery)
	F(AdbcDriver, StatementSetSubstraitPlan, StatementSetSubstraitPlan)
	F(AdbcDriver, ErrorGetDetailCount, ErrorGetDetailCount)
	F(AdbcDriver, ErrorGetDetail, ErrorGetDetail)
	F(AdbcDriver, ErrorFromArrayStream, ErrorFromArrayStream)
	F(AdbcDriver, DatabaseGetOption, DatabaseGetOption)
	F(AdbcDriver, DatabaseGetOptionBytes, DatabaseGetOptionBytes)
	F(AdbcDriver, DatabaseGetOptionDouble, DatabaseGetOptionDouble)
	F(AdbcDriver, DatabaseGetOptionInt, DatabaseGetOptionInt)
	F(AdbcDriver, DatabaseSetOptionBytes, DatabaseSetOptionBytes)
	F(AdbcDriver, DatabaseSetOptionDouble, DatabaseSetOptionDouble)
	F(AdbcDriver, DatabaseSetOptionInt, DatabaseSetOptionInt)
	F(AdbcDriver, ConnectionCancel, ConnectionCancel)
	F(AdbcDriver, ConnectionGetOption, ConnectionGetOption)
	F(AdbcDriver, ConnectionGetOptionBytes, ConnectionGetOptionBytes)
	F(AdbcDriver, ConnectionGetOptionDouble, ConnectionGetOptionDouble)
	F(AdbcDriver, ConnectionGetOptionInt, ConnectionGetOptionInt)
	F(AdbcDriver, ConnectionGetStatistics, ConnectionGetStatistics)
	F(AdbcDriver, ConnectionGetStatisticNames, ConnectionGetStatisticNames)
	F(AdbcDriver, ConnectionSetOptionBytes, ConnectionSetOptionBytes)
	F(AdbcDriver, ConnectionSetOptionDouble, ConnectionSetOptionDouble)
	F(AdbcDriver, ConnectionSetOptionInt, ConnectionSetOptionInt)
	F(AdbcDriver, StatementCancel, StatementCancel)
	F(AdbcDriver, StatementExecuteSchema, StatementExecuteSchema)
	F(AdbcDriver, StatementGetOption, StatementGetOption)
	F(AdbcDriver, StatementGetOptionBytes, StatementGetOptionBytes)
	F(AdbcDriver, StatementGetOptionDouble, StatementGetOptionDouble)
	F(AdbcDriver, StatementGetOptionInt, StatementGetOptionInt)
	F(AdbcDriver, StatementSetOptionBytes, StatementSetOptionBytes)
	F(AdbcDriver, StatementSetOptionDouble, StatementSetOptionDouble)
	F(AdbcDriver, StatementSetOptionInt, StatementSetOptionInt)
};

EXPORT size_t layout(const char *name)
{
	for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
		if (strcmp(table[i].name, name) == 0)
			return table[i].value;
	return (size_t)-1;
}
