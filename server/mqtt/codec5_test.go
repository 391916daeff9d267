package mqtt

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// body splits one whole packet into its header and body.
func body(t *testing.T, pkt []byte) (Header, []byte) {
	t.Helper()
	h, err := ParseHeader(pkt, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if h.Size() != len(pkt) {
		t.Fatalf("packet of %d bytes, header says %d", len(pkt), h.Size())
	}
	return h, pkt[h.Len:]
}

// TestConnect5Bytes decodes an MQTT 5 CONNECT written out by hand from
// the specification (section 3.1), not by this package's encoder.
func TestConnect5Bytes(t *testing.T) {
	pkt := []byte{
		0x10, 0,
		0, 4, 'M', 'Q', 'T', 'T', 5,
		0xc6,  // user name, password, will QoS 0, will, clean start
		0, 60, // keepalive
		15,                     // properties
		0x11, 0, 0, 0x0e, 0x10, // session expiry 3600
		0x21, 0, 20, // receive maximum 20
		0x26, 0, 1, 'k', 0, 1, 'v', // user property k=v
		0, 2, 'i', 'd', // client id
		5,                // will properties
		0x18, 0, 0, 0, 9, // will delay 9
		0, 1, 'w', // will topic
		0, 2, 'b', 'y', // will payload
		0, 1, 'u', // user
		0, 1, 'p', // password
	}
	pkt[1] = byte(len(pkt) - 2)
	_, b := body(t, pkt)
	var c Connect
	if err := DecodeConnect(b, &c); err != nil {
		t.Fatal(err)
	}
	if c.Level != 5 || !c.CleanSession || c.KeepAlive != 60 || string(c.ClientID) != "id" ||
		string(c.WillTopic) != "w" || string(c.WillMessage) != "by" || string(c.Username) != "u" || string(c.Password) != "p" {
		t.Fatalf("decoded %+v", c)
	}
	if !c.Props.Has(PropSessionExpiry) || c.Props.SessionExpiry != 3600 || c.Props.ReceiveMaximum != 20 || c.Props.Has(PropTopicAliasMaximum) {
		t.Fatalf("properties %+v", c.Props)
	}
	if !c.WillProps.Has(PropWillDelay) || c.WillProps.WillDelay != 9 {
		t.Fatalf("will properties %+v", c.WillProps)
	}
	var users []string
	c.Props.EachUser(func(k, v []byte) bool { users = append(users, string(k)+"="+string(v)); return true })
	if !reflect.DeepEqual(users, []string{"k=v"}) {
		t.Fatalf("user properties %v", users)
	}
	// What the encoder writes for the same CONNECT decodes the same.
	again := AppendConnect(nil, &c)
	var c2 Connect
	if _, b2 := body(t, again); DecodeConnect(b2, &c2) != nil || c2.Props.SessionExpiry != 3600 || c2.WillProps.WillDelay != 9 {
		t.Fatalf("re-encoded: %+v", c2)
	}
}

func TestConnect5PasswordWithoutUser(t *testing.T) {
	pkt := AppendConnect(nil, &Connect{Level: 5, HasPassword: true, Password: []byte("tok"), ClientID: []byte("x")})
	_, b := body(t, pkt)
	var c Connect
	if err := DecodeConnect(b, &c); err != nil || string(c.Password) != "tok" {
		t.Fatalf("%v %+v", err, c)
	}
	pkt = AppendConnect(nil, &Connect{Level: 4, HasPassword: true, Password: []byte("tok"), ClientID: []byte("x")})
	_, b = body(t, pkt)
	if err := DecodeConnect(b, &c); !errors.Is(err, ErrMalformed) {
		t.Fatalf("3.1.1 password without user: %v", err)
	}
}

// TestPropertiesRefusals: each rule of section 2.2.2.2 and the value
// ranges of section 3, one block each.
func TestPropertiesRefusals(t *testing.T) {
	cases := []struct {
		name  string
		ctx   PropContext
		block []byte
	}{
		{"unknown id", CtxConnect, []byte{0x05, 0}},
		{"id past the table", CtxConnect, []byte{0x7f, 0}},
		{"not allowed here", CtxConnect, []byte{PropTopicAlias, 0, 1}},
		{"twice", CtxConnect, []byte{PropReceiveMaximum, 0, 1, PropReceiveMaximum, 0, 2}},
		{"receive maximum 0", CtxConnect, []byte{PropReceiveMaximum, 0, 0}},
		{"maximum packet size 0", CtxConnect, []byte{PropMaximumPacketSize, 0, 0, 0, 0}},
		{"flag of 2", CtxConnect, []byte{PropRequestProblemInfo, 2}},
		{"topic alias 0", CtxPublishIn, []byte{PropTopicAlias, 0, 0}},
		{"subscription id from a client's PUBLISH", CtxPublishIn, []byte{PropSubscriptionID, 1}},
		{"subscription id 0", CtxSubscribe, []byte{PropSubscriptionID, 0}},
		{"two subscription ids", CtxSubscribe, []byte{PropSubscriptionID, 1, PropSubscriptionID, 2}},
		{"subscription id of five bytes", CtxSubscribe, []byte{PropSubscriptionID, 0x80, 0x80, 0x80, 0x80, 1}},
		{"string cut", CtxPublishIn, []byte{PropContentType, 0, 5, 'a'}},
		{"string not UTF-8", CtxPublishIn, []byte{PropContentType, 0, 1, 0xff}},
		{"u32 cut", CtxPublishIn, []byte{PropMessageExpiry, 0, 0}},
		{"user property without value", CtxPublishIn, []byte{PropUserProperty, 0, 1, 'k'}},
	}
	for _, c := range cases {
		b := append(appendVarInt(nil, len(c.block)), c.block...)
		var p Properties
		if _, err := DecodeProperties(b, c.ctx, &p); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want malformed", c.name, err)
		}
	}
	var p Properties
	if _, err := DecodeProperties([]byte{5, PropReceiveMaximum, 0, 1}, CtxConnect, &p); !errors.Is(err, ErrMalformed) {
		t.Errorf("block longer than the packet: %v", err)
	}
	// A server's PUBLISH names every subscription it matched.
	if _, err := DecodeProperties([]byte{4, PropSubscriptionID, 1, PropSubscriptionID, 2}, CtxPublishOut, &p); err != nil || !reflect.DeepEqual(p.SubscriptionIDs, []uint32{1, 2}) {
		t.Errorf("two ids in a server's PUBLISH: %v %v", err, p.SubscriptionIDs)
	}
}

