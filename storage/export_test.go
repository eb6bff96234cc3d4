package storage

import "time"

// SetClock replaces the time source of users, sessions and the audit
// chain until the returned function restores it. Tests only.
func SetClock(f func() time.Time) (restore func()) {
	old := clock
	clock = f
	return func() { clock = old }
}
