package server

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bus-dev/bus/subjects"
)

// Exports and imports between accounts, as nats-server's accounts
// block has them. An import is a server-owned subscription in the
// exporting account's trie (a stream import) or in the importing one's
// (a service import) that routes what it gets into the other account's
// trie, where the receivers' own rights are checked as for any delivery.
// A request that arrived through a service import goes on through the
// service imports of the account it arrived in, and its responses come
// back the same way, as the reference forwards service chains (A exports,
// B imports and re-exports, C imports from B; TestAccountsImportChains).
// A message that arrived through a stream import goes through no other
// import: the reference does not forward stream chains either.
// Configurations that would make a message go round are refused with the
// reference's cycle error, and a chain is cut after maxImportHops imports
// whatever the configuration, so no message can loop.

// maxImportHops bounds a chain of imports one message follows.
const maxImportHops = 16

// streamImportEnd is the hop count a stream import delivers with: the end
// of any chain.
const streamImportEnd = maxImportHops

// importHop forwards a message through one import; hops is how many
// imports it came through already, from its publisher (nil for the
// server, or a message forwarded along a chain). to is the subject the
// import matched and maps; subject is the one the message shows, the
// same but for a JetStream delivery: matched on its deliver subject,
// showing the stored message's (see shownAfterImport).
type importHop func(from *conn, hops int, to, subject, reply []byte, hdr int, msg []byte) bool

// importSub is the server's subscription of an import on subject: a
// client's message enters the chain at hop 0 (deliver), a forwarded one
// through routeFrom with its count.
func importSub(subject string, hop importHop) *subscription {
	return &subscription{subject: subject, imported: true, hop: hop}
}

// StreamExport lets other accounts import the messages published on
// Subject (a subject or a pattern); Accounts, when set, are the only
// accounts that may.
type StreamExport struct {
	Subject  string
	Accounts []string
}

// ServiceExport lets other accounts send requests on Subject to the
// account's responders. ResponseType is "singleton" (one response per
// request; "" means it), "stream" or "chunked" (any number of responses
// within ResponseThreshold, 0 for DefaultResponseThreshold).
type ServiceExport struct {
	Subject           string
	Accounts          []string
	ResponseType      string
	ResponseThreshold time.Duration
	// Latency, when set, reports sampled requests' latencies (latency.go).
	Latency *Latency
}

// StreamImport delivers another account's messages on Subject into this
// one: on Prefix + "." + the subject, or mapped to To (which may use the
// subject's wildcards), or on the subject itself.
type StreamImport struct {
	Account, Subject string
	Prefix, To       string
}

// ServiceImport sends this account's requests on To ("" for Subject) to
// Account's responders on Subject, and routes their responses back.
type ServiceImport struct {
	Account, Subject string
	To               string
}

// Exports and Imports are an account's.
type (
	Exports struct {
		Streams  []StreamExport
		Services []ServiceExport
	}
	Imports struct {
		Streams  []StreamImport
		Services []ServiceImport
	}
)

// DefaultResponseThreshold is how long a service import's responses are
// routed back, as the reference's default.
const DefaultResponseThreshold = 2 * time.Minute

// The reference's errors (accounts.go).
const (
	errStreamImportAuth   = "stream import not authorized"
	errServiceImportAuth  = "service import not authorized"
	errImportFormsCycle   = "import forms a cycle"
	errStreamImportPrefix = "stream import prefix can not contain wildcard tokens"
)

// validateImports checks every account's exports and imports against the
// others, in configuration order, with the reference's words.
func validateImports(accounts []Account) error {
	byName := map[string]*Account{}
	for i := range accounts {
		byName[accounts[i].Name] = &accounts[i]
	}
	for _, a := range accounts {
		for _, e := range a.Exports.Streams {
			if err := checkExport(byName, "stream", e.Subject, e.Accounts); err != nil {
				return fmt.Errorf("server: account %q: %w", a.Name, err)
			}
		}
		for _, e := range a.Exports.Services {
			if err := checkExport(byName, "service", e.Subject, e.Accounts); err != nil {
				return fmt.Errorf("server: account %q: %w", a.Name, err)
			}
			switch e.ResponseType {
			case "", "singleton", "stream", "chunked":
			default:
				return fmt.Errorf("server: account %q: service export %q: unknown response type %q", a.Name, e.Subject, e.ResponseType)
			}
			if e.ResponseThreshold < 0 {
				return fmt.Errorf("server: account %q: service export %q: response threshold is negative", a.Name, e.Subject)
			}
			if err := validateLatency(a, e); err != nil {
				return fmt.Errorf("server: account %q: %w", a.Name, err)
			}
		}
	}
	var streams, services []importEdge
	for _, a := range accounts {
		for _, im := range a.Imports.Streams {
			if err := checkStreamImport(byName, a.Name, im); err != nil {
				return fmt.Errorf("server: account %q: Error adding stream import %q: %w", a.Name, im.Subject, err)
			}
			to := streamImportSubject(im)
			if formsCycle(streams, a.Name, im.Account, to, byName, true) || formsCycle(streams, a.Name, im.Account, im.Subject, byName, true) {
				return fmt.Errorf("server: account %q: Error adding stream import %q: %s", a.Name, im.Subject, errImportFormsCycle)
			}
			streams = append(streams, importEdge{importer: a.Name, exporter: im.Account, from: im.Subject, to: to})
		}
		for _, im := range a.Imports.Services {
			if err := checkServiceImport(byName, a.Name, im); err != nil {
				return fmt.Errorf("server: account %q: Error adding service import %q: %w", a.Name, im.Subject, err)
			}
			if formsCycle(services, a.Name, im.Account, im.Subject, byName, false) {
				return fmt.Errorf("server: account %q: Error adding service import %q: %s", a.Name, im.Subject, errImportFormsCycle)
			}
			services = append(services, importEdge{importer: a.Name, exporter: im.Account, from: im.Subject, to: serviceImportSubject(im)})
		}
	}
	return nil
}

