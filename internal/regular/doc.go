// Package regular opens the files a program reads as configuration or
// loads as code (manifests, profiles, libraries) only when they are
// regular files, and never blocks on one that is not: a FIFO's open waits
// for a writer that may never come, a device reads forever.
package regular
