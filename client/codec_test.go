package client_test

import (
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/bus-dev/bus/client"
)

func TestCodecs(t *testing.T) {
	t.Parallel()
	in := order{ID: "o-1", Total: 12.5, Items: []string{"tea", "cup"}}
	for _, codec := range []client.Codec{client.MsgPack{}, client.JSON{}} {
		t.Run(codec.ContentType(), func(t *testing.T) {
			t.Parallel()
			b, err := codec.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			var out order
			if err := codec.Unmarshal(b, &out); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(in, out) {
				t.Fatalf("round trip: got %+v, want %+v", out, in)
			}
			if err := codec.Unmarshal([]byte{0xc1, '{'}, &out); err == nil {
				t.Fatal("garbage decoded without error")
			}
		})
	}
}

// Other languages' msgpack libraries see the json tag names as map keys.
func TestMsgPackUsesJSONTagNames(t *testing.T) {
	t.Parallel()
	b, err := client.MsgPack{}.Marshal(order{ID: "o-1", Total: 2})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := msgpack.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["id"] != "o-1" || m["total"] != 2.0 {
		t.Fatalf("msgpack map %v, want keys id and total", m)
	}
	if _, ok := m["items"]; ok {
		t.Fatalf("omitempty ignored: %v", m)
	}
}
