package tests

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// A KV bucket used from another account through an import of the whole
// $JS.API (with a prefix) and of $KV.>, as nats.go's
// TestKeyValueCrossAccounts does: put, purge and PurgeDeletes from the
// importing account, on bus and the reference alike.
func TestAccountsKVThroughImportMatchesReference(t *testing.T) {
	t.Parallel()
	p := startConfPair(t, `
listen: 127.0.0.1:-1
http: 127.0.0.1:-1
jetstream { store_dir: "STORE" }
accounts {
  A {
    users: [ {user: a, password: a} ]
    jetstream: enabled
    exports: [ {service: '$JS.API.>'}, {service: '$KV.>'}, {stream: 'accI.>'} ]
  }
  I {
    users: [ {user: i, password: i} ]
    imports: [
      {service: {account: A, subject: '$JS.API.>'}, to: 'fromA.>'}
      {service: {account: A, subject: '$KV.>'}, to: 'fromA.$KV.>'}
      {stream: {subject: 'accI.>', account: A}}
    ]
  }
}
`)
	bothSides(t, "nats://"+p.busClient, "nats://"+p.refClient, func(t *testing.T, url string) []string {
		js1, err := connect(t, url, nats.UserInfo("a", "a")).JetStream(nats.MaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		kv1, err := js1.CreateKeyValue(&nats.KeyValueConfig{Bucket: "Map"})
		if err != nil {
			t.Fatal(err)
		}
		js2, err := connect(t, url, nats.UserInfo("i", "i"), nats.CustomInboxPrefix("accI")).JetStream(nats.APIPrefix("fromA"), nats.MaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var steps []string
		kv2, err := js2.KeyValue("Map")
		steps = append(steps, "bind from I: "+errText(err))
		if err != nil {
			return steps
		}
		_, err = kv2.Put("map", []byte("v"))
		steps = append(steps, "put from I: "+errText(err))
		steps = append(steps, "purge from I: "+errText(kv2.Purge("map")))
		steps = append(steps, "purge deletes from I: "+errText(kv2.PurgeDeletes(nats.DeleteMarkersOlderThan(-1))))
		si, err := js1.StreamInfo("KV_Map")
		if err == nil {
			steps = append(steps, fmt.Sprintf("messages left: %d", si.State.Msgs))
		}
		_, err = kv1.Get("map")
		steps = append(steps, "get from A: "+errText(err))
		t.Log(lines(steps...))
		return steps
	})
}
