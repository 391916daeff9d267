package server

import (
	"strings"

	"github.com/bus-dev/bus/subjects"
)

// What JetStream asks of a deliver subject (is anyone listening, may
// anyone receive this stored message) is answered through stream
// imports too: an import's subscription in the exporter's trie is
// interest only while the importer has a subscriber where the import
// delivers, as the reference counts an importer's subscriptions (its
// shadow subscriptions) as interest in the exporter, and the stored-read
// rule is asked of those subscribers. A push consumer whose deliver
// subject is imported thus waits for the importer's subscriber instead of
// delivering into an import nobody receives.

// streamReach is where a stream import's subscription delivers: into
// importer's trie under prefix (ending in "."), or mapped by tr, or on
// the subject itself.
type streamReach struct {
	importer *account
	prefix   string
	tr       *subjects.Transform
}

// anyReceiver reports whether a subscription of trie matching to
// passes ok, looking through stream imports into their importers. A
// subscription of another import (a service import's, a response's)
// is given to ok as it is, to judge.
func anyReceiver(trie *subjects.Trie[*subscription], to []byte, ok func(*subscription) bool) bool {
	r := trie.Match(to)
	for _, sub := range r.Plain {
		if sub.reach != nil {
			if sub.reach.anyReceiver(to, ok) {
				return true
			}
			continue
		}
		if ok(sub) {
			return true
		}
	}
	for i := range r.Queues {
		for _, sub := range r.Queues[i].Members {
			if ok(sub) {
				return true
			}
		}
	}
	return false
}

// anyReceiver is anyReceiver in the importer for what the import of to
// delivers there. The importer's own imports do not count: a message
// that came through a stream import goes through no other (imports.go).
func (sr *streamReach) anyReceiver(to []byte, ok func(*subscription) bool) bool {
	var bp *[]byte
	switch {
	case sr.prefix != "":
		bp = subjectBufs.Get().(*[]byte)
		to = append(append((*bp)[:0], sr.prefix...), to...)
		defer func() { *bp = to; subjectBufs.Put(bp) }()
	case sr.tr != nil:
		mapped, err := sr.tr.ApplyLiteral(string(to))
		if err != nil {
			return false
		}
		to = []byte(mapped)
	}
	r := sr.importer.trie.Match(to)
	for _, sub := range r.Plain {
		if !sub.imported && ok(sub) {
			return true
		}
	}
	for i := range r.Queues {
		for _, sub := range r.Queues[i].Members {
			if ok(sub) {
				return true
			}
		}
	}
	return false
}

// importWatch is one stream import as the interest watchers see it: a
// client subscription in the importer overlapping dest is interest in
// the exporter's source subjects.
type importWatch struct {
	dest, source string
	prefix       string // ends in "."; "" for a mapped import
}

// watchesFor is how the watchers follow im: nothing for an import on
// the subject itself (the same subject is told already).
func watchesFor(im StreamImport) []importWatch {
	dest := streamImportSubject(im)
	if dest == im.Subject {
		return nil
	}
	w := importWatch{dest: dest, source: im.Subject}
	if im.Prefix != "" {
		w.prefix = strings.TrimSuffix(im.Prefix, ".") + "."
	}
	return []importWatch{w}
}

// throughImports tells the watchers of the exporters' subjects that a
// client subscription on pattern came or went in some importer (w.mu
// held). The watchers do not tell accounts apart, so a subscription in
// another account is a wakeup that finds nothing new, as for any other
// subscription.
func (w *interestWatchers) throughImports(pattern string) {
	list := w.imports.Load()
	if list == nil {
		return
	}
	for _, iw := range *list {
		if !subjects.Overlap(pattern, iw.dest) {
			continue
		}
		if iw.prefix != "" && strings.HasPrefix(pattern, iw.prefix) {
			w.notifyLocked(pattern[len(iw.prefix):])
		} else {
			w.notifyLocked(iw.source)
		}
	}
}
