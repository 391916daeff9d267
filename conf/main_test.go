package conf

import (
	"testing"

	"go.uber.org/goleak"
)

// conf starts no goroutines; this guards against viper starting any (it
// would, for WatchConfig).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
