package cli

import (
	"io"
	"os"

	"github.com/drconsole/drconsole/safefile"
)

// The files a command is given by name (--config, --offsets, --syncs,
// --anchor, a backup and its manifest) are opened through safefile: only a
// regular file within the bound below is read, opened non-blocking, so a
// FIFO or a link to /dev/zero is refused at once instead of hanging the
// command or running it out of memory.
const (
	// offsetsFileLimit bounds an offsets file, read whole: a million
	// partitions take about 40 MB.
	offsetsFileLimit = 512 << 20
	// streamedFileLimit bounds a file read line by line (a syncs dump,
	// an anchor file): it only has to be finite.
	streamedFileLimit = 64 << 30
	// backupFileLimit bounds a database copy; SQLite's own limit is far
	// above any console's database.
	backupFileLimit = 1 << 40
)

// openInput opens a file named on the command line under safefile's
// rules; a refusal is the user's input error and names the file.
func openInput(name string, limit int64) (*os.File, error) {
	f, _, err := safefile.Open(name, limit)
	if err != nil {
		return nil, inputError{safefile.Named(name, err)}
	}
	return f, nil
}

// readInput reads a whole file named on the command line (name "-" is
// stdin) under safefile's rules, at most limit bytes either way.
func readInput(name string, stdin io.Reader, limit int64) ([]byte, error) {
	if name == "-" {
		b, err := safefile.ReadAll(stdin, limit)
		if err != nil {
			return nil, inputError{safefile.Named("stdin", err)}
		}
		return b, nil
	}
	b, err := safefile.ReadFile(name, limit)
	if err != nil {
		return nil, inputError{err}
	}
	return b, nil
}

// checkInput refuses a file that is not a regular one within limit,
// without reading it: for files another library opens later (SQLite).
func checkInput(name string, limit int64) error {
	f, err := openInput(name, limit)
	if err != nil {
		return err
	}
	return f.Close()
}
