// Package bench holds the ADBC performance comparisons: drivermgr against
// each database's own Go client. It is its own module so that pgx,
// duckdb-go and modernc.org/sqlite stay out of every other go.mod.
package bench
