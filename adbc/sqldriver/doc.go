// Package sqldriver makes any ADBC driver a database/sql driver, so that
// code written for database/sql can use an ADBC database as it would any
// other.
//
// It mirrors github.com/apache/arrow-adbc/go/adbc/sqldriver (release 24):
// the same exported names and signatures (Driver, Driver.Open,
// Driver.OpenConnector, SetOptionsInCtx, GetOptionsFromCtx), the same data
// source names and the same conversions, so that a program written against
// that package builds against this one once its import paths change (this
// package's adbc and drivermgr for theirs). Where this package does more, or
// differently, the section "Beyond arrow-adbc" says so.
//
// # Registering and opening
//
// Register a Driver over an adbc.Driver under a name, and open databases
// by that name:
//
//	sql.Register("adbc", sqldriver.Driver{Driver: drivermgr.Driver{}})
//	db, err := sql.Open("adbc", "driver=/usr/lib/libadbc_driver_sqlite.so;uri=file:data.db")
//
// The data source name is key=value pairs separated by semicolons; spaces
// around keys and values are trimmed, and a later key overrides an
// earlier one. All of them go to the adbc.Driver's NewDatabase: with
// drivermgr.Driver, "driver" names the driver's library (or manifest),
// "entrypoint" its init function where it is not AdbcDriverInit,
// "profile" a connection profile (a driver and its options, kept out of
// the program: "profile=warehouse"), and everything else ("uri",
// "username", "password", driver options) goes to the driver. A value cannot hold a semicolon; for such values, call
// Driver.OpenConnector (same syntax) or build the database yourself.
//
// sql.Open parses the name and creates the ADBC database at once (database/sql
// calls OpenConnector); each connection of the sql.DB's pool is an ADBC
// connection of that database, opened when the pool needs one. The database
// closes when sql.DB.Close has been called and its last connection has
// closed (database/sql closes a connection that is still in use, by an
// unfinished transaction or open rows, when it is given back).
//
// # Statements and parameters
//
// DB.Query (and Conn.Query, Tx.Query) runs on a new ADBC statement, closed
// with the rows. DB.Exec and DB.Prepare prepare a statement (Prepare) and
// ask for its parameter schema (GetParameterSchema); database/sql then
// checks the number of arguments against it, when the driver can tell.
// A prepared statement is reused for each execution.
//
// Arguments are bound with Statement.Bind as a record batch of one row,
// one column per argument, in order; a named argument takes the column of
// the parameter of that name where the parameter schema has names. The
// columns are named as in arrow-adbc: by the argument's name, or else its
// ordinal. Their Go types give the column types:
//
//	bool                        bool
//	int8 ... int64, uint8 ...   int8 ... int64, uint8 ... uint64
//	float32, float64            float32, float64
//	string                      utf8 (large_utf8, utf8_view for such a parameter)
//	[]byte                      binary (large_binary, binary_view for such a parameter)
//	time.Time                   timestamp[us, tz=UTC]; for a parameter of a
//	                            date, time or timestamp type, that type
//	arrow.Date32, arrow.Date64  date32, date64
//	arrow.Time32, arrow.Time64,
//	arrow.Timestamp, decimal128.Num,
//	decimal256.Num              the parameter's type (which the driver must report)
//	nil                         null (of the parameter's type, where known)
//
// database/sql converts other values before they get here (see
// driver.DefaultParameterConverter): int and named integer types to int64,
// driver.Valuer (sql.NullString, ...) to what Value returns, pointers to
// what they point to. For DB.Query, which prepares nothing, every argument
// goes through that conversion (so an int8 binds as int64); for a prepared
// statement, the types above bind as they are. Where the driver reports a
// parameter's type, a value of the matching Go type binds as it is, and a
// value database/sql can convert to it without loss (an int for an int32)
// is converted; anything else fails with StatusInvalidArgument.
//
// # Results
//
// Rows read the statement's Arrow stream one batch at a time. Values come
// out as these Go types (NULL is nil; scan into sql.Null* or pointers to
// keep them apart from zero values):
//
//	bool, int8 ... uint64,
//	float16, float32, float64    bool, int8 ... uint64, float16.Num, float32, float64
//	utf8, large_utf8, utf8_view  string
//	binary, large_binary,
//	binary_view,
//	fixed_size_binary            []byte
//	date32, date64, time32,
//	time64, timestamp            time.Time in UTC (a date at midnight, a time of day
//	                             on 1970-01-01; a timestamp's zone is not applied)
//	duration                     time.Duration
//	decimal128, decimal256       decimal128.Num, decimal256.Num
//	intervals                    arrow.MonthInterval, arrow.DayTimeInterval,
//	                             arrow.MonthDayNanoInterval
//	null                         nil
//	dictionary                   the value's type
//	union                        the value's type in its child
//	anything else                what arreflect.AtAny makes of it (lists as
//	                             slices, structs as structs...)
//
// database/sql's Scan converts these further as usual: into *int64,
// *string, *float64, *bool, *[]byte, *time.Time, *any, sql.Null*, and so
// on. Strings and byte slices are copies: the Arrow batch beneath is
// released as soon as the rows move past it.
//
// sql.ColumnType reports the field's name; DatabaseTypeName is its Arrow
// type as a string ("int64", "utf8", "timestamp[us, tz=UTC]", "decimal(9,
// 2)"); Nullable the field's nullability; DecimalSize a decimal's
// precision and scale; ScanType the Go type of the values above.
//
// DB.Exec returns the row count the driver reports as RowsAffected (-1
// where it does not know); LastInsertId fails, as ADBC has none. Rows
// closed before their end (QueryRow reads one) are read on for a few
// batches, and past that their connection is discarded: a driver may
// finish its work on the server only at a result's end (PostgreSQL's
// commits there the transaction it opened for a query with a timestamptz
// parameter), and a connection left midway would run the next statements
// in that transaction. A string parameter must be UTF-8 (Arrow's strings
// are); bytes go as []byte. An empty BLOB scans as an empty []byte, NULL
// as nil.
//
// # Transactions
//
// DB.BeginTx turns the connection's autocommit option off
// (adbc.OptionKeyAutoCommit), then sets the isolation level
// (adbc.OptionKeyIsolationLevel; sql.LevelDefault as
// adbc.LevelDefault) and, for TxOptions.ReadOnly, adbc.OptionKeyReadOnly;
// a driver that answers StatusNotImplemented to either is taken to have
// its own default. Tx.Commit and Tx.Rollback call the connection's Commit
// and Rollback, turn autocommit back on, and set back what the transaction
// set (the read-only option; the isolation level, to adbc.LevelDefault: a
// driver may set it for the session). sql.LevelWriteCommitted, which
// ADBC lacks, and a connection that takes no options after it is made,
// fail with StatusNotImplemented.
//
// # Contexts
//
// The context of a call reaches the ADBC call beneath it (Open, Prepare,
// Bind, ExecuteQuery, ExecuteUpdate, Commit, GetInfo). Over drivermgr a
// query's deadline is always kept: the driver's StatementCancel where it
// has one, else the call is abandoned at its deadline (drivermgr's
// ErrAbandoned, adbcerr.Abandoned), and the connection, which answers
// nothing else until the driver returns, leaves the pool; over another
// driver, whether a running call stops is its business.
//
// # Faults
//
// A connection whose call fails with adbc.StatusIO (a server killed or
// restarted, a connection lost) is bad: database/sql closes it instead of
// reusing it. A connection idle in the pool for more than a second is
// pinged (GetInfo of the vendor's version, a round trip for PostgreSQL)
// before its next use, so that after a server restart the next query runs
// on a new connection instead of failing on a dead one. database/sql itself fails a call whose context is done before
// it starts, and closes rows whose context ends
// while they are read, which releases the stream.
//
// # Errors
//
// Errors of the ADBC driver come back as the driver reported them, so
//
//	var e adbc.Error
//	if errors.As(err, &e) { ... e.Code, e.SqlState, e.VendorCode ... }
//
// works on what database/sql returns (it wraps argument conversion errors
// with its own message; errors.As sees through it), and errors.Is matches
// them by status (adbcerr.NotFound, ...), whatever the driver: every error
// of a driver that carries an adbc.Error (a value or a pointer) is made
// matchable (adbcerr.Matchable). This package's own errors are adbc.Error
// too: StatusInvalidArgument for a malformed data
// source name or an argument that does not fit its parameter,
// StatusNotImplemented for what ADBC or the driver cannot do.
//
// # The ADBC connection beneath
//
// sql.Conn.Raw hands its function this package's driver.Conn, which
// implements Conn: its ADBCConnection method returns the adbc.Connection,
// for what database/sql has no words for (Arrow streams, bulk ingestion,
// metadata, driver options):
//
//	conn, _ := db.Conn(ctx)
//	defer conn.Close()
//	err := conn.Raw(func(dc any) error {
//		st, err := dc.(sqldriver.Conn).ADBCConnection().NewStatement()
//		if err != nil {
//			return err
//		}
//		defer st.Close()
//		if err := st.SetSqlQuery("SELECT * FROM t"); err != nil {
//			return err
//		}
//		rdr, _, err := st.ExecuteQuery(ctx)
//		if err != nil {
//			return err
//		}
//		defer rdr.Release()
//		for rdr.Next() {
//			rec := rdr.RecordBatch() // valid until the next call to Next
//			...
//		}
//		return rdr.Err()
//	})
//
// Use the connection only inside the function, and release what it returns
// there.
//
// # Beyond arrow-adbc
//
// Additions:
//   - the interface Conn, through which sql.Conn.Raw reaches the
//     adbc.Connection (arrow-adbc's driver.Conn has the exported field Conn,
//     which this package's has too, but neither method nor exported type);
//   - connections implement driver.Pinger: Ping asks the driver for
//     GetInfo(InfoVendorVersion), passes where the driver lacks GetInfo, and
//     on failure marks the connection bad; driver.SessionResetter and
//     driver.Validator keep a bad or closed connection out of the pool
//     (arrow-adbc's Ping only checks that a connection opens): a connection
//     is bad once a call of it fails with adbc.StatusIO (the database out of
//     reach: a server killed or restarted), and one idle for more than a
//     second is pinged before it is reused, as pgx does, so that the pool
//     heals after a server restart instead of failing a query on each dead
//     connection;
//   - rows implement driver.RowsColumnTypeLength (math.MaxInt64 for
//     variable-length string and binary columns, the width of a
//     fixed-size binary) and report the precision and scale of decimal32
//     and decimal64 columns too;
//   - nil arguments bind as nulls, and time.Time arguments as
//     timestamp[us, tz=UTC] where the driver gives no type (arrow-adbc fails
//     for both); arguments bind with the parameter types the driver reports
//     (arrow-adbc computes them but binds by Go type alone, so that
//     time.Time, arrow.Timestamp, large_utf8 never bind there), and
//     decimal128.Num, decimal256.Num and time.Time for time32/time64
//     parameters bind;
//   - a named argument (sql.Named("a", v)) finds its parameter by the name
//     alone or with one of the prefixes ":", "@", "$" (SQLite reports ":a"
//     for :a, and database/sql's names cannot hold the prefix), where
//     arrow-adbc matches the exact name only;
//   - fixed_size_binary, utf8_view, binary_view, extension (as their
//     storage) and dictionary values are read directly rather than through
//     arreflect (which fails on some of them), and a column of the null
//     type reads as NULLs (arreflect fails on it); ColumnTypeScanType reports a
//     Go type for every column (arrow-adbc's reports nil for types it does
//     not list, large_utf8 among them).
//
// Differences, each fixing what arrow-adbc gets wrong:
//   - for a prepared statement whose parameters are of unknown type (what
//     SQLite reports), values other than the Go types above go through
//     database/sql's conversion; arrow-adbc passes them unconverted and
//     fails on every int, nil and driver.Valuer. Where the driver reports
//     types, arrow-adbc also fails on values that do not have the exact Go
//     type (an int for an int64);
//   - closing the rows of a prepared statement leaves the statement open
//     for its next execution (arrow-adbc closes it, so that a prepared
//     query runs once); a prepared statement executed again while its rows
//     are open runs on a new statement rather than invalidating them;
//   - strings and byte slices in rows are copies (arrow-adbc release 24
//     returns views of the Arrow memory, which the driver frees under
//     them; arrow-adbc has since fixed that the same way);
//   - a union value is read at its offset in the child (arrow-adbc reads
//     a dense union's child at the row's index), and a null in a union's
//     child is nil;
//   - BeginTx checks the isolation level before it turns autocommit off,
//     and undoes what it did when a later step fails; a failed Commit
//     rolls back; the end of a transaction clears the read-only option the
//     transaction set; a connection that cannot be brought back to
//     autocommit is marked bad and leaves the pool (arrow-adbc leaves such
//     connections in the pool with autocommit off, or read-only);
//     Rollback runs even when the context of BeginTx is done;
//   - the database closes after the last of its connections (arrow-adbc
//     closes it in sql.DB.Close, under connections database/sql has not
//     closed yet because they are in use), and the connection
//     Driver.Open returns closes, when it is closed, the database Open made
//     for it (arrow-adbc's leaves it open);
//   - the deprecated driver methods Begin, Conn.Query, Stmt.Exec and
//     Stmt.Query work (arrow-adbc's fail, or panic on an argument);
//   - Rows.Next fails with the context's error once the query's context
//     is done (database/sql would also close the rows, but may return a
//     row first);
//   - this package's own errors are adbc.Error values, which
//     errors.As(err, &adbc.Error{}) finds (arrow-adbc returns *adbc.Error
//     for some, and plain errors for unsupported argument types);
//   - an empty segment of a data source name (a trailing ";") is skipped
//     rather than an error.
package sqldriver
