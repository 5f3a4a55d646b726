// Package adbc holds the Go API of Arrow Database Connectivity (ADBC): the
// interfaces a driver implements (Driver, Database, Connection, Statement and
// their optional and context-aware variants), the status codes and the Error
// type drivers report failures with, the standard option keys, info codes and
// statistic keys, and the Arrow schemas of the metadata results.
//
// It mirrors the exported API of github.com/apache/arrow-adbc/go/adbc: a
// program written against that package builds against this one once its
// import path changes, and behaves the same. The package does no I/O and
// loads nothing; drivers and driver managers implement these interfaces.
//
// # Context-aware interfaces
//
// DatabaseWithContext, ConnectionWithContext and StatementWithContext take a
// context.Context in every method. AsDatabaseContext, AsConnectionContext and
// AsStatementContext wrap the plain interfaces to satisfy them; a context
// reaches the wrapped object only where its own method takes one.
//
// # Beyond arrow-adbc
//
// Each non-OK Status has a sentinel error (ErrUnknown, ErrNotImplemented,
// ErrNotFound, ...), and Error has an Is method, so that
//
//	errors.Is(err, adbc.ErrNotFound)
//
// reports whether err is, or wraps, an Error whose Code is StatusNotFound.
// errors.As(err, &adbc.Error{}) works as it does with arrow-adbc.
//
// Two exported items of arrow-adbc are left out because their signatures
// need packages outside arrow-go and the standard library:
// ProtobufErrorDetail (google.golang.org/protobuf) and OTelTracing
// (go.opentelemetry.io/otel).
package adbc
