package sqldriver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/adbc/adbcerr"
)

// Conn is the interface of the driver.Conn values this package makes. It
// is how code reaches the ADBC connection beneath a database/sql one:
//
//	err := sqlConn.Raw(func(dc any) error {
//		cn := dc.(sqldriver.Conn).ADBCConnection()
//		st, err := cn.NewStatement()
//		...
//	})
//
// The connection is the caller's for as long as the function runs, and no
// longer: read any stream it returns to the end (or release it) before the
// function returns. Leave its autocommit, isolation and read-only options
// as they were, or return driver.ErrBadConn from the function, so that
// database/sql closes the connection rather than reuse it.
//
// Conn is not part of arrow-adbc's sqldriver (its driver.Conn has an
// exported field Conn of type adbc.Connection, which this package's has
// too, but no method).
type Conn interface {
	driver.Conn
	// ADBCConnection returns the ADBC connection.
	ADBCConnection() adbc.Connection
}

// conn is one database/sql connection: an ADBC connection.
type conn struct {
	// Conn is the ADBC connection (exported, as in arrow-adbc).
	Conn adbc.Connection
	// bad is set when the connection may no longer be used: closed, failed
	// a Ping, or left in a transaction state it could not undo.
	bad       atomic.Bool
	closed    atomic.Bool
	pooled    atomic.Int64 // when it went back to the pool (IsValid): sinceStart
	connector *connector
}

var (
	_ Conn                      = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
)

// ADBCConnection returns the ADBC connection, c.Conn.
func (c *conn) ADBCConnection() adbc.Connection { return c.Conn }

// Close closes the ADBC connection, and then the database if it was the
// last connection of a closed sql.DB (or Driver.Open's).
func (c *conn) Close() (err error) {
	defer matchable(&err)
	c.bad.Store(true)
	if !c.closed.CompareAndSwap(false, true) {
		return nil
	}
	return also(c.Conn.Close(), c.connector.release())
}

// Ping asks the driver for its vendor's version (GetInfo), a round trip to
// the database for drivers that ask the server (PostgreSQL's; its vendor
// name it knows without one). A driver without GetInfo passes. A failure
// marks the connection bad, so that database/sql discards it.
func (c *conn) Ping(ctx context.Context) (err error) {
	defer c.outcome(&err)
	if c.bad.Load() {
		return driver.ErrBadConn
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rdr, err := c.Conn.GetInfo(ctx, []adbc.InfoCode{adbc.InfoVendorVersion})
	if err != nil {
		if isNotImplemented(err) {
			return nil
		}
		c.bad.Store(true)
		return err
	}
	for rdr.Next() {
	}
	err = rdr.Err()
	rdr.Release()
	if err != nil {
		c.bad.Store(true)
	}
	return err
}

// ResetSession tells database/sql, before it reuses the connection,
// whether it still can. A connection idle in the pool for more than
// idleCheck is pinged first (as pgx does), within the caller's context: a
// server restarted meanwhile ended it, and nothing else would tell until
// the next query failed. A failed ping makes it bad (driver.ErrBadConn:
// nothing ran on it, so database/sql takes another).
func (c *conn) ResetSession(ctx context.Context) error {
	if c.bad.Load() {
		return driver.ErrBadConn
	}
	if sinceStart()-time.Duration(c.pooled.Load()) >= idleCheck {
		if err := c.Ping(ctx); err != nil {
			c.bad.Store(true)
			return driver.ErrBadConn
		}
	}
	return nil
}

// idleCheck is how long a connection may sit in the pool before its next
// user has it pinged (ResetSession); tests shorten it (0: always).
var idleCheck = time.Second

// sinceStart is the monotonic time since the package started: idle times
// neither follow the wall clock's jumps nor depend on its resolution.
func sinceStart() time.Duration { return time.Since(start) }

var start = time.Now()

// IsValid tells database/sql, as it returns the connection to its pool,
// whether to keep it; the connection's idle time counts from now.
func (c *conn) IsValid() bool {
	c.pooled.Store(int64(sinceStart()))
	return !c.bad.Load()
}

// outcome makes *err, as it leaves a method database/sql calls, matchable
// (matchable), and marks the connection bad when the error says the
// database is out of reach (adbc.StatusIO: a server gone, a connection
// lost) or a call was abandoned when its context ended (adbcerr.Abandoned: the
// connection answers nothing else until the driver returns), so that
// database/sql discards it instead of handing it to the next query.
func (c *conn) outcome(err *error) {
	matchable(err)
	if *err != nil && (errors.Is(*err, adbcerr.IO) || errors.Is(*err, adbcerr.Abandoned)) {
		c.bad.Store(true)
	}
}

// Query runs query with positional arguments.
//
// Deprecated: database/sql calls QueryContext.
func (c *conn) Query(query string, args []driver.Value) (driver.Rows, error) {
	return c.QueryContext(context.Background(), query, namedValues(args))
}

// QueryContext runs query on a new ADBC statement, which the rows close.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (_ driver.Rows, err error) {
	defer c.outcome(&err)
	st, err := c.newStatement(query)
	if err != nil {
		return nil, err
	}
	return (&stmt{conn: c, sql: query}).query(ctx, st, true, args)
}

