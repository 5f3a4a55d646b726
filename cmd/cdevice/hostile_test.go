package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/purearrow/cdevice/internal/ipcverify"
	"github.com/purearrow/cdevice/internal/testkit/ipcinputs"
	"github.com/purearrow/cdevice/internal/testkit/selfexec"
)

// Each hostile input, given to cdevice inspect in a child process whose
// address space is limited, is refused with an error naming its limit,
// well within a deadline and with a peak resident memory under the limit
// it reads with plus 64 MiB (the figures: BenchmarkHostileInputs).
func TestHostileInputsBounded(t *testing.T) {
	dir := t.TempDir()
	for _, h := range ipcinputs.Inputs(t) {
		t.Run(h.Name, func(t *testing.T) {
			path := filepath.Join(dir, "input")
			if err := os.WriteFile(path, h.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"inspect", path}
			if strings.Contains(h.Name, "--max-batches") {
				args = []string{"inspect", "--max-batches", "1000", path}
			}
			limit := ipcverify.DefaultMemory(int64(len(h.Data)))
			cmd := selfexec.Command([]string{mainEnv + "=1"}, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			peak, elapsed, err := selfexec.Bounded(cmd, limit+256<<20, time.Minute)
			t.Logf("%d bytes: %v, peak RSS %.1f MiB (limit %.1f MiB): %s", len(h.Data), elapsed.Round(time.Millisecond),
				float64(peak)/(1<<20), float64(limit)/(1<<20), strings.TrimSpace(stderr.String()))
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != exitFail || !strings.Contains(stderr.String(), h.Want) {
				t.Errorf("%v; want exit 1 saying %q", err, h.Want)
			}
			if peak > limit+64<<20 {
				t.Errorf("peak RSS %d bytes, more than the limit and 64 MiB (%d)", peak, limit+64<<20)
			}
		})
	}
}

// BenchmarkHostileInputs times inspect refusing each hostile input, in this
// process (the target: under 2 s for any input under 1 MB).
func BenchmarkHostileInputs(b *testing.B) {
	dir := b.TempDir()
	for _, h := range ipcinputs.Inputs(b) {
		b.Run(strings.ReplaceAll(h.Name, " ", "_"), func(b *testing.B) {
			path := filepath.Join(dir, "input")
			if err := os.WriteFile(path, h.Data, 0o644); err != nil {
				b.Fatal(err)
			}
			args := []string{path}
			if strings.Contains(h.Name, "--max-batches") {
				args = []string{"--max-batches", "1000", path}
			}
			for b.Loop() {
				if inspect(args, new(bytes.Buffer), new(bytes.Buffer)) != exitFail {
					b.Fatal("accepted")
				}
			}
		})
	}
}
