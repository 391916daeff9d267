package jetstream

import (
	"time"

	"golang.org/x/time/rate"
)

// Push rate limit, as the reference has it: a push consumer with
// rate_limit_bps delivers at most that many bits a second, measured on
// each message's subject, headers and payload, with a burst of the
// stream's max_msg_size (or the default max payload, 1 MiB): a message
// waits until the bucket holds its size. A message larger than the burst
// would never fit, and goes out once the bucket is full (the reference's
// would stall for good). Pull consumers refuse the setting (10086). The
// bucket reads the machine's clock, so a test drives it with a fake one.

// defaultRateBurst is the burst without a stream max_msg_size: the
// server's default max_payload.
const defaultRateBurst = 1 << 20

// pushRate is the bucket of a rate-limited push consumer and the time
// the message it held back may go.
type pushRate struct {
	limiter *rate.Limiter
	burst   int
	at      time.Time // a held-back message fits from then; zero: none
}

// newPushRate returns nil for a consumer without a rate limit.
func newPushRate(cfg consumerConfig, maxMsgSize int) *pushRate {
	if cfg.RateLimit == 0 || cfg.DeliverSubject == "" {
		return nil
	}
	burst := defaultRateBurst
	if maxMsgSize > 0 {
		burst = maxMsgSize
	}
	return &pushRate{limiter: rate.NewLimiter(rate.Limit(cfg.RateLimit/8), burst), burst: burst}
}

// allows takes size bytes from the bucket at now, or reports when they
// will be there (and takes nothing).
func (p *pushRate) allows(size int, now time.Time) bool {
	size = min(size, p.burst)
	r := p.limiter.ReserveN(now, size)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		p.at = now.Add(d)
		return false
	}
	p.at = time.Time{}
	return true
}
