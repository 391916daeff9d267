package jetlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/chacha20poly1305"
)

// Keyrings cost an argon2 derivation each: tests share these.
var (
	testKeysOnce sync.Once
	testKeyrings map[string]*Keyring
)

// testKeys returns a keyring by name: "chacha" and "aes" (key "k1"),
// "aes-k1" under chachapoly's other name, "k2" (key "k2"), "k2-from-k1"
// (key "k2", previous "k1"), all chachapoly unless named aes.
func testKeys(t testing.TB, name string) *Keyring {
	t.Helper()
	testKeysOnce.Do(func() {
		testKeyrings = map[string]*Keyring{}
		for name, spec := range map[string]struct {
			c         Cipher
			key, prev string
		}{
			"chacha":     {ChaChaPoly, "k1", ""},
			"aes":        {AES, "k1", ""},
			"k2":         {ChaChaPoly, "k2", ""},
			"k2-from-k1": {ChaChaPoly, "k2", "k1"},
		} {
			k, err := NewKeyring(spec.c, spec.key, spec.prev)
			if err != nil {
				panic(err)
			}
			testKeyrings[name] = k
		}
	})
	k, ok := testKeyrings[name]
	if !ok {
		t.Fatalf("no test keyring %q", name)
	}
	return k
}

var sealCiphers = []string{"chacha", "aes"}

// Words written to an encrypted stream that must not appear on its disk.
const (
	secretSubject = "orders.secret-subject-7f3a"
	secretPayload = "payload-that-must-stay-hidden-91c2"
	secretMsgID   = "msgid-hidden-5d1e"
)

