package tests

import (
	"bufio"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/bus-dev/bus/server"
)

// BenchmarkAuthRefusal times a refused CONNECT, from the CONNECT sent to
// the -ERR read, for a known user with a wrong password and for an
// unknown user, with bcrypt passwords: the two must cost the same, so
// that response times do not tell which users exist (security issue
// #22). It reports each median (known-median-ms, unknown-median-ms);
// compare the two by eye, a test never asserts timing.
//
//	go test -run '^$' -bench BenchmarkAuthRefusal -benchtime 20x ./tests
func BenchmarkAuthRefusal(b *testing.B) {
	hash, err := bcrypt.GenerateFromPassword([]byte("right"), bcrypt.DefaultCost)
	if err != nil {
		b.Fatal(err)
	}
	s := startBus(b, server.Options{Authorization: server.Authorization{Users: []server.User{
		{Name: "alice", Password: string(hash)},
	}}})
	addr := s.Addr().String()
	connect := func(user string) string {
		return `CONNECT {"verbose":false,"user":"` + user + `","pass":"wrong"}` + "\r\n"
	}
	known, unknown := connect("alice"), connect("mallory")
	// The two alternate, so that the machine's load drifts over both.
	var knownTook, unknownTook []time.Duration
	for b.Loop() {
		knownTook = append(knownTook, timeRefusal(b, addr, known))
		unknownTook = append(unknownTook, timeRefusal(b, addr, unknown))
	}
	b.ReportMetric(medianMillis(knownTook), "known-median-ms")
	b.ReportMetric(medianMillis(unknownTook), "unknown-median-ms")
}

func medianMillis(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2]) / float64(time.Millisecond)
}

// timeRefusal connects, reads INFO, and times CONNECT to -ERR.
func timeRefusal(b *testing.B, addr, connect string) time.Duration {
	b.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(nc)
	if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "INFO ") {
		b.Fatalf("INFO: %q, %v", line, err)
	}
	start := time.Now()
	if _, err := nc.Write([]byte(connect)); err != nil {
		b.Fatal(err)
	}
	line, err := r.ReadString('\n')
	took := time.Since(start)
	if err != nil || !strings.HasPrefix(line, "-ERR 'Authorization Violation'") {
		b.Fatalf("want the refusal, got %q, %v", line, err)
	}
	return took
}
