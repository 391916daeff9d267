package jetlog

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// datasync flushes the file's data and size, not its timestamps.
func datasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
