package tests

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/bus-dev/bus/server"
)

// clientScenarios run through nats.go against a server URL and describe
// what the client observed. The same scenario against bus and against the
// reference must observe the same thing.
var clientScenarios = []struct {
	name string
	run  func(t *testing.T, url string) string
}{
	{"deliveries per subscription in order", func(t *testing.T, url string) string {
		nc := connect(t, url)
		patterns := []string{"a.*", "a.>", ">", "a.b.c", "*.b.*", "a.*.c"}
		subs := make([]*nats.Subscription, len(patterns))
		for i, p := range patterns {
			subs[i], _ = nc.SubscribeSync(p)
		}
		for i, subj := range []string{"a.b", "a.b.c", "x.b.y", "a", "a.x.c", "a.b.c.d"} {
			_ = nc.Publish(subj, []byte(fmt.Sprint(i)))
		}
		_ = nc.Flush()
		var out []string
		for i, p := range patterns {
			out = append(out, p+":"+drain(subs[i]))
		}
		return strings.Join(out, " ")
	}},
	{"queue groups", func(t *testing.T, url string) string {
		nc := connect(t, url)
		var subs []*nats.Subscription
		for _, q := range []string{"A", "A", "A", "B", "B", ""} {
			var s *nats.Subscription
			if q == "" {
				s, _ = nc.SubscribeSync("jobs.*")
			} else {
				s, _ = nc.QueueSubscribeSync("jobs.*", q)
			}
			subs = append(subs, s)
		}
		for i := 0; i < 300; i++ {
			_ = nc.Publish("jobs.x", []byte(fmt.Sprint(i)))
		}
		_ = nc.Flush()
		count := func(ss []*nats.Subscription) int {
			n := 0
			for _, s := range ss {
				m, _, _ := s.Pending()
				n += m
			}
			return n
		}
		return fmt.Sprintf("A=%d B=%d plain=%d", count(subs[:3]), count(subs[3:5]), count(subs[5:]))
	}},
	{"invalid subscription subject closes the client", func(t *testing.T, url string) string {
		closed := make(chan struct{})
		nc := connect(t, url, nats.ClosedHandler(func(*nats.Conn) { close(closed) }))
		_, _ = nc.SubscribeSync("foo.>.bar")
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			return "still open"
		}
		return fmt.Sprintf("status=%v err=%v", nc.Status(), nc.LastError())
	}},
	{"requests", func(t *testing.T, url string) string {
		nc := connect(t, url)
		_, _ = nc.Subscribe("svc", func(m *nats.Msg) { _ = m.Respond([]byte("pong:" + string(m.Data))) })
		_ = nc.Flush()
		r, err := nc.Request("svc", []byte("x"), 2*time.Second)
		if err != nil {
			return err.Error()
		}
		_, err = nc.Request("nobody", nil, 2*time.Second)
		old := connect(t, url, nats.UseOldRequestStyle())
		_, oldErr := old.Request("nobody", nil, 2*time.Second)
		return fmt.Sprintf("reply=%s nobody=%v old-style=%v", r.Data, err, oldErr)
	}},
	{"auto unsubscribe", func(t *testing.T, url string) string {
		nc := connect(t, url)
		s, _ := nc.SubscribeSync("u")
		_ = s.AutoUnsubscribe(2)
		for i := 0; i < 5; i++ {
			_ = nc.Publish("u", []byte(fmt.Sprint(i)))
		}
		_ = nc.Flush()
		return drain(s)
	}},
	{"headers", func(t *testing.T, url string) string {
		nc := connect(t, url)
		s, _ := nc.SubscribeSync("h")
		m := nats.NewMsg("h")
		m.Header.Set("A", "1")
		m.Header.Add("B", "2")
		m.Header.Add("B", "3")
		_ = nc.PublishMsg(m)
		got, err := s.NextMsg(2 * time.Second)
		if err != nil {
			return err.Error()
		}
		keys := make([]string, 0, len(got.Header))
		for k, v := range got.Header {
			keys = append(keys, k+"="+strings.Join(v, ","))
		}
		sort.Strings(keys)
		return strings.Join(keys, ";")
	}},
	{"no echo and limits", func(t *testing.T, url string) string {
		nc := connect(t, url, nats.NoEcho())
		s, _ := nc.SubscribeSync("e")
		_ = nc.Publish("e", nil)
		_ = nc.Flush()
		n, _, _ := s.Pending()
		return fmt.Sprintf("own=%d max_payload=%d headers=%v", n, nc.MaxPayload(), nc.HeadersSupported())
	}},
	{"invalid publish subjects are dropped", func(t *testing.T, url string) string {
		nc := connect(t, url)
		s, _ := nc.SubscribeSync(">")
		for _, subj := range []string{"foo..bar", ".foo", "foo.", "foo.*", "foo.>"} {
			_ = nc.Publish(subj, nil)
		}
		_ = nc.Flush()
		// Flush's PONG comes after every message the server routed to us.
		var got []string
		for n, _, _ := s.Pending(); n > 0; n-- {
			m, err := s.NextMsg(time.Second)
			if err != nil {
				break
			}
			got = append(got, m.Subject)
		}
		return strings.Join(got, ",")
	}},
}

// drain returns the payloads already delivered to s, in order.
func drain(s *nats.Subscription) string {
	var got []string
	for {
		n, _, _ := s.Pending()
		if n == 0 {
			break
		}
		m, err := s.NextMsg(time.Second)
		if err != nil {
			break
		}
		got = append(got, string(m.Data))
	}
	return strings.Join(got, ",")
}

func TestClientObservationsMatchReference(t *testing.T) {
	bus := startBus(t, server.Options{})
	ref := startReference(t, false)
	for _, sc := range clientScenarios {
		t.Run(sc.name, func(t *testing.T) {
			want := sc.run(t, "nats://"+refAddr(ref))
			got := sc.run(t, busURL(bus))
			if got != want {
				t.Errorf("bus observed %q\nnats-server observed %q", got, want)
			} else {
				t.Logf("both observed %q", got)
			}
		})
	}
}
