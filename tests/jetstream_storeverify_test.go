package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/jetlog"
	"github.com/bus-dev/bus/server"
)

// storeVerifyAnswer is $BUS.API.STORE.VERIFY's answer (docs/api.md).
type storeVerifyAnswer struct {
	Type  string `json:"type"`
	Error *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error"`
	OK bool `json:"ok"`
	*jetlog.VerifyReport
}

func storeVerify(t *testing.T, nc *nats.Conn, stream, body string) storeVerifyAnswer {
	t.Helper()
	msg, err := nc.Request("$BUS.API.STORE.VERIFY."+stream, []byte(body), time.Minute)
	if err != nil {
		t.Fatalf("verify %s: %v", stream, err)
	}
	var a storeVerifyAnswer
	if err := json.Unmarshal(msg.Data, &a); err != nil {
		t.Fatalf("verify %s: %v: %s", stream, err, msg.Data)
	}
	if a.Type != "io.bus.api.v1.store_verify_response" {
		t.Fatalf("type %q", a.Type)
	}
	return a
}

// payloadOf is seq's payload in TestStoreVerifyOnlineFindsFlippedByte:
// size bytes naming the seq, so its place in the segment file can be
// found.
func payloadOf(seq, size int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("<seq %06d>", seq)), size/12)
}

// A byte flipped on disk in a sealed segment of a running bus: the online
// verify names that seq exactly (acknowledged) and the damaged record's
// file, and the stream keeps serving the others and taking publishes.
// The segment is sealed by filling it (jetlog's 64 MiB) with 900 KiB
// messages.
func TestStoreVerifyOnlineFindsFlippedByte(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	s := startBus(t, server.Options{JetStream: true, StoreDir: store})
	nc := connect(t, busURL(s))
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "BIG", Subjects: []string{"big.>"}})
	if err != nil {
		t.Fatal(err)
	}
	const size, count, damaged = 900 << 10, 80, 10
	for seq := 1; seq <= count; seq++ {
		if _, err := js.Publish(ctx, "big."+strconv.Itoa(seq%3), payloadOf(seq, size)); err != nil {
			t.Fatal(err)
		}
	}
	if a := storeVerify(t, nc, "BIG", ""); !a.OK || a.Segments < 2 || a.Records < count {
		t.Fatalf("before the damage: %+v", a)
	}
	seg := filepath.Join(store, "jetstream", "BIG", "0000000000000001.seg")
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(data, payloadOf(damaged, size))
	if at < 0 {
		t.Fatalf("seq %d's payload not in %s", damaged, seg)
	}
	f, err := os.OpenFile(seg, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{data[at+1000] ^ 0x10}, int64(at+1000)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	a := storeVerify(t, nc, "BIG", "{}")
	if a.OK || a.Error != nil {
		t.Fatalf("damage not reported: %+v", a)
	}
	want := []jetlog.Loss{{SeqRange: jetlog.SeqRange{First: damaged, Last: damaged}, Segment: "0000000000000001.seg", Reason: "corrupt record", Acked: jetlog.LossAcked}}
	if !slices.Equal(a.Losses, want) {
		t.Fatalf("losses %+v, want %+v", a.Losses, want)
	}
	if len(a.Corrupt) != 1 || a.Corrupt[0].Segment != "0000000000000001.seg" || a.Corrupt[0].Offset >= int64(at) {
		t.Fatalf("damaged records %+v (payload at %d)", a.Corrupt, at)
	}
	if len(a.DamagedIndexes) != 0 || len(a.Problems) != 0 {
		t.Fatalf("indexes %v, problems %v", a.DamagedIndexes, a.Problems)
	}
	for _, seq := range []uint64{1, damaged - 1, damaged + 1, count} {
		m, err := st.GetMsg(ctx, seq)
		if err != nil || !bytes.Equal(m.Data, payloadOf(int(seq), size)) {
			t.Fatalf("get %d after the damage: %v", seq, err)
		}
	}
	if _, err := st.GetMsg(ctx, damaged); err == nil {
		t.Fatalf("the damaged seq %d was served", damaged)
	}
	if ack, err := js.Publish(ctx, "big.after", []byte("still serving")); err != nil || ack.Sequence != count+1 {
		t.Fatalf("publish after the damage: %+v %v", ack, err)
	}
}

