package storage

// BreakFile closes the active file behind the Writer's back, so that the
// next write to it fails.
func (w *Writer) BreakFile() {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.f.Close()
}
