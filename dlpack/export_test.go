package dlpack

// DeleterCalls returns how many times the deleter of the tensors this
// package exports has been called, stray calls included. For tests only:
// the live counts and the stray calls are in cdevice.LiveLeaks().
func DeleterCalls() int64 { return deleterCalls.Load() }
