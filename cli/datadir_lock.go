package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDataDir makes this process the only console serving dataDir. A
// failover step claimed by another process is taken to be interrupted
// (that process died) and may be resumed: two live consoles on one
// database would run the same step twice. The lock goes with the process,
// however it ends.
func lockDataDir(dataDir string) (unlock func(), err error) {
	path := filepath.Join(dataDir, "drconsole.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data directory lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another drconsole is serving %s (it holds %s): stop it first, or give this one its own data_dir", dataDir, path)
		}
		return nil, fmt.Errorf("data directory lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
