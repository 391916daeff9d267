package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// HeaderTraceParent carries the W3C trace context
// (https://www.w3.org/TR/trace-context/), so OpenTelemetry users can join
// traces across a publish: "00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>".
const HeaderTraceParent = "traceparent"

type traceKey struct{}

// ContextWithTraceParent returns ctx carrying a W3C traceparent. Publishes
// made with the returned context continue that trace: same trace id, new
// parent id. An invalid traceparent is ignored.
func ContextWithTraceParent(ctx context.Context, traceParent string) context.Context {
	if !validTraceParent(traceParent) {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, traceParent)
}

// TraceParent is the traceparent ctx carries, or "". Handlers get a
// context carrying the traceparent of the message they handle.
func TraceParent(ctx context.Context) string {
	tp, _ := ctx.Value(traceKey{}).(string)
	return tp
}

// childTraceParent continues parent's trace with a new span id, or starts
// a new sampled trace when parent is empty.
func childTraceParent(parent string) string {
	var span [8]byte
	_, _ = rand.Read(span[:]) // crypto/rand.Read never fails
	if validTraceParent(parent) {
		return parent[:36] + hex.EncodeToString(span[:]) + parent[52:]
	}
	var trace [16]byte
	_, _ = rand.Read(trace[:])
	return "00-" + hex.EncodeToString(trace[:]) + "-" + hex.EncodeToString(span[:]) + "-01"
}

// validTraceParent checks the version-00 shape: four dash-separated lower
// hex fields of 2, 32, 16 and 2 characters, ids not all zero.
func validTraceParent(tp string) bool {
	if len(tp) != 55 || tp[2] != '-' || tp[35] != '-' || tp[52] != '-' {
		return false
	}
	for i, c := range tp {
		if i == 2 || i == 35 || i == 52 {
			continue
		}
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	zeroTrace := strings.Repeat("0", 32)
	zeroSpan := strings.Repeat("0", 16)
	return tp[:2] != "ff" && tp[3:35] != zeroTrace && tp[36:52] != zeroSpan
}
