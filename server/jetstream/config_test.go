package jetstream

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

func TestDeadLetterSubjectIsChecked(t *testing.T) {
	t.Parallel()
	scfg := streamConfig{Name: "S", Subjects: []string{"orders.>", "dlq.orders"}}
	for _, c := range []struct {
		config string
		err    string // part of the error; "" for none
	}{
		{`{"durable_name":"C","x_bus_dead_letter_subject":"dlq.orders","filter_subject":"orders.>"}`, ""},
		{`{"durable_name":"C","x_bus_dead_letter_subject":"elsewhere"}`, ""},
		{`{"durable_name":"C","x_bus_dead_letter_subject":"dlq.orders"}`, "would be delivered to this consumer again"},
		{`{"durable_name":"C","x_bus_dead_letter_subject":"orders.dead","filter_subject":"orders.>"}`, "would be delivered to this consumer again"},
		{`{"durable_name":"C","x_bus_dead_letter_subject":"$JS.API.STREAM.DELETE.OTHER"}`, "server-internal"},
		{`{"durable_name":"C","x_bus_dead_letter_subject":"$SYS.REQ.SERVER.PING"}`, "server-internal"},
		{`{"durable_name":"C","x_bus_dead_letter_subject":"_INBOX.someone.else"}`, "server-internal"},
		{`{"durable_name":"C","x_bus_dead_letter_subject":"dlq.*"}`, "not a valid subject"},
	} {
		var cfg consumerConfig
		if err := json.Unmarshal([]byte(c.config), &cfg); err != nil {
			t.Fatal(err)
		}
		e := cfg.normalize(scfg)
		switch {
		case c.err == "" && e != nil:
			t.Errorf("%s: %v", c.config, e)
		case c.err != "" && (e == nil || !strings.Contains(e.Description, c.err)):
			t.Errorf("%s: got %v, want an error with %q", c.config, e, c.err)
		}
	}
}

func TestSyncIntervalIsBounded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		interval int64
		ok       bool
	}{
		{0, true}, {1, false}, {-5, false}, {int64(minSyncInterval), true}, {int64(maxSyncInterval) + 1, false},
	} {
		cfg := streamConfig{Name: "S", Durability: "interval", SyncInterval: c.interval}
		if e := cfg.normalize(); (e == nil) != c.ok {
			t.Errorf("x_bus_sync_interval %d: %v", c.interval, e)
		}
	}
}

func TestErrorsKeepPathsFromClients(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		&fs.PathError{Op: "open", Path: "/var/lib/bus/jetstream/S/stream.meta", Err: syscall.EMFILE},
		fmt.Errorf("jetlog: open /var/lib/bus/jetstream/S: %w", errors.New("boom")),
	} {
		if got := errStreamGeneric(err).Description; strings.Contains(got, "/var/lib") {
			t.Errorf("client sees the path: %q", got)
		}
	}
	if e := errStreamGeneric(&fs.PathError{Op: "write", Path: "/x/y", Err: syscall.ENOSPC}); e.ErrCode != 10047 {
		t.Errorf("disk full: %+v", e)
	}
}
