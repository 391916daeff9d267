package monitor

import "syscall"

// storeSpace reports the bytes available to an unprivileged user and
// the size of the file system holding dir.
func storeSpace(dir string) (free, size uint64, ok bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, 0, false
	}
	bsize := uint64(st.Bsize)
	return st.Bavail * bsize, st.Blocks * bsize, true
}
