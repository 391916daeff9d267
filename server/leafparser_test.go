package server

import "testing"

var leafParserCases = []parserCase{
	{"info", "INFO {\"server_id\":\"x\"} \r\n", []string{`INFO {"server_id":"x"} `}, nil},
	{"ping pong ok", "PING\r\nPONG\r\n+OK\r\n", []string{"PING", "PONG"}, nil},
	{"err", "-ERR 'Authorization Violation'\r\n", []string{"ERR 'Authorization Violation'"}, nil},
	{"ls+ plain", "LS+ foo.*\r\n", []string{`LS+ foo.* queue="" weight=0`}, nil},
	{"ls+ queue", "LS+ jobs workers 3\r\n", []string{`LS+ jobs queue="workers" weight=3`}, nil},
	{"ls+ bad weight", "LS+ jobs workers x\r\n", []string{`LS+ jobs queue="workers" weight=1`}, nil},
	{"ls+ two args", "LS+ jobs workers\r\n", nil, errMalformed},
	{"ls- plain", "LS- foo.*\r\n", []string{`LS- foo.* queue=""`}, nil},
	{"ls- queue", "LS- jobs workers\r\n", []string{`LS- jobs queue="workers"`}, nil},
	{"lmsg", "LMSG a.b 5\r\nhello\r\n", []string{`MSG a.b reply="" queues="" hdr=-1 msg="hello"`}, nil},
	{"lmsg reply", "LMSG a.b r.1 2\r\nhi\r\n", []string{`MSG a.b reply="r.1" queues="" hdr=-1 msg="hi"`}, nil},
	{"lmsg reply queues", "LMSG a + r q1 q2 2\r\nhi\r\n", []string{`MSG a reply="r" queues="q1 q2" hdr=-1 msg="hi"`}, nil},
	{"lmsg queues", "LMSG a | q1 2\r\nhi\r\n", []string{`MSG a reply="" queues="q1" hdr=-1 msg="hi"`}, nil},
	{"lmsg bad marker", "LMSG a x r q1 2\r\nhi\r\n", nil, errMalformed},
	{"lmsg no size", "LMSG a\r\n", nil, errMalformed},
	{"hmsg", "HMSG a 12 14\r\nNATS/1.0\r\n\r\nhi\r\n", []string{`MSG a reply="" queues="" hdr=12 msg="NATS/1.0\r\n\r\nhi"`}, nil},
	{"hmsg queues reply", "HMSG a + r q 12 12\r\nNATS/1.0\r\n\r\n\r\n", []string{`MSG a reply="r" queues="q" hdr=12 msg="NATS/1.0\r\n\r\n"`}, nil},
	{"hmsg header past size", "HMSG a 5 2\r\nhi\r\n", nil, errMalformed},
	{"lmsg bad crlf", "LMSG a 2\r\nhiXX", nil, errUnknownOp},
	{"lmsg too big", "LMSG a 101\r\n", nil, errMaxPayload},
	{"client op refused", "PUB a 2\r\nhi\r\n", nil, errUnknownOp},
	{"sub refused", "SUB a 1\r\n", nil, errUnknownOp},
}

// feedLeaf parses chunks in order, as a leaf link's reader does.
func feedLeaf(chunks []string) ([]string, error) { return feedParser(newLeafParser(100), chunks) }

func TestLeafParser(t *testing.T) {
	t.Parallel()
	checkParserCases(t, leafParserCases, feedLeaf)
}

func TestJSAckDeliverAt(t *testing.T) {
	for reply, want := range map[string]int{
		"$JS.ACK.S.C.1.2.3.4.5@orders.x":   len("$JS.ACK.S.C.1.2.3.4.5"),
		"$JS.ACK.S@x.C.1.2.3.4.5@orders.x": len("$JS.ACK.S@x.C.1.2.3.4.5"),
		"$JS.ACK.S.C.1.2.3.4.5":            -1,
		"$JS.ACK.S.C.1.2.3.4.5@":           -1,
		"_INBOX.a@b":                       -1,
	} {
		if got := jsAckDeliverAt([]byte(reply)); got != want {
			t.Errorf("jsAckDeliverAt(%q) = %d, want %d", reply, got, want)
		}
	}
}

// FuzzLeafParser checks that any bytes from a hub parse the same whole
// or in random chunks, and never panic.
func FuzzLeafParser(f *testing.F) { fuzzParser(f, leafParserCases, feedLeaf) }
