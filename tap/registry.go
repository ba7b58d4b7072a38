package tap

import (
	"slices"
	"sync"
)

// Registry is a set of points by name, the set a [Handler] serves. A relay
// names its points "input:NAME" (after parsing), "route:NAME" (after the
// route's pipeline) and "destination:NAME" (what was sent, with the
// outcome); the Registry itself accepts any name.
//
// The zero Registry is empty and ready to use. A Registry is safe for
// concurrent use by multiple goroutines.
type Registry struct {
	mu     sync.RWMutex
	points map[string]*Point
}

// Point returns the point named name, creating it if the registry has
// none: calling it again with the same name (after a configuration reload,
// say) returns the same point, so open subscriptions survive.
func (r *Registry) Point(name string) *Point {
	r.mu.RLock()
	p := r.points[name]
	r.mu.RUnlock()
	if p != nil {
		return p
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.points[name]; p != nil {
		return p
	}
	if r.points == nil {
		r.points = make(map[string]*Point)
	}
	p = NewPoint(name)
	r.points[name] = p
	return p
}

// Lookup returns the point named name, or nil when there is none.
func (r *Registry) Lookup(name string) *Point {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.points[name]
}

// Names returns the names of the registry's points, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	names := make([]string, 0, len(r.points))
	for n := range r.points {
		names = append(names, n)
	}
	r.mu.RUnlock()
	slices.Sort(names)
	return names
}

// Remove removes the point named name and closes it ([Point.Close]: its
// subscriptions end), reporting whether it existed. A publisher still
// holding the point publishes to nobody.
func (r *Registry) Remove(name string) bool {
	r.mu.Lock()
	p := r.points[name]
	delete(r.points, name)
	r.mu.Unlock()
	if p == nil {
		return false
	}
	_ = p.Close()
	return true
}

// Stats returns a snapshot of every point's counters, by name.
func (r *Registry) Stats() map[string]Stats {
	r.mu.RLock()
	points := make([]*Point, 0, len(r.points))
	for _, p := range r.points {
		points = append(points, p)
	}
	r.mu.RUnlock()
	st := make(map[string]Stats, len(points))
	for _, p := range points {
		st[p.name] = p.Stats()
	}
	return st
}
