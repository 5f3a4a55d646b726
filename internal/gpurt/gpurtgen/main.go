// Command gpurtgen writes the methods of a runtime package's Device (package
// cuda or hip): each delegates to the package's unexported *gpurt.Device, and
// carries its own documentation in the runtime's names, so that the package's
// documentation stands alone and no internal type shows in it. One table of
// methods (methods.go) serves both runtimes; what differs between them is
// derived from the package name (cudaStream_t, hipStream_t, …).
//
// Each runtime package runs it from go generate:
//
//	//go:generate go run ../../internal/gpurt/gpurtgen -o device_gen.go
//
// and declares itself, by hand: the Device type (a struct with the field dev
// *gpurt.Device and its documentation, which names the kinds of memory and
// their allocators) and any method of its own (CUDA's ComputeCapability).
// TestUpToDate fails when a generated file differs from what the table gives.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("o", "device_gen.go", "the file to write")
	pkg := flag.String("pkg", os.Getenv("GOPACKAGE"), "the runtime package: cuda or hip (default $GOPACKAGE, set by go generate)")
	flag.Parse()
	src, err := generate(*pkg)
	if err == nil {
		err = os.WriteFile(*out, src, 0o666)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gpurtgen:", err)
		os.Exit(1)
	}
}
