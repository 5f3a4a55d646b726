package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/util"
)

// output is where results go and how they look.
type output struct {
	format   string // the format of stdout's results and of file's
	file     string // --out or \o: results go there ("": stdout)
	fh       *os.File
	bw       *bufio.Writer
	stdout   io.Writer
	stderr   io.Writer
	limit    int
	wide     bool
	width    int  // the terminal's columns (0: not a terminal)
	color    bool // NO_COLOR unset, stdout a terminal
	timing   bool
	progress bool // a progress line on stderr, a terminal
	explicit bool // --format was given: \o keeps it
}

func newOutput(c *config, stdout, stderr io.Writer) *output {
	o := &output{format: c.format, file: c.out, stdout: stdout, stderr: stderr, limit: c.limit, wide: c.wide,
		timing: c.timing, explicit: c.formatGiven}
	if isTerminal(stdout) {
		o.width = terminalWidth(stdout)
		_, noColor := os.LookupEnv("NO_COLOR")
		o.color = !noColor
	}
	o.progress = c.progress // --progress, and stderr a terminal
	return o
}

// show is a table cell's text: NULL for a null, set apart from the text
// "NULL" by dim() on a terminal.
func (o *output) show(c tableCell) string {
	if c.null {
		return "NULL"
	}
	return c.s
}

func (o *output) dim(s string) string {
	if o.color {
		return "\x1b[2m" + s + "\x1b[22m"
	}
	return s
}

// to sends results to file (its format from its extension unless
// --format named one), or back to stdout where file is "".
func (o *output) to(file string) error {
	format := o.format
	if !o.explicit {
		f, err := formatOf("", file)
		if err != nil {
			return err
		}
		format = f
	}
	o.closeFile()
	o.file, o.format = file, format
	return nil
}

func (o *output) closeFile() {
	if o.fh != nil {
		o.bw.Flush()
		o.fh.Close()
		o.fh, o.bw = nil, nil
	}
}

// writer is where the next result goes: the file (created at its first
// result; a binary format holds one result), or stdout (where a binary
// format is refused on a terminal).
func (o *output) writer() (io.Writer, error) {
	if o.file == "" {
		if binary(o.format) && isTerminal(o.stdout) {
			return nil, fmt.Errorf("%s is binary: write it to a file (--out FILE, \\o FILE) or a pipe", o.format)
		}
		return o.stdout, nil
	}
	if o.fh == nil {
		f, err := os.Create(o.file)
		if err != nil {
			return nil, err
		}
		o.fh, o.bw = f, bufio.NewWriterSize(f, 1<<20)
	} else if binary(o.format) {
		return nil, fmt.Errorf("%s holds one %s result, written already: name another file (\\o FILE)", o.file, o.format)
	}
	return o.bw, nil
}

// result writes a query's result as it streams in, with a progress line
// on a terminal, then how many rows there were. A result cut short (an
// error, Ctrl-C) prints what was read and no count.
func (o *output) result(rdr array.RecordReader) error {
	w, err := o.writer()
	if err != nil {
		return err
	}
	s, err := formats[o.format](w, rdr.Schema(), o)
	if err != nil {
		return err
	}
	p := progress{w: o.stderr, on: o.progress, start: time.Now()}
	for rdr.Next() {
		rec := rdr.RecordBatch()
		if err := s.write(rec); err != nil {
			p.done()
			s.abort()
			return err
		}
		p.update(rec.NumRows(), util.TotalRecordSize(rec))
	}
	p.done()
	if err := rdr.Err(); err != nil {
		s.abort()
		o.flush()
		return err
	}
	if err := s.end(); err != nil {
		return err
	}
	if err := o.flush(); err != nil {
		return err
	}
	where := ""
	if o.file != "" {
		where = ", written to " + o.file
	}
	fmt.Fprintf(o.stderr, "(%s%s)\n", plural(p.rows, "row"), where)
	return nil
}

func (o *output) flush() error {
	if o.bw != nil {
		return o.bw.Flush()
	}
	return nil
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// progress redraws one line on stderr, a terminal, at most every 200 ms:
// rows, bytes and the rate; never on a pipe.
type progress struct {
	w           io.Writer
	on          bool
	start, last time.Time
	rows, bytes int64
	drawn       bool
}

func (p *progress) update(rows, bytes int64) {
	p.rows += rows
	p.bytes += bytes
	if !p.on || time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	el := max(time.Since(p.start).Seconds(), 1e-9)
	fmt.Fprintf(p.w, "\r%d rows, %.1f MB, %.0f rows/s \033[K", p.rows, float64(p.bytes)/1e6, float64(p.rows)/el)
	p.drawn = true
}

func (p *progress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}