// fillSecret writes enough messages to roll segments (so sealed
// segments, indexes and a catalog snapshot exist), with a msg id (the
// dedup snapshot), a consumer with deliveries and acks (its journal and
// snapshot), a delete (a tombstone), and closes everything cleanly.
func fillSecret(t *testing.T, dir string, opts Options) {
	t.Helper()
	cfg := StreamConfig{Name: "SEC", Subjects: []string{"orders.>"}, DuplicateWindow: time.Hour}
	l, err := Open(dir, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		hdr := hdrWithID(fmt.Sprintf("%s-%d", secretMsgID, i))
		if _, err := l.Append(Msg{Subject: secretSubject, Header: hdr, Data: []byte(fmt.Sprintf("%s-%d", secretPayload, i))}, Expect{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Delete(5); err != nil {
		t.Fatal(err)
	}
	c, err := l.OpenConsumer("READER", ConsumerConfig{Name: "READER", AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 20; seq++ {
		if _, err := c.Deliver(seq); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.AckAll(10); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// storeFiles reads every file under dir.
func storeFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		out[p] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSealedStoreHidesSubjectsAndPayloads(t *testing.T) {
	for _, name := range sealCiphers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "SEC")
			opts := Options{Keys: testKeys(t, name), SegmentSize: 4 << 10, CompactBytes: 256}
			fillSecret(t, dir, opts)
			files := storeFiles(t, dir)
			if _, ok := files[filepath.Join(dir, consumersDir, "READER", snapFile)]; !ok {
				t.Error("no consumer state.snap written: the test does not cover it")
			}
			kinds := map[string]bool{}
			for p, data := range files {
				kinds[filepath.Ext(p)] = true
				for _, secret := range []string{secretSubject, secretPayload, secretMsgID, "orders.", "READER"} {
					if bytes.Contains(data, []byte(secret)) {
						t.Errorf("%s holds %q in plaintext", p, secret)
					}
				}
			}
			for _, ext := range []string{".seg", ".idx", ".meta", ".snap", ".mark", ".key"} {
				if !kinds[ext] {
					t.Errorf("no %s file written: the test does not cover it (files %v)", ext, kinds)
				}
			}
			// Everything reads back after a restart.
			l := openLog(t, dir, StreamConfig{Name: "SEC", Subjects: []string{"orders.>"}, DuplicateWindow: time.Hour}, opts)
			if rep := l.Recovery(); len(rep.Corrupt) != 0 || len(rep.Problems) != 0 {
				t.Fatalf("recovery of a clean encrypted store: %+v", rep)
			}
			if st := l.State(); st.Msgs != 199 || st.LastSeq != 200 {
				t.Fatalf("state = %+v", st)
			}
			m := mustGet(t, l, 200)
			if m.Subject != secretSubject || string(m.Data) != secretPayload+"-199" {
				t.Fatalf("msg 200 = %q %q", m.Subject, m.Data)
			}
			if ack, err := l.Append(Msg{Subject: secretSubject, Header: hdrWithID(secretMsgID + "-3"), Data: []byte("dup")}, Expect{}); err != nil || !ack.Duplicate {
				t.Fatalf("dedup window after restart: %+v, %v", ack, err)
			}
			c, err := l.OpenConsumer("READER", ConsumerConfig{Name: "READER", AckWait: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close() //nolint:errcheck // test
			if info := c.Info(); info.AckFloor.Stream != 10 || info.Delivered.Stream != 20 {
				t.Fatalf("consumer after restart: %+v", info)
			}
		})
	}
}

// TestSealedKeyMismatchRefusesAndTouchesNothing: a missing key, a wrong
// key, and a key for a plaintext stream are refused with their errors,
// naming the directory, and leave every byte of the store as it was.
func TestSealedKeyMismatchRefusesAndTouchesNothing(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sealed, plain := filepath.Join(root, "SEALED"), filepath.Join(root, "PLAIN")
	fillSecret(t, sealed, Options{Keys: testKeys(t, "chacha")})
	fillSecret(t, plain, Options{})
	for _, tc := range []struct {
		dir  string
		keys *Keyring
		want error
	}{
		{sealed, nil, ErrNoKey},
		{sealed, testKeys(t, "k2"), ErrWrongKey},
		{plain, testKeys(t, "chacha"), ErrNotEncrypted},
	} {
		before := storeFiles(t, tc.dir)
		cfg := StreamConfig{Name: "SEC", Subjects: []string{"orders.>"}, DuplicateWindow: time.Hour}
		_, err := Open(tc.dir, cfg, Options{Keys: tc.keys})
		if !errors.Is(err, tc.want) {
			t.Fatalf("Open %s = %v, want %v", tc.dir, err, tc.want)
		}
		if !bytes.Contains([]byte(err.Error()), []byte(tc.dir)) {
			t.Errorf("error %q does not name %s", err, tc.dir)
		}
		if _, _, err := LoadConfigWith(tc.dir, Options{Keys: tc.keys}); !errors.Is(err, tc.want) {
			t.Fatalf("LoadConfigWith %s = %v, want %v", tc.dir, err, tc.want)
		}
		after := storeFiles(t, tc.dir)
		delete(after, filepath.Join(tc.dir, lockFile))
		delete(before, filepath.Join(tc.dir, lockFile))
		if len(after) != len(before) {
			t.Fatalf("files changed: %d before, %d after", len(before), len(after))
		}
		for p, data := range before {
			if !bytes.Equal(after[p], data) {
				t.Errorf("refused open changed %s", p)
			}
		}
	}
	if !Encrypted(nil, sealed) || Encrypted(nil, plain) {
		t.Fatal("Encrypted misreports")
	}
	if _, _, err := LoadConfigWith(sealed, Options{Keys: testKeys(t, "chacha")}); err != nil {
		t.Fatalf("LoadConfigWith the right key: %v", err)
	}
}

// TestSealedKeyRotation: a keyring with the old key as previous opens
// the stream and rewraps stream.key, after which the new key alone opens
// it and the old one no longer does; the data files are not rewritten.
func TestSealedKeyRotation(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "SEC")
	fillSecret(t, dir, Options{Keys: testKeys(t, "chacha")})
	seg := filepath.Join(dir, segName(1))
	segBefore, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := StreamConfig{Name: "SEC", Subjects: []string{"orders.>"}, DuplicateWindow: time.Hour}
	if _, err := Open(dir, cfg, Options{Keys: testKeys(t, "k2")}); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("new key alone before rotation: %v", err)
	}
	l, err := Open(dir, cfg, Options{Keys: testKeys(t, "k2-from-k1")})
	if err != nil {
		t.Fatal(err)
	}
	if m := mustGet(t, l, 1); string(m.Data) != secretPayload+"-0" {
		t.Fatalf("msg 1 = %q", m.Data)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if segAfter, _ := os.ReadFile(seg); !bytes.Equal(segBefore, segAfter) {
		t.Error("rotation rewrote a sealed segment")
	}
	l2 := openLog(t, dir, cfg, Options{Keys: testKeys(t, "k2")})
	if m := mustGet(t, l2, 2); string(m.Data) != secretPayload+"-1" {
		t.Fatalf("msg 2 = %q", m.Data)
	}
	if err := l2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, cfg, Options{Keys: testKeys(t, "chacha")}); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("old key after rotation: %v", err)
	}
}

// TestSealedStreamKeepsItsCipher: a stream made with one cipher opens
// under a keyring of the other (same key) and keeps its own; new streams
// get the keyring's.
func TestSealedStreamKeepsItsCipher(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "SEC")
	fillSecret(t, dir, Options{Keys: testKeys(t, "chacha")})
	cfg := StreamConfig{Name: "SEC", Subjects: []string{"orders.>"}, DuplicateWindow: time.Hour}
	l := openLog(t, dir, cfg, Options{Keys: testKeys(t, "aes")})
	if l.seal.ns != 24 {
		t.Fatalf("nonce size %d: the stream changed cipher", l.seal.ns)
	}
	mustAppend(t, l, "orders.new", "x")
	if m := mustGet(t, l, 201); string(m.Data) != "x" {
		t.Fatalf("msg 201 = %q", m.Data)
	}
}

// flipSealedRecord flips a bit inside the first record's ciphertext of a
// segment and fixes its crc, as a deliberate tamperer would: only the
// AEAD can tell.
func flipSealedRecord(t *testing.T, seg string) {
	t.Helper()
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint32(data)
	data[frameSize+30] ^= 0x10
	crc := crc32.Update(0, castagnoli, data[0:4])
	crc = crc32.Update(crc, castagnoli, data[frameSize:frameSize+int(n)])
	binary.LittleEndian.PutUint32(data[4:], crc)
	if err := os.WriteFile(seg, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSealedTamperIsDamage: a record altered with its crc fixed is
// reported as corrupt and never returned as data; a sealed file altered
// is reported as damaged; the rest of the stream reads on.
func TestSealedTamperIsDamage(t *testing.T) {
	for _, name := range sealCiphers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "SEC")
			opts := Options{Keys: testKeys(t, name), SegmentSize: 4 << 10}
			fillSecret(t, dir, opts)
			cfg := StreamConfig{Name: "SEC", Subjects: []string{"orders.>"}, DuplicateWindow: time.Hour}

			// Read through the index: the damage shows on Get.
			flipSealedRecord(t, filepath.Join(dir, segName(1)))
			l, err := Open(dir, cfg, opts)
			if err != nil {
				t.Fatal(err)
			}
			var ce *CorruptError
			if _, err := l.Get(1); !errors.As(err, &ce) || ce.Reason != "authentication failed" {
				t.Fatalf("Get of a tampered record = %v, want authentication failed", err)
			}
			if m := mustGet(t, l, 2); string(m.Data) != secretPayload+"-1" {
				t.Fatalf("msg 2 = %q", m.Data)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}

			// Without the index (and the catalog snapshot): the scan reports it.
			for _, f := range []string{idxName(1), catalogFile, cleanFile} {
				_ = os.Remove(filepath.Join(dir, f))
			}
			l = openLog(t, dir, cfg, opts)
			if rep := l.Recovery(); len(rep.Corrupt) != 1 || rep.Corrupt[0].Reason != "authentication failed" {
				t.Fatalf("scan of a tampered segment: %+v", rep.Corrupt)
			}
			if _, err := l.Get(1); err == nil {
				t.Fatal("a tampered record was returned")
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}

			// A sealed file changed is damage, reported by name.
			meta := filepath.Join(dir, consumersDir, "READER", consumerMetaFile)
			data, err := os.ReadFile(meta)
			if err != nil {
				t.Fatal(err)
			}
			data[len(data)-1] ^= 1
			if err := os.WriteFile(meta, data, 0o644); err != nil {
				t.Fatal(err)
			}
			l = openLog(t, dir, cfg, opts)
			if _, err := l.LoadConsumerConfig("READER"); !errors.As(err, &ce) || ce.Segment != "consumers/READER/"+consumerMetaFile {
				t.Fatalf("tampered consumer.meta = %v", err)
			}
		})
	}
}

