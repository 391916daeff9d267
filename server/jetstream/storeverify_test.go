package jetstream

import "testing"

// A second verify of a stream being verified, and one more than
// storeVerifyConcurrent at once, are refused with 503 until one ends.
func TestStoreVerifiesOneAtATimePerStream(t *testing.T) {
	t.Parallel()
	var v storeVerifies
	if e := v.begin("A"); e != nil {
		t.Fatal(e)
	}
	if e := v.begin("A"); e == nil || e.Code != 503 {
		t.Fatalf("second verify of A: %+v", e)
	}
	if e := v.begin("B"); e != nil {
		t.Fatal(e)
	}
	if e := v.begin("C"); e == nil || e.Code != 503 || e.ErrCode != 10023 {
		t.Fatalf("a third at once: %+v", e)
	}
	v.end("A")
	if e := v.begin("C"); e != nil {
		t.Fatalf("after A ended: %+v", e)
	}
	if e := v.begin("A"); e == nil {
		t.Fatal("A again while B and C run")
	}
}
