// Package hostwait bounds a host's wait for device work by a context: the
// device backends poll their event's status instead of blocking in the
// runtime, so that a producer's event that never completes cannot hang an
// import whose context is done.
package hostwait