// TestSealedRecordNoncesDiffer: the same record sealed twice differs
// (fresh nonce), and two sealers of one key never share a nonce base.
func TestSealedRecordNoncesDiffer(t *testing.T) {
	key := bytes.Repeat([]byte{7}, dataKeySize)
	for _, c := range []Cipher{ChaChaPoly, AES} {
		a, err := newSealer("/d", c, key)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := newSealer("/d", c, key)
		r1 := a.appendRecord(nil, kindMsg, 1, 2, "s", nil, []byte("p"), 0)
		r2 := a.appendRecord(nil, kindMsg, 1, 2, "s", nil, []byte("p"), 0)
		r3 := b.appendRecord(nil, kindMsg, 1, 2, "s", nil, []byte("p"), 0)
		if bytes.Equal(r1, r2) || bytes.Equal(r1, r3) || bytes.Equal(r1[frameSize:frameSize+a.ns], r3[frameSize:frameSize+b.ns]) {
			t.Fatalf("%s: nonces repeat", c)
		}
		if len(r1) != recordSize("s", nil, []byte("p"))+a.overhead() {
			t.Fatalf("%s: sealed size %d", c, len(r1))
		}
		for _, r := range [][]byte{r1, r3} {
			rec, reason := a.decode(r)
			if reason != "" || rec.seq != 1 || rec.ts != 2 || string(rec.subject) != "s" || string(rec.payload) != "p" {
				t.Fatalf("%s: decode = %+v, %q", c, rec, reason)
			}
		}
	}
}