func checkExport(byName map[string]*Account, kind, subject string, allowed []string) error {
	if !subjects.ValidSubject(subject) {
		return fmt.Errorf("Error adding %s export %q: invalid subject", kind, subject)
	}
	for _, n := range allowed {
		if byName[n] == nil {
			return fmt.Errorf("%q account not defined for %s export", n, kind)
		}
	}
	return nil
}

func checkStreamImport(byName map[string]*Account, importer string, im StreamImport) error {
	exp := byName[im.Account]
	switch {
	case exp == nil:
		return fmt.Errorf("%q account not defined for stream import", im.Account)
	case im.Prefix != "" && im.To != "":
		return fmt.Errorf("Stream import can not have a 'prefix' and a 'to' property")
	case im.Prefix != "" && (!subjects.ValidLiteral(strings.TrimSuffix(im.Prefix, "."))):
		return fmt.Errorf("%s", errStreamImportPrefix)
	case !subjects.ValidSubject(im.Subject):
		return fmt.Errorf("%s", errStreamImportAuth)
	}
	if !slices.ContainsFunc(exp.Exports.Streams, func(e StreamExport) bool { return authorizes(e.Subject, e.Accounts, im.Subject, importer) }) {
		return fmt.Errorf("%s", errStreamImportAuth)
	}
	if im.To != "" {
		if _, err := subjects.NewTransformStrict(im.Subject, tokenizeWildcards(im.To)); err != nil {
			return err
		}
	}
	return nil
}

func checkServiceImport(byName map[string]*Account, importer string, im ServiceImport) error {
	exp := byName[im.Account]
	switch {
	case exp == nil:
		return fmt.Errorf("%q account not defined for service import", im.Account)
	case !subjects.ValidSubject(im.Subject) || im.To != "" && !subjects.ValidSubject(im.To):
		return fmt.Errorf("%s", errServiceImportAuth)
	}
	if !slices.ContainsFunc(exp.Exports.Services, func(e ServiceExport) bool { return authorizes(e.Subject, e.Accounts, im.Subject, importer) }) {
		return fmt.Errorf("%s", errServiceImportAuth)
	}
	if to := serviceImportSubject(im); to != im.Subject {
		if _, err := subjects.NewTransformStrict(to, tokenizeWildcards(im.Subject)); err != nil {
			return err
		}
	}
	return nil
}

// authorizes reports whether an export of exported to allowed (none:
// every account) covers importer's import of subject.
func authorizes(exported string, allowed []string, subject, importer string) bool {
	return subjects.Within(subject, exported) && (len(allowed) == 0 || slices.Contains(allowed, importer))
}

// importEdge is one import already accepted, for the cycle search.
type importEdge struct{ importer, exporter, from, to string }

// formsCycle is the reference's search: would importer's import from
// exporter of subject close a loop through the imports accepted so far?
// For streams, an account is only followed while it exports what is
// looked for.
func formsCycle(edges []importEdge, importer, exporter, subject string, byName map[string]*Account, stream bool) bool {
	visited := map[string]bool{importer: true}
	var walk func(acc, subject string, depth int) bool
	walk = func(acc, subject string, depth int) bool {
		if depth > 16 { // the reference's MaxAccountCycleSearchDepth is larger; bus refuses deep chains as cycles
			return true
		}
		if stream && !slices.ContainsFunc(byName[acc].Exports.Streams, func(e StreamExport) bool { return subjects.Within(subject, e.Subject) }) {
			return false
		}
		for _, e := range edges {
			if e.importer != acc || !subjects.Overlap(subject, e.to) {
				continue
			}
			if visited[e.exporter] {
				return true
			}
			visited[acc] = true
			next := subject
			if subjects.Within(e.from, next) {
				next = e.from
			}
			if walk(e.exporter, next, depth+1) {
				return true
			}
		}
		return false
	}
	return walk(exporter, subject, 0)
}

