//go:build race

package tests

// raceEnabled: the race detector allows at most 8128 live goroutines, so
// tests with thousands of connections scale down.
const raceEnabled = true
