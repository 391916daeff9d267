package subjects

import "strings"

// MaxNameLen is the longest stream or consumer name: names become one
// token of an API subject and one file name in the store.
const MaxNameLen = 255

// ValidName reports whether name may name a stream or a consumer: the
// reference's asset-name rule (non-empty, no whitespace, no '.', '*' or
// '>', so that it stays one literal token of an API subject, and no '/'
// or '\', so that it stays one file name), at most MaxNameLen bytes.
// Every place that checks such a name (the JetStream API, the dashboard)
// calls this, so that they cannot disagree.
func ValidName(name string) bool {
	return name != "" && len(name) <= MaxNameLen && !strings.ContainsAny(name, " \t\r\n\f.*>/\\")
}
