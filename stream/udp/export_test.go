package udp

// Stopping reports whether the listener's readers have been told to stop
// waiting for datagrams (its Serve context ended, or Close).
func Stopping(l *Listener) bool { return l.stopping.Load() }
