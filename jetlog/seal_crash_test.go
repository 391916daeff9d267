package jetlog

import (
	"testing"
)

// The crash and power-cut suites, encrypted: a sealed record is written
// and synced as a plain one is, so nothing acknowledged may be lost and
// a torn sealed tail must be found and cut as a plain one is.

func TestPowerLossEncrypted(t *testing.T) {
	for _, name := range sealCiphers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testPowerLoss(t, DurabilityAlways, testKeys(t, name), powerLossRounds()/2)
		})
	}
}

func TestPowerLossCreatingStreamsEveryStepEncrypted(t *testing.T) {
	t.Parallel()
	testCreatingEveryStep(t, testKeys(t, "chacha"))
}

// Not parallel: see TestCrashKill.
func TestCrashKillEncrypted(t *testing.T) {
	testCrashKill(t, testKeys(t, "chacha"), "k1")
}