// newStatement makes an ADBC statement for query.
func (c *conn) newStatement(query string) (adbc.Statement, error) {
	st, err := c.Conn.NewStatement()
	if err != nil {
		return nil, err
	}
	if err := st.SetSqlQuery(query); err != nil {
		return nil, also(err, st.Close())
	}
	return st, nil
}

// Prepare prepares query.
func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// PrepareContext prepares query on a new ADBC statement and asks the
// driver for its parameter schema (a driver that cannot tell leaves the
// count and types of the arguments unchecked).
func (c *conn) PrepareContext(ctx context.Context, query string) (_ driver.Stmt, err error) {
	defer c.outcome(&err)
	st, err := c.newStatement(query)
	if err != nil {
		return nil, err
	}
	if err := st.Prepare(ctx); err != nil {
		return nil, also(err, st.Close())
	}
	schema, err := st.GetParameterSchema()
	if err != nil {
		if ae, ok := adbcerr.From(err); ok && ae.Code != adbc.StatusNotImplemented {
			return nil, also(err, st.Close())
		}
		schema = nil
	}
	return &stmt{conn: c, sql: query, st: st, paramSchema: schema}, nil
}

// Begin starts a transaction at the default isolation level.
//
// Deprecated: database/sql calls BeginTx.
func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// isolationLevel maps database/sql's isolation levels onto ADBC's; ""
// where ADBC has none (sql.LevelWriteCommitted).
func isolationLevel(l sql.IsolationLevel) adbc.OptionIsolationLevel {
	switch l {
	case sql.LevelDefault:
		return adbc.LevelDefault
	case sql.LevelReadUncommitted:
		return adbc.LevelReadUncommitted
	case sql.LevelReadCommitted:
		return adbc.LevelReadCommitted
	case sql.LevelRepeatableRead:
		return adbc.LevelRepeatableRead
	case sql.LevelSnapshot:
		return adbc.LevelSnapshot
	case sql.LevelSerializable:
		return adbc.LevelSerializable
	case sql.LevelLinearizable:
		return adbc.LevelLinearizable
	}
	return ""
}

