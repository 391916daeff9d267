package server

import (
	"testing"
)

// MayDeliver says beforehand what a stored delivery's routing does:
// whether a subscriber of the inbox gets a message shown on subject, by
// bus's rule and by the reference's, for literal and wildcard
// subscriptions, and without allocating.
func TestMayDeliverAgreesWithStoredDelivery(t *testing.T) {
	perms := &Permissions{Subscribe: &SubjectPermission{Allow: []string{"_INBOX.>", "dlv.*", "orders.>"}, Deny: []string{"orders.secret"}}}
	for _, reference := range []bool{false, true} {
		for _, inboxSub := range []string{"_INBOX.c1", "_INBOX.*", "dlv.*"} {
			f := permFixture(t, perms, 1, inboxSub)
			f.srv.opts.Authorization.ReferenceStoredReads = reference
			core := jetstreamCore{f.srv, f.subs[0].acc}
			inbox := "_INBOX.c1"
			if inboxSub == "dlv.*" {
				inbox = "dlv.c1"
			}
			for _, subject := range []string{"orders.eu", "orders.secret", "payroll.x"} {
				routed := f.srv.route(nil, []byte(inbox), []byte(subject), nil, -1, []byte("x")) > 0
				if !reference && core.MayDeliver(inbox, subject) != routed {
					t.Errorf("SUB %s, stored %s: MayDeliver %v, routed %v", inboxSub, subject, !routed, routed)
				}
				// The reference counts a delivery whoever takes it.
				if reference && !core.MayDeliver(inbox, subject) {
					t.Errorf("reference rule, SUB %s, stored %s: refused", inboxSub, subject)
				}
				f.drainOutbound()
			}
			if !reference && !core.FiltersStored(inbox) || reference && core.FiltersStored(inbox) {
				t.Errorf("reference=%v, SUB %s: FiltersStored %v", reference, inboxSub, core.FiltersStored(inbox))
			}
			if core.MayDeliver("nobody.listens", "orders.eu") {
				t.Errorf("SUB %s: delivery to an inbox nobody listens on allowed", inboxSub)
			}
			if !raceEnabled {
				if allocs := testing.AllocsPerRun(100, func() { core.MayDeliver(inbox, "orders.secret") }); allocs != 0 {
					t.Errorf("MayDeliver allocates %.1f times", allocs)
				}
			}
		}
	}
}

// BenchmarkMayDeliver is what a push delivery costs more for being
// asked first (machinerefused.go): a cached match of the inbox and the
// receivers' rights.
func BenchmarkMayDeliver(b *testing.B) {
	for _, perms := range []*Permissions{nil, {Subscribe: &SubjectPermission{Deny: []string{"orders.secret"}}}} {
		name := "rights=none"
		if perms != nil {
			name = "rights=deny"
		}
		b.Run(name, func(b *testing.B) {
			f := permFixture(b, perms, 1, "dlv.c1")
			core := jetstreamCore{f.srv, f.subs[0].acc}
			b.ReportAllocs()
			for b.Loop() {
				if !core.MayDeliver("dlv.c1", "orders.eu") {
					b.Fatal("refused")
				}
			}
		})
	}
}
