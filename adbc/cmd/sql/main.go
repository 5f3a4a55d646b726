// Command sql runs one query through an ADBC driver, loaded without cgo by
// the drivermgr package, and prints the result as a table, or writes it as
// Arrow IPC with --out:
//
//	sql --driver sqlite --uri file:demo.db "SELECT * FROM t"
//	sql --driver /path/libadbc_driver_postgresql.so --uri postgresql://... --out t.arrow "SELECT ..."
//	sql --profile warehouse "SELECT ..."
//
// --driver takes what the "driver" option of drivermgr takes: a library's
// path or name, or a manifest's path or name; --profile a connection
// profile's name or path (a driver and its options). -o key=value sets any other
// database option. On a terminal, a progress line on stderr counts the
// rows of a long read.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/purearrow/cdevice/adbc/internal/redact"
)

func main() {
	ctx, stop := interruptible()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if code != 0 && errors.Is(context.Cause(ctx), errInterrupted) {
		code = exitInterrupted
	}
	os.Exit(code)
}

// exitInterrupted is the status of a run that Ctrl-C ended, as shells
// report a process a SIGINT killed.
const exitInterrupted = 130

var errInterrupted = errors.New("interrupted")

// interruptible is a context that the first Ctrl-C (SIGINT) cancels: the
// query is cancelled, or abandoned where the driver cannot cancel it, and
// run returns. A second Ctrl-C exits at once.
func interruptible() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt)
	go func() {
		if _, ok := <-sig; !ok {
			return
		}
		cancel(errInterrupted)
		if _, ok := <-sig; ok {
			os.Exit(exitInterrupted)
		}
	}()
	return ctx, func() { signal.Stop(sig); close(sig) }
}

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

// run is the command with its arguments and outputs; it returns the exit
// status: 0, 1 for a failed query, 2 for bad usage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	term := isTerminal(stderr)
	// Whatever reaches stderr (errors, usage, a flag's value) may echo a
	// connection string: the credentials the flags give are masked.
	secrets := &redact.Secrets{}
	stderr = secrets.Writer(stderr)
	fs := flag.NewFlagSet("sql", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	c.opts = options{}
	fs.StringVar(&c.driver, "driver", "", "the driver: a library path or name, or a manifest path or name")
	fs.StringVar(&c.uri, "uri", "", "the database URI (the driver's \"uri\" option)")
	fs.StringVar(&c.entrypoint, "entrypoint", "", "the driver's entry point, where it is not the default")
	fs.StringVar(&c.profile, "profile", "", "a connection profile: its name (NAME.toml searched for) or path")
	fs.StringVar(&c.out, "out", "", "write the result to this file as Arrow IPC (the file format for .arrow, the stream format otherwise) instead of printing it")
	fs.IntVar(&c.limit, "limit", 100, "print at most this many rows (all are read; 0: no limit)")
	fs.BoolVar(&c.progress, "progress", term, "show a progress line on stderr during the read")
	fs.Var(c.opts, "o", "a database option, key=value (repeatable)")
	list := fs.Bool("list-drivers", false, "list the places a driver named without a path is searched for, in order, and the drivers each holds")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: sql --driver NAME|PATH|--profile NAME|PATH [--uri URI] [-o key=value]... [--out FILE] \"QUERY\"")
		fmt.Fprintln(stderr, "       sql --list-drivers [-o key=value]...")
		fs.PrintDefaults()
	}
	learnFlags(fs, args, secrets)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *list {
		if err := listDrivers(stdout, c.opts); err != nil {
			fmt.Fprintln(stderr, "sql:", err)
			return 1
		}
		return 0
	}
	if fs.NArg() != 1 || (c.driver == "" && c.uri == "" && c.profile == "") {
		fs.Usage()
		return 2
	}
	if c.limit < 0 {
		fmt.Fprintf(stderr, "sql: --limit %d: want 0 (all rows) or more\n", c.limit)
		return 2
	}
	c.query = fs.Arg(0)
	if err := c.run(ctx, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "sql:", err)
		return 1
	}
	return 0
}

// learnFlags adds to secrets the credentials the flags among args give
// (--uri=postgresql://u:pw@h, -o password=pw, a flag's value after it),
// before they are parsed: a parsing error may echo one. The query is not
// looked into.
func learnFlags(fs *flag.FlagSet, args []string, secrets *redact.Secrets) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		secrets.Text(a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && i+1 < len(args) {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
				i++
				secrets.Text(args[i])
			}
		}
	}
}
