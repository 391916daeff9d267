//go:build !race

package jetlog

const raceEnabled = false
