package storage

import "time"

// SetClock replaces the time source of users, sessions and the audit
// chain until the returned function restores it. Tests only.
func SetClock(f func() time.Time) (restore func()) {
	old := clock
	clock = f
	return func() { clock = old }
}

// OpenAtVersion opens the database at path migrated only up to version v:
// the schema an older drconsole left, for upgrade tests.
func OpenAtVersion(path string, v int) (*Store, error) { return openUpTo(path, v) }

// SessionCacheTTL is how long a session read answers again from memory.
const SessionCacheTTL = sessionCacheTTL
