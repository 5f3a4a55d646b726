package main

import (
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether f (a reader or writer) is a terminal, or a
// Windows console.
func isTerminal(f any) bool {
	fh, ok := f.(*os.File)
	return ok && term.IsTerminal(int(fh.Fd()))
}

// terminalWidth is the columns of the terminal w is, or 0.
func terminalWidth(w any) int {
	if !isTerminal(w) {
		return 0
	}
	cols, _, err := term.GetSize(int(w.(*os.File).Fd()))
	if err != nil {
		return 0
	}
	return cols
}
