package jetlog

import "github.com/bus-dev/bus/header"

// msgIDHeader is the header that carries a message's dedup id.
const msgIDHeader = "Nats-Msg-Id"

// msgID returns the value of the Nats-Msg-Id header, or nil. Recovery
// reads it from stored records to rebuild the duplicate window.
func msgID(hdr []byte) []byte { return header.Value(hdr, msgIDHeader) }
