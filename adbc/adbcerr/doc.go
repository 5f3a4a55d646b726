// Package adbcerr makes the errors of ADBC calls matchable by status with
// errors.Is. arrow-adbc's adbc.Error carries a Status but no Is method;
// every error drivermgr and sqldriver return wraps one in an error that
// matches the sentinel of its Status (ErrNotFound for StatusNotFound, and
// so on) and unwraps to the adbc.Error itself, so that
//
//	errors.Is(err, adbcerr.NotFound)
//	var e adbc.Error; errors.As(err, &e) // e.Code, e.SqlState, e.Details
//
// both work on what they return.
package adbcerr
