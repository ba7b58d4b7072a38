package ringbuffer

// Waiters returns the number of producers registered as parked on a full
// ring. For tests that must know a producer is blocked before acting.
func (q *MPSC[T]) Waiters() int64 { return q.waiters.Load() }

// Sleeping reports whether the consumer is registered as parked.
func (q *MPSC[T]) Sleeping() bool { return q.sleeping.Load() != 0 }
