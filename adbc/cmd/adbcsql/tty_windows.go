package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// isTerminal reports whether w (a reader or writer) is a console.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}