// streamImportSubject is where a stream import delivers im.Subject.
func streamImportSubject(im StreamImport) string {
	switch {
	case im.Prefix != "":
		return strings.TrimSuffix(im.Prefix, ".") + "." + im.Subject
	case im.To != "":
		return im.To
	}
	return im.Subject
}

// serviceImportSubject is where the importing account's requests go.
func serviceImportSubject(im ServiceImport) string {
	if im.To != "" {
		return im.To
	}
	return im.Subject
}

// tokenizeWildcards writes a mapping destination's wildcards as the
// transform's references, as the reference does: the n-th "*" is $n and
// ">" stays.
func tokenizeWildcards(dest string) string {
	tokens := strings.Split(dest, ".")
	n := 0
	for i, t := range tokens {
		if t == "*" {
			n++
			tokens[i] = "$" + strconv.Itoa(n)
		}
	}
	return strings.Join(tokens, ".")
}

// mapping is a transform from a pattern to another, nil when the two are
// the same.
func importTransform(src, dest string) *subjects.Transform {
	if src == dest {
		return nil
	}
	tr, err := subjects.NewTransformStrict(src, tokenizeWildcards(dest))
	if err != nil {
		return nil // validateImports checked it
	}
	return tr
}

// installImports subscribes the imports of accounts (validated) in set,
// recording them in s.installed (under reloadMu, or in New).
func (s *Server) installImports(accounts []Account, set accountSet) error {
	exports := map[string]Exports{}
	for _, a := range accounts {
		exports[a.Name] = a.Exports
	}
	for _, a := range accounts {
		importer := set[a.Name]
		for _, im := range a.Imports.Streams {
			exporter := set[im.Account]
			var hop importHop
			reach := &streamReach{importer: importer}
			if im.Prefix != "" {
				reach.prefix = strings.TrimSuffix(im.Prefix, ".") + "."
				hop = s.prefixForwarder(importer, reach.prefix)
			} else {
				tr := importTransform(im.Subject, streamImportSubject(im))
				reach.tr = tr
				hop = func(_ *conn, _ int, to, subject, reply []byte, hdr int, msg []byte) bool {
					mapped, ok := applyImport(tr, to)
					return ok && s.routeImported(importer.trie, streamImportEnd, mapped, shownAfterImport(to, subject, mapped), reply, hdr, msg) > 0
				}
			}
			sub := importSub(im.Subject, hop)
			sub.reach = reach
			s.addImportWatches(watchesFor(im))
			if _, err := s.subscribeIn(exporter, sub); err != nil {
				return fmt.Errorf("server: account %q: stream import %q: %w", a.Name, im.Subject, err)
			}
			s.installed = append(s.installed, installedImport{exporter, sub})
		}
		for _, im := range a.Imports.Services {
			exporter := set[im.Account]
			export := serviceExportFor(exports[im.Account], im.Subject, a.Name)
			to := serviceImportSubject(im)
			sub := importSub(to, s.serviceForwarder(importer, exporter, importTransform(to, im.Subject), export))
			if _, err := s.subscribeIn(importer, sub); err != nil {
				return fmt.Errorf("server: account %q: service import %q: %w", a.Name, im.Subject, err)
			}
			s.installed = append(s.installed, installedImport{importer, sub})
		}
	}
	return nil
}

// installedImport is an import's subscription, in the account whose
// trie holds it.
type installedImport struct {
	acc *account
	sub *subscription
}

// uninstallImports removes every import installImports subscribed, for
// an account JWT update to install the new ones (reloadMu held).
func (s *Server) uninstallImports() {
	for _, in := range s.installed {
		s.unsubscribeIn(in.acc, in.sub)
	}
	s.installed = nil
	s.watchers.imports.Store(nil)
}

// addImportWatches adds watches to the interest watchers' imports
// (reloadMu held, or in New).
func (s *Server) addImportWatches(watches []importWatch) {
	if len(watches) == 0 {
		return
	}
	var list []importWatch
	if old := s.watchers.imports.Load(); old != nil {
		list = append(list, *old...)
	}
	list = append(list, watches...)
	s.watchers.imports.Store(&list)
}

// subjectBufs are the buffers prefixed stream imports build subjects in:
// forwarders run on any publisher's goroutine, so each takes its own.
var subjectBufs = sync.Pool{New: func() any { b := make([]byte, 0, 128); return &b }}

