package mqtt

import (
	"reflect"
	"testing"
)

// FuzzDecode5 decodes any bytes as the body of each MQTT 5 packet type a
// server reads: nothing panics, and what decodes encodes back to bytes
// that decode to the same packet (the properties, the filters and their
// options, the reason codes).
func FuzzDecode5(f *testing.F) {
	props := Properties{SessionExpiry: 60, ContentType: []byte("text/plain"), User: []UserProperty{{[]byte("k"), []byte("v")}}}
	props.Set(PropSessionExpiry)
	for _, pkt := range [][]byte{
		AppendConnect(nil, &Connect{Level: 5, ClientID: []byte("c"), HasWill: true, WillTopic: []byte("w"), WillMessage: []byte("m")}),
		AppendPublish5(nil, &Publish{QoS: 1, PacketID: 1, Topic: []byte("a/b"), Payload: []byte("x")}),
		AppendAck5(nil, PUBACK, 1, ReasonQuotaExceeded, nil),
		AppendSubscribe5(nil, 1, &Properties{SubscriptionIDs: []uint32{5}}, [][]byte{[]byte("a/#")}, []SubOptions{{QoS: 1, NoLocal: true}}),
		AppendSubscribe5(nil, 2, nil, [][]byte{[]byte("a/#")}, nil),
		AppendReasoned(nil, DISCONNECT, ReasonDisconnectWithWill, nil),
		AppendReasoned(nil, AUTH, ReasonContinueAuthentication, nil),
		AppendProperties(nil, &props),
	} {
		h, err := ParseHeader(pkt, 1<<16)
		if err != nil {
			body := pkt // a bare property block
			f.Add(byte(0), body)
			continue
		}
		f.Add(byte(h.Type)<<4|h.Flags, pkt[h.Len:])
	}
	f.Fuzz(func(t *testing.T, first byte, body []byte) {
		switch t2 := PacketType(first >> 4); t2 {
		case CONNECT:
			var c Connect
			if DecodeConnect(body, &c) == nil {
				var again Connect
				pkt := AppendConnect(nil, &c)
				if err := DecodeConnect(pkt[headerLen(pkt):], &again); err != nil {
					t.Fatalf("re-encoded CONNECT: %v", err)
				}
				sameProps(t, c.Props, again.Props)
				sameProps(t, c.WillProps, again.WillProps)
			}
		case PUBLISH:
			var p Publish
			flags := first & 0x0f &^ 0x06 // QoS from the body's first byte
			if len(body) > 0 {
				flags |= (body[0] % 3) << 1
			}
			if flags&0x06 == 0 {
				flags &^= 0x08
			}
			if DecodePublish5(flags, body, CtxPublishIn, &p) == nil {
				pkt := AppendPublish5(nil, &p)
				var again Publish
				if err := DecodePublish5(pkt[0]&0x0f, pkt[headerLen(pkt):], CtxPublishIn, &again); err != nil {
					t.Fatalf("re-encoded PUBLISH: %v", err)
				}
				sameProps(t, p.Props, again.Props)
				if string(again.Payload) != string(p.Payload) || string(again.Topic) != string(p.Topic) {
					t.Fatal("re-encoded PUBLISH differs")
				}
			}
		case PUBACK, PUBREC, PUBREL, PUBCOMP:
			var props Properties
			if id, reason, err := DecodeAck5(t2, body, &props); err == nil {
				pkt := AppendAck5(nil, t2, id, reason, &props)
				var again Properties
				if id2, reason2, err := DecodeAck5(t2, pkt[headerLen(pkt):], &again); err != nil || id2 != id || reason2 != reason {
					t.Fatalf("re-encoded %s: %v", t2, err)
				}
				sameProps(t, props, again)
			}
		case SUBSCRIBE, UNSUBSCRIBE:
			if fs, err := DecodeFilters5(t2, body); err == nil {
				for _, _, ok := fs.Next(); ok; _, _, ok = fs.Next() {
					if o := fs.Options(); o.Byte() > 0x3f {
						t.Fatalf("options %+v", o)
					}
				}
			}
		case DISCONNECT, AUTH:
			var props Properties
			if reason, err := DecodeReasoned(t2, body, &props); err == nil {
				pkt := AppendReasoned(nil, t2, reason, &props)
				var again Properties
				if r2, err := DecodeReasoned(t2, pkt[headerLen(pkt):], &again); err != nil || r2 != reason {
					t.Fatalf("re-encoded %s: %v", t2, err)
				}
				sameProps(t, props, again)
			}
		default:
			var p Properties
			ctx := PropContext(first % byte(len(allowedProps)))
			if _, err := DecodeProperties(body, ctx, &p); err == nil {
				var again Properties
				if _, err := DecodeProperties(AppendProperties(nil, &p), ctx, &again); err != nil {
					t.Fatalf("re-encoded properties: %v", err)
				}
				sameProps(t, p, again)
			}
		}
	})
}

func headerLen(pkt []byte) int {
	h, _ := ParseHeader(pkt, MaxRemainingLength+5)
	return h.Len
}

func sameProps(t *testing.T, a, b Properties) {
	t.Helper()
	ap, au := comparable(a)
	bp, bu := comparable(b)
	if !reflect.DeepEqual(ap, bp) || !reflect.DeepEqual(au, bu) {
		t.Fatalf("properties differ:\n%+v %v\n%+v %v", ap, au, bp, bu)
	}
}
