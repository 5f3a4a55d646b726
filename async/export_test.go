package async

// Queued is how many tasks h holds unextracted, for tests that need a
// queue of a known length.
func Queued(h *Handler) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.queue)
}
