//go:build !unix

package jetstream

// maxOpenFiles bounds the store's open segment and journal files; a cold
// stream's files are reopened on use.
func maxOpenFiles() int { return maxStoreFiles }
