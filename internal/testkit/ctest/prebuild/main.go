// Command prebuild builds the C test libraries of testdata/c for another
// platform into a folder, for test binaries that run where no compiler can
// be started (Windows test binaries under Wine): run them with
// CDEVICE_CTEST_PREBUILT set to that folder.
//
//	go run ./internal/ctest/prebuild -goos windows -goarch amd64 -o DIR [-I DIR]...
//
// It builds with what ctest would ($CC, else the platform's cross
// compiler) and lists the libraries that do not build there, with why.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/purearrow/cdevice/internal/testkit/ctest"
)

func main() {
	goos := flag.String("goos", runtime.GOOS, "the platform's GOOS")
	goarch := flag.String("goarch", runtime.GOARCH, "the platform's GOARCH")
	out := flag.String("o", "", "the folder to build into (required)")
	var include includes
	flag.Var(&include, "I", "an include directory of every library (repeatable)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	failed, err := ctest.Prebuild(*out, *goos, *goarch, include)
	if err != nil {
		fmt.Fprintln(os.Stderr, "prebuild:", err)
		os.Exit(1)
	}
	names := make([]string, 0, len(failed))
	for n := range failed {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Printf("not built for %s/%s: %s: %s\n", *goos, *goarch, n, why(failed[n]))
	}
}

// why is the compiler's first error line in err, else its first line.
func why(err error) string {
	lines := strings.Split(err.Error(), "\n")
	for _, l := range lines {
		if strings.Contains(l, "error") {
			return strings.TrimSpace(l)
		}
	}
	return lines[0]
}

// includes are repeated -I flags.
type includes []string

func (i *includes) String() string { return strings.Join(*i, " ") }

func (i *includes) Set(s string) error {
	*i = append(*i, s)
	return nil
}
