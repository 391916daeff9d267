//go:build unix

package jetstream

import "syscall"

// maxOpenFiles bounds the store's open segment and journal files: 1,024,
// or a quarter of the process's open-files limit when that is lower (at
// least 16), so that connections keep the rest of a low ulimit -n. A cold
// stream's files are reopened on use.
func maxOpenFiles() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return maxStoreFiles
	}
	return int(min(max(rl.Cur/4, 16), maxStoreFiles))
}
