// Package selfexec runs a test binary again as a child process, the way
// go test ran it: tests that need a fresh process (a command run as a user
// would, discovery with another environment) use it on every platform the
// suite runs on, qemu-user included. Only tests import it.
package selfexec

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ExecEnv names a wrapper that runs the test binaries, as go test -exec
// does: under qemu-user without binfmt_misc a child process needs it too
// (CI sets CDEVICE_TEST_EXEC=qemu-arm-static for its arm run).
const ExecEnv = "CDEVICE_TEST_EXEC"

// Command runs this test binary again with args (such as
// -test.run=^TestX$), through the ExecEnv wrapper when there is one, with
// env added to this process's environment. A race-enabled child skips the
// race detector's one-second sleep at exit.
func Command(env []string, args ...string) *exec.Cmd {
	name := os.Args[0]
	if wrapper := strings.Fields(os.Getenv(ExecEnv)); len(wrapper) > 0 {
		name, args = wrapper[0], append(append(wrapper[1:], name), args...)
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(append(os.Environ(), "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE")), env...)
	return cmd
}

// EnvMemoryLimit names the variable with which a child started by Bounded
// learns how much more address space it may take (ApplyMemoryLimit), and
// envPeak the file it writes its peak resident memory to (Exit).
const (
	EnvMemoryLimit = "CDEVICE_TEST_MEMORY_LIMIT"
	envPeak        = "CDEVICE_TEST_PEAK_FILE"
)

// Bounded runs cmd, a child of this test binary, as a test of bounded work:
// the child may take at most memory bytes of address space beyond what it
// holds when it calls ApplyMemoryLimit (where the platform can say so:
// Linux, not under an emulator) and is killed after deadline. It returns
// the child's peak resident memory as the child measured it (Exit; 0 where
// unknown) and its wall time; err is the child's (an *exec.ExitError for a
// nonzero exit) or the deadline's.
func Bounded(cmd *exec.Cmd, memory int64, deadline time.Duration) (peak int64, elapsed time.Duration, err error) {
	f, err := os.CreateTemp("", "cdevice-peak-*")
	if err != nil {
		return 0, 0, err
	}
	f.Close()
	defer os.Remove(f.Name())
	cmd.Env = append(cmd.Env, envPeak+"="+f.Name())
	if os.Getenv(ExecEnv) == "" {
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", EnvMemoryLimit, memory))
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	timer := time.AfterFunc(deadline, func() { cmd.Process.Kill() })
	err = cmd.Wait()
	elapsed = time.Since(start)
	if !timer.Stop() {
		err = fmt.Errorf("killed after %v (%v)", deadline, err)
	}
	if b, rerr := os.ReadFile(f.Name()); rerr == nil && len(b) > 0 {
		peak, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	}
	return peak, elapsed, err
}

// ApplyMemoryLimit, called first thing in a child that Bounded started,
// limits the child's address space to what it has now plus the bytes
// EnvMemoryLimit says (Linux: RLIMIT_AS); elsewhere it does nothing. Past
// the limit an allocation fails and the Go runtime ends the child, which
// the test sees, instead of the machine running out of memory.
func ApplyMemoryLimit() error {
	v := os.Getenv(EnvMemoryLimit)
	if v == "" {
		return nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return fmt.Errorf("%s=%q: %w", EnvMemoryLimit, v, err)
	}
	return limitAddressSpace(n)
}

// ReportPeak writes this child's peak resident memory where Bounded asked
// for it (Linux: VmHWM, the high-water mark of this program's own memory
// since it started, which the parent cannot read once the child has
// exited). A child calls it last.
func ReportPeak() {
	if path := os.Getenv(envPeak); path != "" {
		if peak := peakRSS(); peak > 0 {
			os.WriteFile(path, []byte(strconv.FormatInt(peak, 10)), 0o600)
		}
	}
}

// Exit ends a child with code after ReportPeak.
func Exit(code int) {
	ReportPeak()
	os.Exit(code)
}
