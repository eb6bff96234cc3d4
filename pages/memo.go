package pages

import "sync"

// Memo holds, per slot, the last value built and the key it was built
// from; a different key rebuilds it. Slots are bounded by Max: when full,
// one slot is dropped (whichever the map yields first) before a new one is
// added, so a stream of distinct filters cannot grow it.
type Memo[K comparable, V any] struct {
	Max int

	mu    sync.Mutex
	slots map[string]memoEntry[K, V]
}

type memoEntry[K comparable, V any] struct {
	key K
	val V
}

// Get returns slot's value for key, building it when the slot holds
// another key (or none). build runs outside the lock: two callers may
// build the same value at once; both results are equal.
func (m *Memo[K, V]) Get(slot string, key K, build func() V) V {
	m.mu.Lock()
	e, ok := m.slots[slot]
	m.mu.Unlock()
	if ok && e.key == key {
		return e.val
	}
	v := build()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.slots == nil {
		m.slots = map[string]memoEntry[K, V]{}
	}
	if _, held := m.slots[slot]; !held && len(m.slots) >= max(m.Max, 1) {
		for k := range m.slots {
			delete(m.slots, k)
			break
		}
	}
	m.slots[slot] = memoEntry[K, V]{key, v}
	return v
}

// Len is how many slots are held.
func (m *Memo[K, V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.slots)
}