// randomProperties fills the properties ctx allows with random values.
func randomProperties(r *rand.Rand, ctx PropContext) Properties {
	var p Properties
	str := func() []byte { return []byte(fmt.Sprintf("s%d", r.IntN(1000))) }
	for id := byte(1); id <= maxPropID; id++ {
		if propKinds[id] == kindNone || allowedProps[ctx]&(1<<id) == 0 || r.IntN(2) == 0 {
			continue
		}
		switch propKinds[id] {
		case kindByte:
			p.Set(id)
			*p.byteField(id) = byte(r.IntN(2))
		case kindU16:
			p.Set(id)
			*p.u16Field(id) = uint16(1 + r.IntN(65535))
		case kindU32:
			p.Set(id)
			*p.u32Field(id) = 1 + r.Uint32()%(1<<31)
		case kindString, kindBinary:
			p.Set(id)
			*p.bytesField(id) = str()
		case kindVarInt:
			n := 1
			if ctx == CtxPublishOut {
				n += r.IntN(3)
			}
			for range n {
				p.SubscriptionIDs = append(p.SubscriptionIDs, 1+r.Uint32()%maxSubscriptionID)
			}
		case kindPair:
			for range r.IntN(4) {
				p.User = append(p.User, UserProperty{str(), str()})
			}
		}
	}
	return p
}

// comparable is p with its user properties listed as EachUser walks them.
func comparable(p Properties) (Properties, []string) {
	var users []string
	p.EachUser(func(k, v []byte) bool { users = append(users, string(k)+"="+string(v)); return true })
	p.User, p.decoded = nil, nil
	p.present &^= 1<<PropUserProperty | 1<<PropSubscriptionID // the lists say it
	if len(p.SubscriptionIDs) == 0 {
		p.SubscriptionIDs = nil
	}
	return p, users
}

// TestPropertiesRoundTrip: whatever a context allows, encoded and decoded
// again, is what it was, and the size is what was written.
func TestPropertiesRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 5000 {
		ctx := PropContext(i % len(allowedProps))
		p := randomProperties(r, ctx)
		b := AppendProperties(nil, &p)
		if len(b) != PropertiesSize(&p) {
			t.Fatalf("size %d, wrote %d", PropertiesSize(&p), len(b))
		}
		var got Properties
		rest, err := DecodeProperties(append(b, 0xee), ctx, &got)
		if err != nil || !bytes.Equal(rest, []byte{0xee}) {
			t.Fatalf("%s: %v, rest %x", ctx, err, rest)
		}
		wantP, wantU := comparable(p)
		gotP, gotU := comparable(got)
		if !reflect.DeepEqual(wantP, gotP) || !reflect.DeepEqual(wantU, gotU) {
			t.Fatalf("%s:\n got %+v %v\nwant %+v %v", ctx, gotP, gotU, wantP, wantU)
		}
	}
}

