//go:build unix

package flink

import (
	"errors"
	"os"
	"syscall"
)

// lockBuild takes an exclusive advisory lock (flock) on the build directory
// dir, held by the returned file until it is closed or the process ends (a
// crash releases it): a leftover build directory nobody holds is one a
// crashed rewrite left.
func lockBuild(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errBuildBusy
		}
		return nil, err
	}
	return f, nil
}
