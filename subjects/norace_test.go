//go:build !race

package subjects

// raceEnabled skips tests too slow under the race detector.
const raceEnabled = false
