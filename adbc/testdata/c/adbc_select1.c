/* adbc_select1.c: the C side of BenchmarkSelect1: "SELECT 1" run again and
 * again through Arrow's C driver manager (libadbc_driver_manager.so,
 * opened by path) on a driver it loads, as plain C would: a statement, its
 * query, the result stream read to the end (schema and every batch
 * released), the statement released. */
#include <stdint.h>
#include <string.h>

/* adbc.h's ADBC_EXPORT empty: mingw-w64 warns of dllexport or dllimport on
 * its structs, and the functions exported here say so themselves (EXPORT). */
#define ADBC_EXPORT
#include "adbc.h"
#include "dl.h"

#ifdef _WIN32
#define EXPORT __declspec(dllexport)
#else
#define EXPORT __attribute__((visibility("default")))
#endif

static struct {
	AdbcStatusCode (*db_new)(struct AdbcDatabase *, struct AdbcError *);
	AdbcStatusCode (*db_set)(struct AdbcDatabase *, const char *, const char *, struct AdbcError *);
	AdbcStatusCode (*db_init)(struct AdbcDatabase *, struct AdbcError *);
	AdbcStatusCode (*db_release)(struct AdbcDatabase *, struct AdbcError *);
	AdbcStatusCode (*conn_new)(struct AdbcConnection *, struct AdbcError *);
	AdbcStatusCode (*conn_init)(struct AdbcConnection *, struct AdbcDatabase *, struct AdbcError *);
	AdbcStatusCode (*conn_release)(struct AdbcConnection *, struct AdbcError *);
	AdbcStatusCode (*st_new)(struct AdbcConnection *, struct AdbcStatement *, struct AdbcError *);
	AdbcStatusCode (*st_query)(struct AdbcStatement *, const char *, struct AdbcError *);
	AdbcStatusCode (*st_exec)(struct AdbcStatement *, struct ArrowArrayStream *, int64_t *, struct AdbcError *);
	AdbcStatusCode (*st_release)(struct AdbcStatement *, struct AdbcError *);
} m;

static struct AdbcDatabase db;
static struct AdbcConnection conn;

static void forget(struct AdbcError *e) {
	if (e->release)
		e->release(e);
	memset(e, 0, sizeof *e);
}

/* s1_open loads the manager at mgr and opens a connection to the driver at
 * driver: 0, or the step that failed. */
EXPORT int s1_open(const char *mgr, const char *driver) {
	struct AdbcError e = {0};
	void *h = dl_open(mgr);
	if (!h)
		return 1;
#define BIND(f, name)                             \
	if (!(*(void **)&m.f = dl_sym(h, name))) \
		return 2;
	BIND(db_new, "AdbcDatabaseNew");
	BIND(db_set, "AdbcDatabaseSetOption");
	BIND(db_init, "AdbcDatabaseInit");
	BIND(db_release, "AdbcDatabaseRelease");
	BIND(conn_new, "AdbcConnectionNew");
	BIND(conn_init, "AdbcConnectionInit");
	BIND(conn_release, "AdbcConnectionRelease");
	BIND(st_new, "AdbcStatementNew");
	BIND(st_query, "AdbcStatementSetSqlQuery");
	BIND(st_exec, "AdbcStatementExecuteQuery");
	BIND(st_release, "AdbcStatementRelease");
#undef BIND
	memset(&db, 0, sizeof db);
	memset(&conn, 0, sizeof conn);
	if (m.db_new(&db, &e) || m.db_set(&db, "driver", driver, &e) || m.db_init(&db, &e)) {
		forget(&e);
		return 3;
	}
	if (m.conn_new(&conn, &e) || m.conn_init(&conn, &db, &e)) {
		forget(&e);
		return 4;
	}
	return 0;
}

/* s1_run runs SELECT 1 iters times; 0, or -1 on a failure. */
EXPORT int s1_run(int iters) {
	for (int i = 0; i < iters; i++) {
		struct AdbcError e = {0};
		struct AdbcStatement st;
		struct ArrowArrayStream s;
		struct ArrowSchema sc;
		struct ArrowArray a;
		int64_t rows = -1;
		memset(&st, 0, sizeof st);
		memset(&s, 0, sizeof s);
		if (m.st_new(&conn, &st, &e) || m.st_query(&st, "SELECT 1", &e) || m.st_exec(&st, &s, &rows, &e)) {
			forget(&e);
			return -1;
		}
		if (s.get_schema(&s, &sc) != 0)
			return -1;
		sc.release(&sc);
		for (;;) {
			if (s.get_next(&s, &a) != 0)
				return -1;
			if (!a.release)
				break;
			a.release(&a);
		}
		s.release(&s);
		if (m.st_release(&st, &e)) {
			forget(&e);
			return -1;
		}
	}
	return 0;
}

EXPORT void s1_close(void) {
	struct AdbcError e = {0};
	m.conn_release(&conn, &e);
	forget(&e);
	m.db_release(&db, &e);
	forget(&e);
}
