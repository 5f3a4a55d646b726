// Command cdevice shows what the cdevice library finds on this machine and
// proves that it works there.
//
//	cdevice devices [--json]              every device backend tried, its
//	                                      library and version, its devices or
//	                                      why it has none, and the default
//	                                      device with the reason for it
//	cdevice selftest [--device D] [--json]
//	                                      round trips a batch of every type
//	                                      family through ArrowDeviceArray,
//	                                      ArrowDeviceArrayStream and the async
//	                                      stream on every device (or the one
//	                                      CDEVICE_DEVICE names), pass/fail
//	cdevice bench [--device D] [--size BYTES] [--json]
//	                                      copy bandwidth, export/import cost,
//	                                      stream and async batches per second
//	cdevice inspect [--json] [--max-memory BYTES] FILE
//	                                      an Arrow IPC file's schema as a C
//	                                      consumer sees it (format strings,
//	                                      flags, metadata); a corrupt file is
//	                                      an error naming it, never a crash
//	cdevice version [--json]              this build's version, and Go's,
//	                                      purego's and arrow-go's
//
// Exit status: 0 on success, 1 when something failed, 2 on a usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/purearrow/cdevice/abi"
	"github.com/purearrow/cdevice/device"
	"github.com/purearrow/cdevice/loader"
)

const usage = `usage: cdevice <command> [flags]

commands:
  devices    list device backends, their devices, and the default device
  selftest   round trip a batch of every Arrow type through the C device
             interfaces on every device, and say what passed
  bench      measure copy bandwidth, export/import cost and stream rates
  inspect    show an Arrow IPC file's schema as a C consumer sees it
  version    print this build's version and those of Go, purego and arrow-go

Start with 'cdevice devices', then 'cdevice selftest'.
Run 'cdevice <command> --help' (or 'cdevice help <command>') for a command's flags.
Environment: CDEVICE_DEVICE picks the default device (cpu, cuda:N, hip:N,
opencl:N, ...); CDEVICE_CUDA_LIBRARY, CDEVICE_CUDA_DRIVER_LIBRARY,
CDEVICE_HIP_LIBRARY and CDEVICE_OPENCL_LIBRARY point at a runtime library
to load instead; CDEVICE_CUDA_API=runtime|driver picks one CUDA API.
`

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

var commands = map[string]func(args []string, stdout, stderr io.Writer) int{
	"devices":  devices,
	"selftest": selftest,
	"bench":    bench,
	"inspect":  inspect,
	"version":  version,
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		if len(args) >= 2 && args[0] == "help" {
			if cmd := commands[args[1]]; cmd != nil {
				return cmd([]string{"--help"}, stdout, stderr)
			}
			fmt.Fprintf(stderr, "cdevice: unknown command %q\n\n%s", args[1], usage)
			return exitUsage
		}
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if cmd := commands[args[0]]; cmd != nil {
		return cmd(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "cdevice: unknown command %q\n\n%s", args[0], usage)
	return exitUsage
}

// newFlagSet is the flag set of the subcommand name: errors, and on --help
// usage followed by the flags, go to stderr.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args with fs, allowing flags after positional arguments
// (cdevice inspect FILE --json), and returns the positional arguments. ok is
// false when the command must stop with status code: 0 after --help, 2 after
// a bad flag (fs has printed the usage either way).
func parseFlags(fs *flag.FlagSet, args []string) (positional []string, code int, ok bool) {
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, exitOK, false
			}
			return nil, exitUsage, false
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(positional, rest...), exitOK, true // all operands after --
		}
		args = rest
		if len(args) == 0 {
			return positional, exitOK, true
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// usageError prints msg and how to get help, and returns the usage status.
func usageError(stderr io.Writer, cmd, format string, a ...any) int {
	fmt.Fprintf(stderr, "cdevice %s: %s\nRun 'cdevice %s --help' for usage.\n", cmd, fmt.Sprintf(format, a...), cmd)
	return exitUsage
}

// spec names a device as CDEVICE_DEVICE does.
func spec(d device.Device) string {
	if d.Type() == abi.DeviceCPU {
		return "cpu"
	}
	return fmt.Sprintf("%s:%d", d.Type(), d.ID())
}

// pickDevices returns the devices the command cmd runs on: the one that
// flagSpec (its --device) names, else the one CDEVICE_DEVICE names (as for
// 'cdevice devices'), else the CPU and every device discovery found. When
// there are none it reports why on stderr and returns the exit status, ok
// false.
func pickDevices(cmd, flagSpec string, stderr io.Writer) (devs []device.Device, code int, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	source, s := "--device", flagSpec
	if s == "" {
		source, s = loader.EnvDevice, strings.TrimSpace(os.Getenv(loader.EnvDevice))
	}
	devs, isUsage, err := findDevices(ctx, source, s)
	switch {
	case err == nil:
		return devs, exitOK, true
	case isUsage && source == "--device":
		return nil, usageError(stderr, cmd, "%v", err), false
	default:
		fmt.Fprintf(stderr, "cdevice %s: %v\n", cmd, err)
		return nil, exitFail, false
	}
}

// findDevices returns the devices a command runs on: the one that spec
// names (spec as CDEVICE_DEVICE spells it; source says where it came from),
// or with spec empty the CPU and every device discovery found. A spec that
// does not parse is a usage error (usage true); a device this machine lacks
// is not.
func findDevices(ctx context.Context, source, spec string) (devs []device.Device, usage bool, err error) {
	var (
		t  abi.DeviceType
		id int64
	)
	if spec != "" {
		if t, id, err = loader.ParseDeviceSpec(spec); err != nil {
			return nil, true, fmt.Errorf("%s: %w", source, err)
		}
		if t == abi.DeviceCPU {
			return []device.Device{device.CPU}, false, nil
		}
	}
	rep, err := loader.Discover(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("device discovery: %w", err)
	}
	all := []device.Device{device.CPU}
	have := []string{"cpu"}
	for _, b := range rep.Backends {
		for _, d := range b.Devices {
			all = append(all, d.Device)
			have = append(have, d.Spec())
		}
	}
	if spec == "" {
		return all, false, nil
	}
	for _, d := range all {
		if d.Type() == t && d.ID() == id {
			return []device.Device{d}, false, nil
		}
	}
	var why []string
	for _, b := range rep.Backends {
		if b.Err != nil {
			why = append(why, b.Name+": "+b.Reason)
		}
	}
	named := source + " " + spec
	if source == loader.EnvDevice {
		named = source + "=" + spec
	}
	msg := fmt.Sprintf("%s: this machine has no such device (it has %s)", named, strings.Join(have, ", "))
	if len(why) > 0 {
		msg += "; unavailable backends: " + strings.Join(why, "; ")
	}
	return nil, false, errors.New(msg + ". Run 'cdevice devices' for details, or pick one of the devices above.")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func formatMemory(n int64) string {
	if n <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}
