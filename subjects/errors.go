package subjects

import "errors"

// ErrBadSubject is returned by Trie.Insert and Trie.Remove when the pattern
// is not a valid subscription subject (see ValidSubject). The wrapping error
// names the operation and quotes the pattern.
var ErrBadSubject = errors.New("subjects: invalid subject")

// ErrBadQueue is returned by Trie.Insert and Trie.Remove when the queue name
// is neither empty (a plain subscription) nor valid (see ValidQueue).
var ErrBadQueue = errors.New("subjects: invalid queue name")

// ErrNotFound is returned by Trie.Remove when no subscription with that
// pattern, queue name and value is in the trie.
var ErrNotFound = errors.New("subjects: subscription not found")
