package drivermgr

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"unsafe"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/adbc/adbcerr"
	"github.com/purearrow/cdevice/adbc/internal/cabi"
	"github.com/purearrow/cdevice/internal/ffi"
)

// Driver is the driver manager: its zero value is ready, and every
// NewDatabase loads the driver its options name.
type Driver struct{}

var _ adbc.Driver = Driver{}
var _ adbc.DriverWithContext = Driver{}

// NewDatabase is NewDatabaseWithContext with context.Background.
func (d Driver) NewDatabase(opts map[string]string) (adbc.Database, error) {
	return d.NewDatabaseWithContext(context.Background(), opts)
}

// NewDatabaseWithContext loads the driver the options name (see the
// package documentation), creates a database of it with the other options
// set, and initializes it. The *Database it returns is an adbc.Database
// and adbc.GetSetOptions.
//
// The credentials among the options (a uri's password, a password-like
// option's value, the same in a connection profile, and those of later
// SetOptions) are masked in every error the database, its connections and
// their statements return; nothing else of a driver's message is.
func (Driver) NewDatabaseWithContext(ctx context.Context, opts map[string]string) (adbc.Database, error) {
	if ctx.Err() != nil {
		return nil, adbcerr.Ended(ctx, "AdbcDatabaseInit", nil)
	}
	q, err := newRequest(opts)
	if err != nil {
		return nil, err
	}
	drv, err := load(q.loadRequest)
	if err != nil {
		if q.profile != "" {
			err = within("connection profile "+q.profile+": ", err)
		}
		return nil, q.secrets.Error(err)
	}
	drv.secrets = q.secrets
	db := &Database{drv: drv, conns: map[*connection]struct{}{}}
	p, err := ffi.Calloc(unsafe.Sizeof(cabi.Handle{}))
	if err != nil {
		drv.release()
		return nil, err
	}
	db.h = uintptr(p)
	if err := drv.call("AdbcDatabaseNew", drv.fns.DatabaseNew, db.h); err != nil {
		ffi.Free(p)
		drv.release()
		return nil, err
	}
	db.options = options{d: drv, o: drv.dbOptions(), h: db.h, in: db}
	if err := db.setAll(q); err != nil {
		db.Close()
		return nil, err
	}
	if err := drv.call("AdbcDatabaseInit", drv.fns.DatabaseInit, db.h); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// A Database is an initialized AdbcDatabase of a loaded driver. It is safe
// for concurrent use.
type Database struct {
	// use: Opens share it, for a driver's connection init may be a round
	// trip to a server that other Opens need not wait for (as Arrow's
	// managers, C and Go, do not serialize them); the database's own calls
	// (options, release) take it alone. Taken before mu.
	use     sync.RWMutex
	mu      sync.Mutex // closed, conns, releaseAfter
	drv     *driver
	h       uintptr // struct AdbcDatabase, C memory, freed by Close
	options         // the option calls, with db.with
	closed  bool
	conns   map[*connection]struct{} // open, closed by Close first
	// connOpts: SetOptions', set on each connection Open makes.
	connOpts map[string]string
	// releaseAfter: Close found a connection still in an abandoned call;
	// its return releases the database (forget).
	releaseAfter bool
}

var (
	_ adbc.Database        = (*Database)(nil)
	_ adbc.GetSetOptions   = (*Database)(nil)
	_ adbc.PostInitOptions = (*Database)(nil)
)

// live is nil, or the error of a database used after Close.
func (db *Database) live() error {
	if db.closed {
		return adbcerr.New(adbc.StatusInvalidState, "database closed")
	}
	return nil
}

// SetOptions keeps opts for the connections Open makes from now on: each
// is set on every new connection before its init (in key order), as
// arrow-adbc's drivermgr does and adbc.DriverWithContext asks ("connection
// specific options should be set using SetOptions before calling Open"):
// an option the driver does not take fails that Open. A database option
// is set with SetOption.
func (db *Database) SetOptions(opts map[string]string) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	if err := db.live(); err != nil {
		return err
	}
	if db.connOpts == nil {
		db.connOpts = map[string]string{}
	}
	db.drv.secrets.Options(opts)
	maps.Copy(db.connOpts, opts)
	return nil
}

// setAll sets the request's options, each kind in key order.
func (db *Database) setAll(q *request) error {
	for _, k := range slices.Sorted(maps.Keys(q.opts)) {
		if err := db.SetOption(k, q.opts[k]); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(q.ints)) {
		if err := db.SetOptionInt(k, q.ints[k]); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(q.doubles)) {
		if err := db.SetOptionDouble(k, q.doubles[k]); err != nil {
			return err
		}
	}
	return nil
}

// with runs f holding the database, with C memory for one call.
func (db *Database) with(f func(m *cmem) error) error {
	db.use.Lock()
	defer db.use.Unlock()
	db.mu.Lock()
	err := db.live()
	db.mu.Unlock()
	if err != nil {
		return err
	}
	var m cmem
	defer m.free()
	return f(&m)
}

// Open makes and initializes a connection of the database. Opens run at
// once, each its driver's connection init.
//
// A ctx that has ended is its error, the driver not called.
func (db *Database) Open(ctx context.Context) (adbc.Connection, error) {
	if ctx.Err() != nil {
		return nil, adbcerr.Ended(ctx, "AdbcConnectionInit", nil)
	}
	db.use.RLock()
	db.mu.Lock()
	err := db.live()
	opts := maps.Clone(db.connOpts)
	db.mu.Unlock()
	if err != nil {
		db.use.RUnlock()
		return nil, err
	}
	c, err := newConnection(db, opts)
	if err != nil {
		db.use.RUnlock()
		return nil, err
	}
	// Registered even if Close came meanwhile: its release then waits for
	// this connection's Close (forget).
	db.mu.Lock()
	db.conns[c] = struct{}{}
	closed := db.closed
	db.mu.Unlock()
	db.use.RUnlock()
	if closed {
		c.Close()
		return nil, db.live()
	}
	return c, nil
}

// forget drops a closed connection from the database's open ones; the
// last one of a database closed meanwhile releases it.
func (db *Database) forget(c *connection) {
	db.mu.Lock()
	delete(db.conns, c)
	last := db.releaseAfter && len(db.conns) == 0
	if last {
		db.releaseAfter = false
	}
	db.mu.Unlock()
	if last {
		db.use.Lock()
		defer db.use.Unlock()
		db.release()
	}
}

// Close releases the database and the driver, after closing what of it is
// still open (connections, their statements and results). A second Close
// does nothing.
func (db *Database) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
	}
	db.closed = true
	open := make([]*connection, 0, len(db.conns))
	for c := range db.conns {
		open = append(open, c)
	}
	db.mu.Unlock()
	var errs []error
	for _, c := range open {
		errs = append(errs, c.Close())
	}
	db.use.Lock() // Opens in flight finish first
	defer db.use.Unlock()
	db.mu.Lock()
	defer db.mu.Unlock()
	if len(db.conns) > 0 {
		// A connection's call abandoned when its context ended is still running,
		// or an Open finished meanwhile: its Close, and then this release,
		// follow (forget).
		db.releaseAfter = true
		return errors.Join(errs...)
	}
	return errors.Join(append(errs, db.release())...)
}

// release releases the database and the driver; db.use is held alone.
func (db *Database) release() error {
	err := db.drv.call("AdbcDatabaseRelease", db.drv.fns.DatabaseRelease, db.h)
	ffi.Free(abi.Pointer(db.h))
	return errors.Join(err, db.drv.unref())
}
