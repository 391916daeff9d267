package client_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/bus-dev/bus/client"
)

func TestRetryPolicySchedule(t *testing.T) {
	t.Parallel()
	p := client.RetryPolicy{InitialDelay: 100 * time.Millisecond, MaxDelay: time.Second, Multiplier: 3}.WithDefaults()
	want := []time.Duration{100 * time.Millisecond, 300 * time.Millisecond, 900 * time.Millisecond, time.Second, time.Second}
	for i, w := range want {
		if got := p.Base(i + 1); got != w {
			t.Errorf("Base(%d) = %v, want %v", i+1, got, w)
		}
	}
	if got := p.Base(10_000); got != time.Second {
		t.Errorf("Base(10000) = %v, want the cap", got)
	}
}

func TestRetryPolicyJitterBounds(t *testing.T) {
	t.Parallel()
	p := client.RetryPolicy{InitialDelay: time.Second, Jitter: 0.25}.WithDefaults()
	for attempt := 1; attempt <= 8; attempt++ {
		base := p.Base(attempt)
		lo, hi := time.Duration(float64(base)*0.75), time.Duration(float64(base)*1.25)
		for _, r := range []float64{0, 0.1, 0.5, 0.9, 0.999999} {
			d := p.Delay(attempt, r)
			if d < lo || d >= hi {
				t.Errorf("Delay(%d, %v) = %v, outside [%v, %v)", attempt, r, d, lo, hi)
			}
		}
		if p.Delay(attempt, 0) != lo || p.Delay(attempt, 0.5) != base {
			t.Errorf("attempt %d: r=0 gives %v (want %v), r=0.5 gives %v (want %v)", attempt, p.Delay(attempt, 0), lo, p.Delay(attempt, 0.5), base)
		}
	}
}

func TestRetryPolicyDefaults(t *testing.T) {
	t.Parallel()
	if got, want := (client.RetryPolicy{}).WithDefaults(), client.DefaultRetryPolicy(); got != want {
		t.Fatalf("zero policy = %+v, want %+v", got, want)
	}
	if got := (client.RetryPolicy{Jitter: -1}).WithDefaults(); got.Jitter != 0 || got.Delay(1, 0) != time.Second {
		t.Fatalf("negative jitter should disable it: %+v", got)
	}
}

func TestPermanent(t *testing.T) {
	t.Parallel()
	base := errors.New("card declined")
	err := fmt.Errorf("charge: %w", client.Permanent(base))
	if !client.IsPermanent(err) || !errors.Is(err, base) || err.Error() != "charge: card declined" {
		t.Fatalf("wrapped permanent error %v lost its marking or cause", err)
	}
	if client.IsPermanent(base) || client.Permanent(nil) != nil {
		t.Fatal("plain errors and nil must not be permanent")
	}
}
