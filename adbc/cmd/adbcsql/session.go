package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow-adbc/go/adbc"
	"github.com/purearrow/cdevice/adbc/drivermgr"
)

// An input is one source of statements: a -c's text, a script (a file,
// standard input), or the prompt.
type input struct {
	name   string // for messages: "-c", a file's name, "stdin"
	text   string // -c's
	r      io.Reader
	prompt bool
}

// inputs are the sources c and the SQL arguments name, in order: -c and
// SQL arguments, then -f files; without any, standard input (the prompt
// where it is a terminal), unless a meta flag is all there is to do.
func inputs(c *config, sqls []string, stdin io.Reader) ([]input, error) {
	var in []input
	for _, t := range c.commands {
		in = append(in, input{name: "-c", text: t})
	}
	for _, t := range sqls {
		if t == "-" {
			in = append(in, input{name: "stdin", r: stdin})
		} else {
			in = append(in, input{name: "argument", text: t})
		}
	}
	for _, f := range c.files {
		if f == "-" {
			in = append(in, input{name: "stdin", r: stdin})
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			return nil, fmt.Errorf("-f %s: %w", f, err)
		}
		in = append(in, input{name: f, r: fh})
	}
	if len(in) == 0 && !c.tables && !c.info && c.describe == "" {
		in = append(in, input{name: "stdin", r: stdin, prompt: isTerminal(stdin)})
	}
	return in, nil
}

// A session is one connection and what it prints.
type session struct {
	c      *config
	db     adbc.Database
	conn   adbc.Connection
	out    *output
	stderr io.Writer
	sigs   *interrupts
	failed bool // a statement failed (the exit status is 1)
}

