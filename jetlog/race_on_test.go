//go:build race

package jetlog

// raceEnabled scales expensive randomized tests down under -race, which
// slows this code about twentyfold.
const raceEnabled = true
