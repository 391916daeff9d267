package tests

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// A stored message is checked against the reader's subscribe rights on
// every path besides delivery: a user may not create a consumer over
// subjects it may not read, nor get a message it may not read (message
// or direct get), nor have its dead letters republished where it may not
// publish. reference_stored_reads turns the reading checks off.
func TestJetStreamStoredReadsNeedSubscribeRights(t *testing.T) {
	t.Parallel()
	for _, reference := range []bool{false, true} {
		t.Run(map[bool]string{false: "bus", true: "reference rule"}[reference], func(t *testing.T) {
			t.Parallel()
			reader := server.User{Name: "reader", Password: "r", Permissions: &server.Permissions{
				Publish:   &server.SubjectPermission{Deny: []string{"dlq.secret"}},
				Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>", "orders.public.>"}},
			}}
			s := startBus(t, server.Options{JetStream: true, Authorization: server.Authorization{
				Users: []server.User{{Name: "admin", Password: "a"}, reader}, ReferenceStoredReads: reference,
			}})
			admin, rd := jsAs(t, s, "admin", "a"), jsAs(t, s, "reader", "r")
			ctx := ctxT(t)
			if _, err := admin.CreateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}}); err != nil {
				t.Fatal(err)
			}
			for _, subj := range []string{"orders.public.1", "orders.secret.1"} {
				if _, err := admin.Publish(ctx, subj, []byte(subj)); err != nil {
					t.Fatal(err)
				}
			}
			refused := func(what string, err error) {
				t.Helper()
				var apiErr *jetstream.APIError
				switch {
				case reference && err != nil:
					t.Errorf("%s under the reference rule: %v", what, err)
				case !reference && (!errors.As(err, &apiErr) || apiErr.ErrorCode != 10403):
					t.Errorf("%s: %v, want err_code 10403", what, err)
				}
			}
			_, err := rd.CreateOrUpdateConsumer(ctx, "ORDERS", jetstream.ConsumerConfig{Durable: "ALL", AckPolicy: jetstream.AckExplicitPolicy})
			refused("an unfiltered consumer", err)
			_, err = rd.CreateOrUpdateConsumer(ctx, "ORDERS", jetstream.ConsumerConfig{Durable: "WIDE", FilterSubject: "orders.>", AckPolicy: jetstream.AckExplicitPolicy})
			refused("a consumer filtered wider than the rights", err)
			if _, err := rd.CreateOrUpdateConsumer(ctx, "ORDERS", jetstream.ConsumerConfig{Durable: "PUB", FilterSubject: "orders.public.>", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
				t.Fatalf("a consumer inside the rights: %v", err)
			}
			st, err := rd.Stream(ctx, "ORDERS")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.GetMsg(ctx, 1); err != nil {
				t.Fatalf("message get inside the rights: %v", err)
			}
			_, err = st.GetMsg(ctx, 2)
			refused("a message get of a secret", err)
			// Direct gets answer with a status, not an API error.
			if _, err := admin.UpdateStream(ctx, jetstream.StreamConfig{Name: "ORDERS", Subjects: []string{"orders.>"}, AllowDirect: true}); err != nil {
				t.Fatal(err)
			}
			direct, err := rd.Stream(ctx, "ORDERS")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := direct.GetMsg(ctx, 1); err != nil {
				t.Fatalf("direct get inside the rights: %v", err)
			}
			if _, err := direct.GetMsg(ctx, 2); reference && err != nil || !reference && err == nil {
				t.Errorf("direct get of a secret (reference rule %v): %v", reference, err)
			}
			// A batch or multi_last get stops at the first message the
			// reader may not read.
			want := map[bool]string{false: "[1 403]", true: "[1 2 204]"}[reference]
			for _, body := range []string{`{"seq":1,"batch":2}`, `{"multi_last":["orders.>"]}`} {
				if got := fmt.Sprint(directAnswers(t, rd.Conn(), "ORDERS", body)); got != want {
					t.Errorf("direct get %s (reference rule %v): %s, want %s", body, reference, got, want)
				}
			}
			// The dead-letter subject is checked against the publish rights,
			// whatever the read rule.
			resp, err := rd.Conn().Request("$JS.API.CONSUMER.CREATE.ORDERS.DLQ", []byte(`{"stream_name":"ORDERS","config":{"durable_name":"DLQ","ack_policy":"explicit","filter_subject":"orders.public.>","x_bus_dead_letter_subject":"dlq.secret"}}`), 2*time.Second)
			if err != nil || !strings.Contains(string(resp.Data), `"err_code":10403`) {
				t.Fatalf("dead letters to a subject the creator may not publish to: %v %s", err, resp.Data)
			}
		})
	}
}

// directAnswers sends a direct get and returns what answers it until a
// status: each message's Nats-Sequence, then the status code.
func directAnswers(t *testing.T, nc *nats.Conn, stream, body string) []string {
	t.Helper()
	inbox := nats.NewInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe() //nolint:errcheck // the test ends with it
	if err := nc.PublishRequest("$JS.API.DIRECT.GET."+stream, inbox, []byte(body)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		m, err := sub.NextMsg(5 * time.Second)
		if err != nil {
			t.Fatalf("direct get %s: %v after %v", body, err, out)
		}
		if status := m.Header.Get("Status"); status != "" {
			return append(out, status)
		}
		out = append(out, m.Header.Get("Nats-Sequence"))
	}
}