func TestPublish5RoundTrip(t *testing.T) {
	p := Publish{QoS: 1, PacketID: 9, Topic: []byte("a/b"), Payload: []byte("héllo")}
	p.Props.Set(PropPayloadFormat)
	p.Props.PayloadFormat = 1
	p.Props.Set(PropMessageExpiry)
	p.Props.MessageExpiry = 30
	p.Props.Set(PropResponseTopic)
	p.Props.ResponseTopic = []byte("reply/here")
	p.Props.User = []UserProperty{{[]byte("trace"), []byte("1")}}
	h, b := body(t, AppendPublish5(nil, &p))
	var got Publish
	if err := DecodePublish5(h.Flags, b, CtxPublishIn, &got); err != nil {
		t.Fatal(err)
	}
	if got.QoS != 1 || got.PacketID != 9 || string(got.Topic) != "a/b" || string(got.Payload) != "héllo" ||
		got.Props.MessageExpiry != 30 || string(got.Props.ResponseTopic) != "reply/here" || !got.PayloadFormatValid() {
		t.Fatalf("%+v", got)
	}
	got.Payload = []byte{0xff}
	if got.PayloadFormatValid() {
		t.Error("payload format 1 with invalid UTF-8 passed")
	}
	// A topic alias stands for an empty topic; neither is refused.
	var q Publish
	h, b = body(t, AppendPublish5(nil, &Publish{Topic: nil, Payload: []byte("x")}))
	if err := DecodePublish5(h.Flags, b, CtxPublishIn, &q); !errors.Is(err, ErrMalformed) {
		t.Errorf("empty topic without an alias: %v", err)
	}
	alias := Publish{Payload: []byte("x")}
	alias.Props.Set(PropTopicAlias)
	alias.Props.TopicAlias = 3
	h, b = body(t, AppendPublish5(nil, &alias))
	if err := DecodePublish5(h.Flags, b, CtxPublishIn, &q); err != nil || q.Props.TopicAlias != 3 {
		t.Errorf("topic alias: %v %+v", err, q.Props)
	}
}

// TestPublish5DecodeAllocatesNothing: the hot path, a PUBLISH with
// properties and user properties, decodes in place.
func TestPublish5DecodeAllocatesNothing(t *testing.T) {
	p := Publish{QoS: 1, PacketID: 9, Topic: []byte("a/b"), Payload: make([]byte, 64)}
	p.Props.Set(PropContentType)
	p.Props.ContentType = []byte("application/json")
	p.Props.User = []UserProperty{{[]byte("a"), []byte("1")}, {[]byte("b"), []byte("2")}}
	h, b := body(t, AppendPublish5(nil, &p))
	var got Publish
	n := 0
	allocs := testing.AllocsPerRun(100, func() {
		if err := DecodePublish5(h.Flags, b, CtxPublishIn, &got); err != nil {
			t.Fatal(err)
		}
		got.Props.EachUser(func(k, v []byte) bool { n += len(k) + len(v); return true })
	})
	if allocs != 0 {
		t.Errorf("%v allocations per decode", allocs)
	}
}

func TestAcks5(t *testing.T) {
	var props Properties
	// The short form: success.
	h, b := body(t, AppendAck5(nil, PUBACK, 4, ReasonSuccess, nil))
	if len(b) != 2 {
		t.Fatalf("short PUBACK of %d bytes", len(b))
	}
	if id, reason, err := DecodeAck5(h.Type, b, &props); err != nil || id != 4 || reason != 0 {
		t.Fatalf("%d %#x %v", id, reason, err)
	}
	why := Properties{ReasonString: []byte("not authorized")}
	why.Set(PropReasonString)
	h, b = body(t, AppendAck5(nil, PUBREC, 5, ReasonNotAuthorized, &why))
	if id, reason, err := DecodeAck5(h.Type, b, &props); err != nil || id != 5 || reason != ReasonNotAuthorized || string(props.ReasonString) != "not authorized" {
		t.Fatalf("%d %#x %v %q", id, reason, err, props.ReasonString)
	}
	h, b = body(t, AppendAck5(nil, PUBREL, 6, ReasonPacketIDNotFound, nil))
	if h.Flags != 2 {
		t.Fatalf("PUBREL flags %#x", h.Flags)
	}
	if _, reason, err := DecodeAck5(h.Type, b, &props); err != nil || reason != ReasonPacketIDNotFound {
		t.Fatalf("%#x %v", reason, err)
	}
	// A reason code PUBREL may not carry; bytes after the properties.
	if _, _, err := DecodeAck5(PUBREL, []byte{0, 6, ReasonNotAuthorized}, &props); !errors.Is(err, ErrMalformed) {
		t.Errorf("PUBREL with 0x87: %v", err)
	}
	if _, _, err := DecodeAck5(PUBACK, []byte{0, 6, 0, 0, 1}, &props); !errors.Is(err, ErrMalformed) {
		t.Errorf("trailing byte: %v", err)
	}
}