func TestNewKeyringChecks(t *testing.T) {
	if _, err := NewKeyring(ChaChaPoly, "", ""); err == nil {
		t.Error("empty key accepted")
	}
	if _, err := NewKeyring(ChaChaPoly, "a", "a"); err == nil {
		t.Error("previous key equal to the key accepted")
	}
	if _, err := NewKeyring("rot13", "a", ""); err == nil {
		t.Error("unknown cipher accepted")
	}
	for in, want := range map[string]Cipher{"": ChaChaPoly, "chacha": ChaChaPoly, "chachapoly": ChaChaPoly, "aes": AES} {
		if c, err := ParseCipher(in); err != nil || c != want {
			t.Errorf("ParseCipher(%q) = %q, %v", in, c, err)
		}
	}
	if _, err := ParseCipher("AES-128"); err == nil {
		t.Error("ParseCipher accepted AES-128")
	}
}

// The subkey-keeping XChaCha is XChaCha20-Poly1305: what one seals the
// library's opens, and the other way round, across nonce bases.
func TestXChaChaMatchesLibrary(t *testing.T) {
	key := bytes.Repeat([]byte{3}, dataKeySize)
	lib, err := chacha20poly1305.NewX(key)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		base := bytes.Repeat([]byte{byte(i)}, 24)
		x, err := newXChaCha(key, base)
		if err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			nonce := bytes.Repeat([]byte{byte(i + j)}, 24) // j > 0: not the base's prefix
			want := lib.Seal(nil, nonce, []byte("plain text"), []byte("ad"))
			kept := bytes.Clone(nonce)
			got := x.Seal(nil, nonce, []byte("plain text"), []byte("ad"))
			if !bytes.Equal(got, want) || !bytes.Equal(nonce, kept) {
				t.Fatalf("base %d nonce %d: Seal differs from XChaCha20-Poly1305 (or changed the nonce)", i, j)
			}
			if p, err := x.Open(nil, nonce, want, []byte("ad")); err != nil || string(p) != "plain text" {
				t.Fatalf("Open of the library's: %q, %v", p, err)
			}
			want[0] ^= 1
			if _, err := x.Open(nil, nonce, want, []byte("ad")); err == nil {
				t.Fatal("Open accepted a flipped byte")
			}
		}
	}
}