// open connects as c says.
func open(ctx context.Context, c *config, stdout, stderr io.Writer, sigs *interrupts) (*session, error) {
	opts := map[string]string{}
	for k, v := range c.opts {
		opts[k] = v
	}
	for k, v := range map[string]string{"driver": c.driver, "uri": c.uri, "entrypoint": c.entrypoint, "profile": c.profile} {
		if v != "" {
			opts[k] = v
		}
	}
	db, err := drivermgr.Driver{}.NewDatabaseWithContext(ctx, opts)
	if err != nil {
		return nil, err
	}
	conn, err := db.Open(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	s := &session{c: c, db: db, conn: conn, stderr: stderr, sigs: sigs, out: newOutput(c, stdout, stderr)}
	return s, nil
}

func (s *session) close() {
	s.out.closeFile()
	s.conn.Close()
	s.db.Close()
}

// errQuit is what \q returns: the input ends, successfully.
var errQuit = errors.New("quit")

// runAll runs the meta flags, then every input in turn, and returns the
// exit status.
func (s *session) runAll(in []input) int {
	var metas []string
	if s.c.tables {
		metas = append(metas, `\dt`)
	}
	if s.c.describe != "" {
		metas = append(metas, `\d `+s.c.describe)
	}
	if s.c.info {
		metas = append(metas, `\info`)
	}
	for _, m := range metas {
		if code, stop := s.do("flag", statement{text: m, line: 1, meta: true}); stop {
			return code
		}
	}
	for _, src := range in {
		var code int
		var stop bool
		switch {
		case src.prompt:
			return s.prompt(src.r)
		case src.r != nil:
			code, stop = s.script(src.name, src.r)
		default:
			code, stop = s.script(src.name, strings.NewReader(src.text))
		}
		if stop {
			return code
		}
	}
	if s.failed {
		return exitFailed
	}
	return exitOK
}

// script runs the statements of r, stopping at the first that fails
// (unless --continue) and at Ctrl-C.
func (s *session) script(name string, r io.Reader) (code int, stop bool) {
	var sp splitter
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		for _, st := range sp.feed(sc.Text()) {
			if code, stop := s.do(name, st); stop {
				return code, true
			}
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(s.stderr, "adbcsql: %s: %v\n", name, err)
		return exitFailed, true
	}
	if st, ok := sp.rest(); ok {
		return s.do(name, st)
	}
	return exitOK, false
}

// do runs one statement of a script: a failure says where, and stops the
// script unless --continue; Ctrl-C stops it with status 130.
func (s *session) do(name string, st statement) (code int, stop bool) {
	err := s.exec(st)
	switch {
	case err == nil:
		return exitOK, false
	case errors.Is(err, errQuit):
		return exitOK, true
	case errors.Is(err, errInterrupted):
		fmt.Fprintf(s.stderr, "adbcsql: %s, line %d: cancelled: %v\n", name, st.line, err)
		return exitInterrupted, true
	}
	s.failed = true
	fmt.Fprintf(s.stderr, "adbcsql: %s, line %d: %v\n", name, st.line, err)
	if s.c.cont {
		return exitFailed, false
	}
	return exitFailed, true
}

// exec runs a statement or meta command, cancellable by Ctrl-C: its
// context's cause is errInterrupted when that ended it.
func (s *session) exec(st statement) error {
	ctx, done := s.sigs.statement()
	defer done()
	start := time.Now()
	var err error
	if st.meta {
		err = s.meta(ctx, st.text)
	} else {
		err = s.sql(ctx, st.text)
	}
	if s.out.timing && !errors.Is(err, errQuit) {
		fmt.Fprintf(s.stderr, "Time: %.3f ms\n", float64(time.Since(start).Microseconds())/1000)
	}
	if errors.Is(err, drivermgr.ErrAbandoned) {
		// The driver goes on with the call it could not stop, holding the
		// connection until it returns: the next statements get a new one.
		if rerr := s.reconnect(); rerr != nil {
			err = fmt.Errorf("%w; and a new connection failed: %w", err, rerr)
		}
	}
	if err != nil && errors.Is(context.Cause(ctx), errInterrupted) {
		return fmt.Errorf("%w: %w", errInterrupted, err)
	}
	return err
}

// reconnect puts a new connection in place of one a call abandoned (its
// Close returns at once; the driver releases it when the call returns).
func (s *session) reconnect() error {
	s.conn.Close()
	conn, err := s.db.Open(context.Background())
	if err != nil {
		return err
	}
	s.conn = conn
	return nil
}

// sql runs one SQL statement: a query's rows to the output, an update's
// count of rows, a command's tag.
func (s *session) sql(ctx context.Context, text string) error {
	st, err := s.conn.NewStatement()
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.SetSqlQuery(text); err != nil {
		return err
	}
	verb, isUpdate := kind(text)
	if isUpdate {
		n, err := st.ExecuteUpdate(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(s.stderr, affected(verb, n))
		return nil
	}
	rdr, _, err := st.ExecuteQuery(ctx)
	if err != nil {
		return err
	}
	defer rdr.Release()
	return s.out.result(rdr)
}

// updates are the statements run for their effect (ExecuteUpdate): the
// rows they change are counted, a command's tag said.
var updates = map[string]bool{
	"INSERT": true, "UPDATE": true, "DELETE": true, "MERGE": true, "UPSERT": true, "REPLACE": true,
	"CREATE": true, "DROP": true, "ALTER": true, "TRUNCATE": true, "RENAME": true, "COMMENT": true,
	"GRANT": true, "REVOKE": true, "BEGIN": true, "START": true, "COMMIT": true, "END": true,
	"ROLLBACK": true, "SAVEPOINT": true, "RELEASE": true, "SET": true, "RESET": true, "USE": true,
	"ATTACH": true, "DETACH": true, "VACUUM": true, "REINDEX": true, "CHECKPOINT": true, "INSTALL": true, "LOAD": true,
}

// kind is a statement's verb and whether it runs as an update (one that
// returns rows, INSERT ... RETURNING, is a query).
func kind(text string) (verb string, update bool) {
	words := strings.Fields(strings.ToUpper(stripComments(text)))
	if len(words) == 0 {
		return "", false
	}
	verb = words[0]
	for _, w := range words {
		if w == "RETURNING" || strings.HasPrefix(w, "RETURNING") {
			return verb, false
		}
	}
	if updates[verb] && len(words) > 1 && (verb == "CREATE" || verb == "DROP" || verb == "ALTER") {
		second := words[1]
		if second == "OR" && len(words) > 3 { // CREATE OR REPLACE VIEW
			second = words[3]
		}
		if second == "TEMP" || second == "TEMPORARY" || second == "UNIQUE" {
			if len(words) > 2 {
				second = words[2]
			}
		}
		verb += " " + second
	}
	return verb, updates[words[0]]
}

// stripComments drops the leading comments of a statement.
func stripComments(s string) string {
	for {
		s = strings.TrimSpace(s)
		switch {
		case strings.HasPrefix(s, "--"):
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				s = s[i+1:]
				continue
			}
			return ""
		case strings.HasPrefix(s, "/*"):
			if i := strings.Index(s, "*/"); i >= 0 {
				s = s[i+2:]
				continue
			}
			return ""
		}
		return s
	}
}

// affected says what an update did: rows for a change of rows (never a
// count the driver did not give), the command's tag otherwise.
func affected(verb string, n int64) string {
	switch verb {
	case "INSERT", "UPDATE", "DELETE", "MERGE", "UPSERT", "REPLACE":
		if n < 0 {
			return verb + ": rows affected unknown (the driver does not say)"
		}
		if n == 1 {
			return verb + ": 1 row affected"
		}
		return fmt.Sprintf("%s: %d rows affected", verb, n)
	}
	return verb
}
