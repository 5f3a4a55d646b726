// Command adbcsql is an SQL shell for every ADBC database: one cgo-free
// binary that loads a C driver (SQLite, PostgreSQL, DuckDB, any other)
// through the drivermgr package and runs SQL from a prompt, a script or
// its flags, printing results as aligned tables or writing them as CSV,
// TSV, JSON lines, Arrow IPC or Parquet.
//
//	adbcsql --driver sqlite --uri file:demo.db                 # a prompt
//	adbcsql --driver sqlite --uri file:demo.db -c "SELECT 1"   # one statement
//	adbcsql --profile warehouse -f report.sql --out r.parquet  # a script
//	psql-style: \dt, \d TABLE, \info, \timing, \o FILE, \q, \?
//
// Install it with go install github.com/purearrow/cdevice/adbc/cmd/adbcsql@latest.
// Exit status: 0, 1 when a statement failed, 2 for bad usage, 130 when
// Ctrl-C ended a script.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/purearrow/cdevice/adbc/internal/redact"
)

func main() { os.Exit(runMain(os.Args[1:])) }

// runMain is the command on the process's own input, outputs and Ctrl-C.
func runMain(args []string) int {
	sigs := notifyInterrupts()
	defer sigs.stop()
	return run(args, os.Stdin, os.Stdout, os.Stderr, sigs)
}

// Exit statuses.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130 // as shells report a process a SIGINT ended
)

// errInterrupted is the cause of a statement's context that Ctrl-C ended.
var errInterrupted = errors.New("interrupted (Ctrl-C)")

// list is a repeatable flag's values.
type list []string

func (l *list) String() string     { return strings.Join(*l, " ") }
func (l *list) Set(s string) error { *l = append(*l, s); return nil }

// options are repeated -o key=value flags.
type options map[string]string

func (o options) String() string { return fmt.Sprint(map[string]string(o)) }

func (o options) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return errors.New("want key=value")
	}
	o[k] = v
	return nil
}

// config is what the flags ask for.
type config struct {
	driver, uri, entrypoint, profile string
	opts                             options
	commands, files                  list
	format, out                      string
	limit                            int
	wide, timing, cont, progress     bool
	tables, info, listDrivers        bool
	describe                         string
	formatGiven                      bool
}

const usageText = `usage: adbcsql [flags] [SQL ...]

An SQL shell for any ADBC driver. With no SQL, -c or -f, it reads
statements from standard input: a prompt on a terminal (line editing,
history, statements ended by ;), else a script.

connection:
  --driver NAME|PATH      the driver: a library path or name, or a manifest's
  --uri URI               the database URI (the driver's "uri" option)
  --profile NAME|PATH     a connection profile (a driver and its options)
  --entrypoint SYMBOL     the driver's entry point, where it is not the default
  -o key=value            a database option (repeatable)
  --list-drivers          where a driver named without a path is searched for

input:
  -c SQL                  run SQL (repeatable; ; separates statements)
  -f FILE                 run the statements of FILE ("-": standard input)
  --continue              go on after a statement fails (exit status 1 all the same)

output:
  --format FORMAT         table, csv, tsv, json (lines), arrow (IPC file),
                          arrows (IPC stream), parquet; default: --out's
                          extension, else table
  --out FILE              write results to FILE instead of standard output
  --limit N               a table shows at most N rows (0: all; default 100)
  --wide                  a table does not cut wide values to the terminal
  --timing                say how long each statement took
  --progress              a progress line on a terminal (default on)

meta commands, as flags (also in a script or at the prompt: \dt \d \info):
  --tables                list the tables and views
  --describe TABLE        the columns of TABLE
  --info                  the driver's and the database's names and versions

Exit status: 0; 1 when a statement failed; 2 for bad usage; 130 when
Ctrl-C ended a script. NO_COLOR turns colour off.
`

// run is the command with its arguments, input and outputs; it returns
// the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, sigs *interrupts) int {
	secrets := &redact.Secrets{}
	learnFlags(args, secrets)
	stderrTerminal := isTerminal(stderr) // asked before the masking wraps it
	stderr = secrets.Writer(stderr)
	c, sqls, err := parseFlags(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usageText)
		return exitOK
	case err != nil:
		fmt.Fprintf(stderr, "adbcsql: %v\nTry 'adbcsql --help'.\n", err)
		return exitUsage
	}
	if c.listDrivers {
		if err := listDrivers(stdout, c.opts); err != nil {
			fmt.Fprintln(stderr, "adbcsql:", err)
			return exitFailed
		}
		return exitOK
	}
	format, err := formatOf(c.format, c.out)
	if err != nil {
		fmt.Fprintf(stderr, "adbcsql: %v\nTry 'adbcsql --help'.\n", err)
		return exitUsage
	}
	c.formatGiven, c.format = c.format != "", format
	c.progress = c.progress && stderrTerminal
	in, err := inputs(c, sqls, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "adbcsql: %v\nTry 'adbcsql --help'.\n", err)
		return exitUsage
	}
	s, err := open(context.Background(), c, stdout, stderr, sigs)
	if err != nil {
		fmt.Fprintln(stderr, "adbcsql:", err)
		return exitFailed
	}
	defer s.close()
	return s.runAll(in)
}

// parseFlags parses args, flags before and after the SQL alike; sqls are
// the arguments that are no flag ("-" is standard input's statements).
func parseFlags(args []string) (*config, []string, error) {
	c := &config{opts: options{}, limit: 100}
	fs := flag.NewFlagSet("adbcsql", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.driver, "driver", "", "")
	fs.StringVar(&c.uri, "uri", "", "")
	fs.StringVar(&c.profile, "profile", "", "")
	fs.StringVar(&c.entrypoint, "entrypoint", "", "")
	fs.Var(c.opts, "o", "")
	fs.BoolVar(&c.listDrivers, "list-drivers", false, "")
	fs.Var(&c.commands, "c", "")
	fs.Var(&c.files, "f", "")
	fs.BoolVar(&c.cont, "continue", false, "")
	fs.StringVar(&c.format, "format", "", "")
	fs.StringVar(&c.out, "out", "", "")
	fs.IntVar(&c.limit, "limit", 100, "")
	fs.BoolVar(&c.wide, "wide", false, "")
	fs.BoolVar(&c.timing, "timing", false, "")
	fs.BoolVar(&c.progress, "progress", true, "")
	fs.BoolVar(&c.tables, "tables", false, "")
	fs.BoolVar(&c.info, "info", false, "")
	fs.StringVar(&c.describe, "describe", "", "")
	var sqls []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if rest[0] == "--" {
			sqls = append(sqls, rest[1:]...)
			break
		}
		sqls, args = append(sqls, rest[0]), rest[1:]
	}
	if c.limit < 0 {
		return nil, nil, fmt.Errorf("--limit %d: want 0 (all rows) or more", c.limit)
	}
	if c.driver == "" && c.uri == "" && c.profile == "" && !c.listDrivers {
		return nil, nil, errors.New("no database: give --driver, --uri or --profile")
	}
	return c, sqls, nil
}

// learnFlags adds to secrets the credentials the flags among args give
// (--uri=postgresql://u:pw@h, -o password=pw, a flag's value after it),
// before they are parsed: a parsing error may echo one. SQL is not looked
// into.
func learnFlags(args []string, secrets *redact.Secrets) {
	valued := map[string]bool{"driver": true, "uri": true, "profile": true, "entrypoint": true, "o": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		secrets.Text(a)
		if name := strings.TrimLeft(a, "-"); valued[name] && i+1 < len(args) {
			i++
			secrets.Text(args[i])
		}
	}
}