// flipSealedAt is flipSealedRecord for the record at off.
func flipSealedAt(t *testing.T, file string, off int) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	b := data[off:]
	n := binary.LittleEndian.Uint32(b)
	b[frameSize+30] ^= 0x10
	crc := crc32.Update(0, castagnoli, b[0:4])
	crc = crc32.Update(crc, castagnoli, b[frameSize:frameSize+int(n)])
	binary.LittleEndian.PutUint32(b[4:], crc)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// lastFrame is the offset of the last record of a file of records.
func lastFrame(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	last := -1
	for pos := 0; pos+frameSize <= len(data); {
		n, ok := frameLen(data[pos:])
		if !ok {
			break
		}
		last = pos
		pos += frameSize + n
	}
	if last < 0 {
		t.Fatalf("%s holds no record", file)
	}
	return last
}

// A tampered last record is damage, not a torn tail: it is reported and
// kept in place, nothing after it is cut, and appends go on; the same in
// a consumer journal.
func TestSealedTamperedTailIsNotTorn(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "S")
	opts := Options{Keys: testKeys(t, "aes")}
	cfg := StreamConfig{Name: "S"}
	l, err := Open(dir, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		mustAppend(t, l, "s.x", fmt.Sprintf("m%d", i))
	}
	c, err := l.OpenConsumer("C", ConsumerConfig{Name: "C", AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 3; seq++ {
		if _, err := c.Deliver(seq); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Ack(1); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(dir, segName(1))
	flipSealedAt(t, seg, lastFrame(t, seg))
	journal := filepath.Join(dir, consumersDir, "C", journalName(0))
	flipSealedAt(t, journal, lastFrame(t, journal))
	for _, f := range []string{idxName(1), catalogFile, cleanFile} {
		_ = os.Remove(filepath.Join(dir, f))
	}
	sizeBefore, _ := os.Stat(seg)

	l = openLog(t, dir, cfg, opts)
	rep := l.Recovery()
	if len(rep.Corrupt) != 1 || rep.Corrupt[0].Reason != reasonAuth || rep.TruncatedBytes != 0 {
		t.Fatalf("recovery: corrupt %+v, truncated %d", rep.Corrupt, rep.TruncatedBytes)
	}
	if sizeAfter, _ := os.Stat(seg); sizeAfter.Size() < sizeBefore.Size() {
		t.Fatalf("the segment was cut from %d to %d bytes", sizeBefore.Size(), sizeAfter.Size())
	}
	if _, err := l.Get(10); err == nil {
		t.Fatal("the tampered last message was returned")
	}
	if ack, err := l.Append(Msg{Subject: "s.x", Data: []byte("after")}, Expect{}); err != nil || ack.Seq != 11 {
		t.Fatalf("append after a tampered tail: %+v, %v", ack, err)
	}
	c, err = l.OpenConsumer("C", ConsumerConfig{Name: "C", AckWait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close() //nolint:errcheck // test
	if len(c.Corrupt()) != 1 {
		t.Fatalf("consumer journal damage: %+v", c.Corrupt())
	}
}