// BeginTx turns the connection's autocommit off, then sets the isolation
// level and, for a read-only transaction, the read-only option (either
// ignored where the driver answers StatusNotImplemented). A connection
// that cannot take options after it is made (no adbc.PostInitOptions), and
// an isolation level ADBC lacks, fail with StatusNotImplemented.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (_ driver.Tx, err error) {
	defer c.outcome(&err)
	po, ok := c.Conn.(adbc.PostInitOptions)
	if !ok {
		return nil, adbcerr.New(adbc.StatusNotImplemented, "transactions need a connection that takes options after it is made (adbc.PostInitOptions)")
	}
	level := isolationLevel(sql.IsolationLevel(opts.Isolation))
	if level == "" {
		return nil, adbcerr.New(adbc.StatusNotImplemented, "ADBC has no isolation level "+sql.IsolationLevel(opts.Isolation).String())
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := po.SetOption(adbc.OptionKeyAutoCommit, adbc.OptionValueDisabled); err != nil {
		return nil, err
	}
	t := &tx{ctx: ctx, c: c, po: po}
	if err := setOptional(po, adbc.OptionKeyIsolationLevel, string(level)); err != nil {
		return nil, t.abort(err)
	}
	t.isolated = level != adbc.LevelDefault
	if opts.ReadOnly {
		err := po.SetOption(adbc.OptionKeyReadOnly, adbc.OptionValueEnabled)
		switch {
		case err == nil:
			t.readOnly = true
		case !isNotImplemented(err):
			return nil, t.abort(err)
		}
	}
	return t, nil
}

// setOptional sets an option the driver may not know.
func setOptional(po adbc.PostInitOptions, key, value string) error {
	if err := po.SetOption(key, value); err != nil && !isNotImplemented(err) {
		return err
	}
	return nil
}

func isNotImplemented(err error) bool {
	ae, ok := adbcerr.From(err)
	return ok && ae.Code == adbc.StatusNotImplemented
}

// tx is a transaction: the connection with autocommit off.
type tx struct {
	ctx      context.Context
	c        *conn
	po       adbc.PostInitOptions
	readOnly bool // the read-only option was set, to be cleared at the end
	isolated bool // an isolation level was set, to be set back to the default at the end
}

// Commit commits, then turns autocommit back on. Should the commit fail,
// the transaction is rolled back, so that the connection returns to the
// pool in autocommit mode as database/sql expects.
func (t *tx) Commit() (err error) {
	defer t.c.outcome(&err)
	if err := t.c.Conn.Commit(t.ctx); err != nil {
		return t.abort(err)
	}
	return t.end()
}

// Rollback rolls back, then turns autocommit back on. It runs even when
// the transaction's context is done (database/sql rolls back for that
// reason).
func (t *tx) Rollback() (err error) {
	defer t.c.outcome(&err)
	if err := t.c.Conn.Rollback(context.WithoutCancel(t.ctx)); err != nil {
		t.c.bad.Store(true) // still in the transaction, which closing it ends
		return err
	}
	return t.end()
}

// abort rolls back after err and restores autocommit, and returns err.
func (t *tx) abort(err error) error {
	if rerr := t.c.Conn.Rollback(context.WithoutCancel(t.ctx)); rerr != nil {
		t.c.bad.Store(true)
		return err
	}
	if eerr := t.end(); eerr != nil {
		t.c.bad.Store(true)
	}
	return err
}

// end turns autocommit on again (which, with nothing pending, commits
// nothing) and clears the read-only option and the isolation level if the
// transaction set them. A
// failure leaves the connection in a state the next user would not
// expect: it is marked bad.
func (t *tx) end() error {
	err := t.po.SetOption(adbc.OptionKeyAutoCommit, adbc.OptionValueEnabled)
	if t.readOnly {
		if rerr := setOptional(t.po, adbc.OptionKeyReadOnly, adbc.OptionValueDisabled); rerr != nil && err == nil {
			err = rerr
		}
		t.readOnly = false
	}
	// PostgreSQL's driver sets the session's level: it would outlast the
	// transaction, in every later autocommit statement of the pool.
	if t.isolated {
		if rerr := setOptional(t.po, adbc.OptionKeyIsolationLevel, string(adbc.LevelDefault)); rerr != nil && err == nil {
			err = rerr
		}
		t.isolated = false
	}
	if err != nil {
		t.c.bad.Store(true)
	}
	return err
}

// namedValues numbers positional arguments from 1, as database/sql does.
func namedValues(args []driver.Value) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, v := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return nv
}

// also returns err, joined with cerr, the error of the cleanup after it,
// if there was one: a lone driver error stays itself.
func also(err, cerr error) error {
	if cerr == nil {
		return err
	}
	return errors.Join(err, cerr)
}
