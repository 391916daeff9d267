package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

type payload struct {
	N int    `json:"n"`
	S string `json:"s"`
}

func testConn(t *testing.T) *Conn {
	t.Helper()
	now := time.Date(2025, 3, 1, 12, 0, 0, 5, time.UTC)
	return &Conn{opts: Options{Now: func() time.Time { return now }, NewID: func() string { return "id-1" }}.withDefaults()}
}

func TestEventRoundTrip(t *testing.T) {
	t.Parallel()
	c := testConn(t)
	for _, codec := range []Codec{MsgPack{}, JSON{}} {
		t.Run(codec.ContentType(), func(t *testing.T) {
			t.Parallel()
			ctx := ContextWithTraceParent(context.Background(), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
			ev := Event[payload]{Header: nats.Header{"X-Extra": {"1"}}, Data: payload{N: 7, S: "x"}}
			msg, err := encodeEvent(ctx, c, "orders.new", &ev, codec)
			if err != nil {
				t.Fatal(err)
			}
			for h, want := range map[string]string{
				HeaderContentType: codec.ContentType(), HeaderSpecVersion: "1.0", HeaderID: "id-1",
				HeaderMsgID: "id-1", HeaderType: "client.payload", HeaderSource: "bus-client",
				HeaderTime: "2025-03-01T12:00:00.000000005Z", "X-Extra": "1",
			} {
				if got := msg.Header.Get(h); got != want {
					t.Errorf("header %s = %q, want %q", h, got, want)
				}
			}
			tp := msg.Header.Get(HeaderTraceParent)
			if !strings.HasPrefix(tp, "00-0af7651916cd43dd8448eb211c80319c-") || strings.Contains(tp, "b7ad6b7169203331") || !validTraceParent(tp) {
				t.Errorf("traceparent %q does not continue the context's trace with a new parent id", tp)
			}
			// The receiver's fallback codec differs: Content-Type decides.
			got, err := decodeEvent[payload](msg.Subject, msg.Header, msg.Data, otherCodec(codec))
			if err != nil {
				t.Fatal(err)
			}
			if got.Data != ev.Data || got.ID != "id-1" || got.Type != "client.payload" || got.Subject != "orders.new" ||
				!got.Time.Equal(c.opts.Now()) || got.TraceParent != tp || got.Source != "bus-client" {
				t.Errorf("decoded %+v, want %+v", got, ev)
			}
		})
	}
}

func otherCodec(c Codec) Codec {
	if _, ok := c.(JSON); ok {
		return MsgPack{}
	}
	return JSON{}
}

func TestDecodePlainMessage(t *testing.T) {
	t.Parallel()
	// From a publisher that knows nothing of envelopes: the fallback
	// codec reads it and the id falls back to Nats-Msg-Id.
	ev, err := decodeEvent[payload]("s", nats.Header{HeaderMsgID: {"m-9"}}, []byte(`{"n":3}`), JSON{})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Data.N != 3 || ev.ID != "m-9" || !ev.Time.IsZero() {
		t.Fatalf("got %+v", ev)
	}
	if _, err := decodeEvent[payload]("s", nil, nil, JSON{}); err != nil {
		t.Fatalf("empty message: %v", err)
	}
	_, err = decodeEvent[payload]("s", nats.Header{HeaderContentType: {"text/csv"}}, []byte("1,2"), JSON{})
	if !errors.Is(err, ErrUnknownContentType) {
		t.Fatalf("text/csv: got %v, want ErrUnknownContentType", err)
	}
}

func TestTraceParent(t *testing.T) {
	t.Parallel()
	fresh := childTraceParent("")
	if !validTraceParent(fresh) || !strings.HasSuffix(fresh, "-01") {
		t.Fatalf("new trace %q invalid", fresh)
	}
	if childTraceParent(fresh)[:36] != fresh[:36] {
		t.Fatal("child changed the trace id")
	}
	for _, bad := range []string{
		"", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331", // too short
		"00-00000000000000000000000000000000-b7ad6b7169203331-01", // zero trace
		"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", // zero span
		"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01", // upper case
		"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", // forbidden version
	} {
		if validTraceParent(bad) {
			t.Errorf("%q accepted", bad)
		}
		if TraceParent(ContextWithTraceParent(context.Background(), bad)) != "" {
			t.Errorf("%q stored in the context", bad)
		}
	}
}
