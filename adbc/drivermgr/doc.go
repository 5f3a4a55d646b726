// Package drivermgr loads ADBC drivers written in C, C++ or Rust (any
// shared library with an AdbcDriverInit-style entry point) and drives them
// through arrow-adbc's interfaces (github.com/apache/arrow-adbc/go/adbc),
// without cgo: a drop-in for arrow-adbc's drivermgr package, which needs
// cgo and a C++ toolchain. Its databases, connections and statements are
// adbc.Database, adbc.Connection and adbc.Statement values (with
// GetSetOptions, PostInitOptions, ConnectionGetStatistics and
// StatementExecuteSchema; adbc.AsDatabaseContext and its kin give the
// context forms); connections and statements are Cancellers too. Their
// errors wrap arrow-adbc's adbc.Error (errors.As finds it) and match
// adbcerr's sentinels by status (errors.Is).
//
// A Driver's NewDatabase takes the driver manager's options ("driver": a
// library path, a library name, or a manifest's path or name searched as
// the ADBC spec says; "entrypoint"; LoadFlagsOptionKey;
// "additional_manifest_search_path_list") and passes every other option to
// the driver. A "driver" or "uri" with a colon is split as Arrow's C driver
// manager splits it: "sqlite:file::memory:" is driver sqlite with uri
// "file::memory:", "postgresql://host/db" driver postgresql with that whole
// uri; without "driver", the "uri" names it so (or is the driver's name,
// without a colon).
// A connection profile (OptionProfile, or a "profile://NAME" uri or
// driver) supplies a driver and options not set otherwise, as the ADBC
// spec's connection_profiles describes.
//
// Unlike the C driver manager, every object here is safe for concurrent
// use: the calls of one connection (its statements' and result readers'
// included) are serialized, as ADBC drivers expect, while Cancel reaches
// the driver during a call. Closing an object first closes what of it is
// still open (a database its connections, a connection its result streams
// and statements), so the driver never sees a release out of order; the Go
// values closed so then answer adbcerr.InvalidState.
package drivermgr
