package sqldriver

import (
	"context"
	"database/sql/driver"
	"strings"
	"sync"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/adbc/adbcerr"
)

// Driver is a database/sql driver over an ADBC driver. Register it under a
// name of your choosing:
//
//	sql.Register("adbc", sqldriver.Driver{Driver: drivermgr.Driver{}})
//
// or hand its connector to sql.OpenDB directly.
type Driver struct {
	Driver adbc.Driver
}

var (
	_ driver.Driver        = Driver{}
	_ driver.DriverContext = Driver{}
)

// Open parses name (see OpenConnector), creates the database and opens one
// connection to it, which closes the database when it is closed.
// database/sql calls OpenConnector instead, once per sql.DB, and then opens
// connections through the connector.
func (d Driver) Open(name string) (_ driver.Conn, err error) {
	defer matchable(&err)
	c, err := d.OpenConnector(name)
	if err != nil {
		return nil, err
	}
	cn := c.(*connector)
	dc, err := cn.Connect(context.Background())
	// The database closes now if Connect failed, else with the connection.
	if cerr := cn.Close(); err != nil {
		return nil, also(err, cerr)
	}
	return dc, nil
}

// OpenConnector parses name, a data source name of key=value pairs
// separated by semicolons ("driver=/path/libx.so;uri=file:data.db"; spaces
// around keys and values are trimmed, a later key wins), and creates an
// ADBC database with those options through d.Driver.NewDatabase. The
// connector opens a connection of that database per database/sql
// connection, and closes the database when the sql.DB is closed.
func (d Driver) OpenConnector(name string) (_ driver.Connector, err error) {
	defer matchable(&err)
	opts, err := parseConnectStr(name)
	if err != nil {
		return nil, err
	}
	db, err := d.Driver.NewDatabase(opts)
	if err != nil {
		return nil, err
	}
	return &connector{db: db, drv: d.Driver}, nil
}

// parseConnectStr splits a data source name into options. Every segment
// must hold an "="; empty segments (a trailing ";") are skipped.
func parseConnectStr(name string) (map[string]string, error) {
	opts := make(map[string]string)
	for seg := range strings.SplitSeq(name, ";") {
		if strings.TrimSpace(seg) == "" {
			continue
		}
		k, v, ok := strings.Cut(seg, "=")
		if !ok {
			return nil, adbcerr.New(adbc.StatusInvalidArgument, "invalid format for connection string: want key=value pairs separated by ';'")
		}
		opts[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return opts, nil
}

// connector opens connections of one ADBC database, and closes the
// database once it is closed and so are all the connections.
type connector struct {
	db  adbc.Database
	drv adbc.Driver

	mu     sync.Mutex
	open   int  // connections opened (or opening) and not yet closed
	closed bool // Close was called
}

var _ driver.Connector = (*connector)(nil)

// Connect opens a connection of the database.
func (c *connector) Connect(ctx context.Context) (_ driver.Conn, err error) {
	defer matchable(&err)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, adbcerr.New(adbc.StatusInvalidState, "the database is closed")
	}
	c.open++
	c.mu.Unlock()
	cn, err := c.db.Open(ctx)
	if err != nil {
		return nil, also(err, c.release())
	}
	out := &conn{Conn: cn, connector: c}
	out.pooled.Store(int64(sinceStart()))
	return out, nil
}

// release counts a connection closed, and closes the database after the
// last one once the connector is closed.
func (c *connector) release() error {
	c.mu.Lock()
	c.open--
	last := c.closed && c.open == 0
	c.mu.Unlock()
	if last {
		return c.db.Close()
	}
	return nil
}

// Driver returns the Driver the connector came from.
func (c *connector) Driver() driver.Driver { return Driver{c.drv} }

// Close closes the database, at once or, while connections of it are open
// (database/sql closes those still in use, such as an unfinished
// transaction's, when they are given back), when the last of them closes.
// sql.DB.Close calls it.
func (c *connector) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	last := c.open == 0
	c.mu.Unlock()
	if last {
		return c.db.Close()
	}
	return nil
}

type ctxOptsKey struct{}

// SetOptionsInCtx returns a copy of ctx carrying opts, for
// GetOptionsFromCtx to find. Nothing in this package reads them (as in
// arrow-adbc): they are for code of the application's own, such as a
// function passed to sql.Conn.Raw.
func SetOptionsInCtx(ctx context.Context, opts map[string]string) context.Context {
	return context.WithValue(ctx, ctxOptsKey{}, opts)
}

// GetOptionsFromCtx returns the options SetOptionsInCtx put in ctx, or
// nil.
func GetOptionsFromCtx(ctx context.Context) map[string]string {
	opts, _ := ctx.Value(ctxOptsKey{}).(map[string]string)
	return opts
}

// matchable makes *err, as it leaves a method database/sql calls,
// matchable by ADBC status with errors.Is (adbcerr), whatever driver made
// it.
func matchable(err *error) { *err = adbcerr.Matchable(*err) }
