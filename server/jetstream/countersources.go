package jetstream

import (
	"bytes"
	"encoding/json"
	"math/big"

	"github.com/bus-dev/bus/jetlog"
)

// Counters across sources, as the reference sums them: a counter stream
// sourcing counter streams stores, for each copied total, its own total
// moved by the difference between that total and the one the same origin
// stream's subject contributed before. What each origin subject last
// contributed rides along in the Nats-Counter-Sources header of the
// subject's last value, {"<stream>":{"<origin subject>":"<total>"}}, and
// the stored Nats-Incr is that difference, so the arithmetic holds
// whatever order the copies arrive in, and across restarts.

// counterSources is the body of Nats-Counter-Sources.
type counterSources map[string]map[string]string

// sourceCounter stores the copy m of a counter total from origin stream
// origin, whose subject there was originSubject, into counter stream st
// (already on its own subject, with Nats-Stream-Source).
func (st *stream) sourceCounter(m jetlog.Msg, origin, originSubject string) (jetlog.PubAck, error) {
	var sourced counterValue
	value, ok := new(big.Int), json.Unmarshal(m.Data, &sourced) == nil
	if ok {
		_, ok = value.SetString(sourced.Val, 10)
	}
	if !ok {
		return jetlog.PubAck{}, errCounterBroken()
	}
	_, ack, err := st.appendCounter(m.Subject, func(total *big.Int, raw []byte) (jetlog.Msg, error) {
		sources := counterSources{}
		if raw != nil && json.Unmarshal(raw, &sources) != nil {
			return jetlog.Msg{}, errCounterBroken()
		}
		if sources[origin] == nil {
			sources[origin] = map[string]string{}
		}
		previous, ok := new(big.Int).SetString(sources[origin][originSubject], 10)
		if !ok {
			previous = new(big.Int)
		}
		sources[origin][originSubject] = value.String()
		diff := new(big.Int).Sub(value, previous)
		total.Add(total, diff)
		body, _ := json.Marshal(sources) // strings only: cannot fail
		out := m
		out.Header = withHeaders(withoutHeaders(m.Header, func(k []byte) bool {
			return bytes.EqualFold(k, []byte(hdrIncr)) || bytes.EqualFold(k, []byte(hdrCounterSources))
		}), hdrIncr, diff.String(), hdrCounterSources, string(body))
		out.Data = counterBody(total)
		return out, nil
	})
	return ack, err
}