func TestSubscribe5(t *testing.T) {
	props := Properties{SubscriptionIDs: []uint32{300}}
	opts := []SubOptions{{QoS: 1, NoLocal: true}, {QoS: 2, RetainAsPublished: true, RetainHandling: 2}}
	pkt := AppendSubscribe5(nil, 7, &props, [][]byte{[]byte("a/+"), []byte("$share/g/b/#")}, opts)
	h, b := body(t, pkt)
	f, err := DecodeFilters5(h.Type, b)
	if err != nil || f.PacketID != 7 || !reflect.DeepEqual(f.Props.SubscriptionIDs, []uint32{300}) {
		t.Fatalf("%v %+v", err, f)
	}
	var got []SubOptions
	var filters []string
	for filter, qos, ok := f.Next(); ok; filter, qos, ok = f.Next() {
		if qos != f.Options().QoS {
			t.Fatalf("qos %d, options %+v", qos, f.Options())
		}
		filters = append(filters, string(filter))
		got = append(got, f.Options())
	}
	if f.Err() != nil || !reflect.DeepEqual(got, opts) || !reflect.DeepEqual(filters, []string{"a/+", "$share/g/b/#"}) {
		t.Fatalf("%v %v %v", f.Err(), got, filters)
	}
	for _, bad := range []byte{0x03, 0x30, 0x40, 0x80} {
		body := append(append([]byte{0, 1, 0}, 0, 1, 'a'), bad)
		f, err := DecodeFilters5(SUBSCRIBE, body)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := f.Next(); ok || !errors.Is(f.Err(), ErrMalformed) {
			t.Errorf("options %#x: ok %v, %v", bad, ok, f.Err())
		}
	}
	// 3.1.1 keeps refusing options it does not have.
	f, _ = DecodeFilters(SUBSCRIBE, []byte{0, 1, 0, 1, 'a', 0x04})
	if _, _, ok := f.Next(); ok || !errors.Is(f.Err(), ErrMalformed) {
		t.Errorf("3.1.1 no local: ok %v, %v", ok, f.Err())
	}
	h, b = body(t, AppendSubscribe5(nil, 8, nil, [][]byte{[]byte("a")}, nil))
	if f, err := DecodeFilters5(h.Type, b); err != nil || f.PacketID != 8 {
		t.Fatalf("unsubscribe: %v", err)
	}
	h, b = body(t, AppendSuback5(nil, SUBACK, 7, nil, []byte{ReasonGrantedQoS1, ReasonNotAuthorized}))
	if h.Type != SUBACK || !bytes.Equal(b, []byte{0, 7, 0, 1, 0x87}) {
		t.Fatalf("suback %v % x", h.Type, b)
	}
}

func TestConnackAndDisconnect5(t *testing.T) {
	props := Properties{AssignedClientID: []byte("auto-1"), TopicAliasMaximum: 10, MaximumQoS: 1}
	props.Set(PropAssignedClientID)
	props.Set(PropTopicAliasMaximum)
	props.Set(PropMaximumQoS)
	_, b := body(t, AppendConnack5(nil, true, ReasonSuccess, &props))
	if b[0] != 1 || b[1] != 0 {
		t.Fatalf("connack % x", b)
	}
	var got Properties
	if rest, err := DecodeProperties(b[2:], CtxConnack, &got); err != nil || len(rest) != 0 ||
		string(got.AssignedClientID) != "auto-1" || got.TopicAliasMaximum != 10 || !got.Has(PropMaximumQoS) {
		t.Fatalf("%v %+v", err, got)
	}
	h, b := body(t, AppendReasoned(nil, DISCONNECT, ReasonSuccess, nil))
	if len(b) != 0 {
		t.Fatalf("normal disconnect of %d bytes", len(b))
	}
	if reason, err := DecodeReasoned(h.Type, b, &got); err != nil || reason != 0 {
		t.Fatal(reason, err)
	}
	why := Properties{ReasonString: []byte("taken over")}
	why.Set(PropReasonString)
	h, b = body(t, AppendReasoned(nil, DISCONNECT, ReasonSessionTakenOver, &why))
	if reason, err := DecodeReasoned(h.Type, b, &got); err != nil || reason != ReasonSessionTakenOver || string(got.ReasonString) != "taken over" {
		t.Fatal(reason, err)
	}
	if _, err := DecodeReasoned(DISCONNECT, []byte{ReasonGrantedQoS1}, &got); !errors.Is(err, ErrMalformed) {
		t.Errorf("disconnect 0x01: %v", err)
	}
	h, b = body(t, AppendReasoned(nil, AUTH, ReasonContinueAuthentication, nil))
	if reason, err := DecodeReasoned(h.Type, b, &got); h.Type != AUTH || err != nil || reason != ReasonContinueAuthentication {
		t.Fatal(h.Type, reason, err)
	}
}