// prefixForwarder is a prefixed stream import's handler: it delivers a
// message into importer under prefix (ending in "."), without an
// allocation (see BenchmarkImportHop).
func (s *Server) prefixForwarder(importer *account, prefix string) importHop {
	return func(_ *conn, _ int, to, subject, reply []byte, hdr int, msg []byte) bool {
		bp := subjectBufs.Get().(*[]byte)
		prefixed := append(append((*bp)[:0], prefix...), to...)
		n := s.routeImported(importer.trie, streamImportEnd, prefixed, shownAfterImport(to, subject, prefixed), reply, hdr, msg)
		*bp = prefixed
		subjectBufs.Put(bp)
		return n > 0
	}
}

// serviceExportFor is the export that authorizes an import of subject.
func serviceExportFor(e Exports, subject, importer string) ServiceExport {
	for _, se := range e.Services {
		if authorizes(se.Subject, se.Accounts, subject, importer) {
			return se
		}
	}
	return ServiceExport{}
}

// applyImport maps subject through tr (nil: unchanged); a published
// subject's "*" and ">" tokens are plain tokens here, as in the reference.
func applyImport(tr *subjects.Transform, subject []byte) ([]byte, bool) {
	if tr == nil {
		return subject, true
	}
	to, err := tr.ApplyLiteral(string(subject))
	return []byte(to), err == nil
}

// serviceForwarder is a service import's handler: it sends a request
// into the exporting account with a reply subject of its own there,
// whose responses it routes back to the requester's reply subject.
func (s *Server) serviceForwarder(importer, exporter *account, tr *subjects.Transform, e ServiceExport) importHop {
	threshold := cmpOr(e.ResponseThreshold, DefaultResponseThreshold)
	single := e.ResponseType == "" || e.ResponseType == "singleton"
	latency := e.Latency
	return func(from *conn, hops int, to, subject, reply []byte, hdr int, msg []byte) bool {
		mapped, ok := applyImport(tr, to)
		if !ok {
			return false
		}
		var track *latencySample
		if latency != nil {
			if sampled, header := latency.sampled(hdr, msg); sampled {
				track = newLatencySample(from, header)
			}
		}
		var resp *subscription
		var via []byte
		var answered atomic.Bool // a response came, or the request's fate was reported
		if len(reply) > 0 {
			back := string(reply) // the publisher's buffer is not ours to keep
			// A response goes back along the chain its request came:
			// the requester's reply subject may be another import's.
			resp = importSub(serviceReplyPrefix+responseToken(), func(responder *conn, rhops int, _, _, _ []byte, h int, m []byte) bool {
				first := answered.CompareAndSwap(false, true)
				if single && !first {
					return false
				}
				if single {
					s.unsubscribeIn(exporter, resp)
				}
				if first && track != nil {
					s.publishLatency(exporter, latency.Subject, track.answered(responder))
				}
				to := []byte(back)
				return s.routeImported(importer.trie, rhops+1, to, to, nil, h, m) > 0
			})
			if _, err := s.subscribeIn(exporter, resp); err != nil {
				return false
			}
			time.AfterFunc(threshold, func() {
				s.unsubscribeIn(exporter, resp)
				if track != nil && answered.CompareAndSwap(false, true) {
					s.publishLatency(exporter, latency.Subject, track.failed(504))
				}
			})
			via = []byte(resp.subject)
		} else if track != nil {
			// A request nobody can answer: the reference reports it.
			s.publishLatency(exporter, latency.Subject, track.failed(400))
		}
		n := s.routeImported(exporter.trie, hops+1, mapped, shownAfterImport(to, subject, mapped), via, hdr, msg)
		if n == 0 && resp != nil {
			s.unsubscribeIn(exporter, resp)
			if track != nil && answered.CompareAndSwap(false, true) {
				s.publishLatency(exporter, latency.Subject, track.failed(503))
			}
		}
		return n > 0
	}
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// responseToken names one request's responses: random, so that a
// responder cannot guess another request's reply subject.
func responseToken() string {
	return strconv.FormatUint(rand.Uint64(), 36) + "." + strconv.FormatUint(rand.Uint64(), 36)
}

// routeImported delivers a message that came through hops imports into
// trie, matched on to and showing subject: to its subscribers and on
// through the imports there. A JetStream delivery (to differs from
// subject) keeps the stored-read rule in the importer: routeFrom checks
// its stored subject against each receiver's rights.
func (s *Server) routeImported(trie *subjects.Trie[*subscription], hops int, to, subject, reply []byte, hdr int, msg []byte) int {
	return s.routeFrom(trie, nil, to, subject, reply, hdr, msg, hops)
}

// shownAfterImport is the subject a message shows once an import mapped
// to (what it matched) to mapped: mapped, except for a JetStream
// delivery, which keeps showing its stored subject, as in the reference
// (its subscribers see the stored message's subject whatever inbox it
// came to).
func shownAfterImport(to, subject, mapped []byte) []byte {
	if string(to) == string(subject) {
		return mapped
	}
	return subject
}