// A sound stream verified again and again while a publisher runs: every
// answer is ok, the publisher gets no error, and every acknowledged
// message is there after.
func TestStoreVerifyOnlineWhilePublishing(t *testing.T) {
	t.Parallel()
	s, js := startJS(t)
	nc := connect(t, busURL(s))
	ctx := ctxT(t)
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "LIVE", Subjects: []string{"live.>"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "W", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var acked []uint64
	var pubErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ack, err := js.Publish(ctx, "live."+strconv.Itoa(i%5), bytes.Repeat([]byte{'p'}, 512))
			if err != nil {
				pubErr = err
				return
			}
			acked = append(acked, ack.Sequence)
		}
	}()
	for range 5 {
		if a := storeVerify(t, nc, "LIVE", "{}"); !a.OK || a.Error != nil || len(a.Consumers) != 1 {
			close(stop)
			wg.Wait()
			t.Fatalf("sound stream while publishing: %+v", a)
		}
	}
	close(stop)
	wg.Wait()
	if pubErr != nil {
		t.Fatal(pubErr)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(len(acked)) || !sort.SliceIsSorted(acked, func(i, j int) bool { return acked[i] < acked[j] }) {
		t.Fatalf("%d messages stored, %d acknowledged", info.State.Msgs, len(acked))
	}
	for _, seq := range acked {
		if _, err := st.GetMsg(ctx, seq); err != nil {
			t.Fatalf("acknowledged seq %d: %v", seq, err)
		}
	}
}

// Who may verify: a user who may read every subject the stream holds;
// others get 403/10403. No such stream is 404/10059, a body with an
// unknown field 400.
func TestStoreVerifyOnlineNeedsReadRights(t *testing.T) {
	t.Parallel()
	reader := server.User{Name: "reader", Password: "r", Permissions: &server.Permissions{
		Subscribe: &server.SubjectPermission{Allow: []string{"_INBOX.>", "orders.public.>", "public.>"}},
	}}
	s := startBus(t, server.Options{JetStream: true, Authorization: server.Authorization{
		Users: []server.User{{Name: "admin", Password: "a"}, reader},
	}})
	admin := connect(t, busURL(s), nats.UserInfo("admin", "a"))
	rd := connect(t, busURL(s), nats.UserInfo("reader", "r"))
	js, err := jetstream.New(admin)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	for _, cfg := range []jetstream.StreamConfig{
		{Name: "ORDERS", Subjects: []string{"orders.>"}},
		{Name: "PUBLIC", Subjects: []string{"public.>"}},
	} {
		if _, err := js.CreateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := js.Publish(ctx, "public.1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if a := storeVerify(t, rd, "ORDERS", "{}"); a.Error == nil || a.Error.Code != 403 || a.Error.ErrCode != 10403 || a.VerifyReport != nil {
		t.Fatalf("reader verifying ORDERS: %+v", a)
	}
	if a := storeVerify(t, rd, "PUBLIC", "{}"); !a.OK || a.Messages != 1 {
		t.Fatalf("reader verifying PUBLIC: %+v", a)
	}
	if a := storeVerify(t, admin, "ORDERS", ""); !a.OK || a.Stream != "ORDERS" || a.Messages != 0 {
		t.Fatalf("admin verifying ORDERS: %+v", a)
	}
	if a := storeVerify(t, admin, "MISSING", "{}"); a.Error == nil || a.Error.Code != 404 || a.Error.ErrCode != 10059 {
		t.Fatalf("no such stream: %+v", a)
	}
	if a := storeVerify(t, admin, "ORDERS", `{"deep":true}`); a.Error == nil || a.Error.Code != 400 {
		t.Fatalf("unknown field: %+v", a)
	}
}
