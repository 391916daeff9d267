package monitor

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// writeJSON answers with v, indented, as the reference does; browsers on
// other origins may read it (the reference allows any origin too).
func writeJSON(w http.ResponseWriter, v any) {
	writeJSONStatus(w, http.StatusOK, v)
}

func writeJSONStatus(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client went away; nothing to do
}

// badRequest answers 400 with a plain-text reason, as the reference does
// for a query it cannot use.
func badRequest(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write([]byte(err.Error()))
}

// query reads typed query parameters; the first bad one is kept in err
// and every later read is a no-op, so a handler checks once.
type query struct {
	r   *http.Request
	err error
}

func (q *query) str(name string) string { return q.r.URL.Query().Get(name) }

// bool is true for 1, t, true and the like; "" is false.
func (q *query) bool(name string) bool {
	v := q.str(name)
	if v == "" || q.err != nil {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		q.err = fmt.Errorf("monitoring: %s=%q is not a boolean", name, v)
	}
	return b
}

func (q *query) int(name string) int {
	v := q.str(name)
	if v == "" || q.err != nil {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		q.err = fmt.Errorf("monitoring: %s=%q is not an integer", name, v)
	}
	return n
}

func (q *query) uint64(name string) uint64 {
	v := q.str(name)
	if v == "" || q.err != nil {
		return 0
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		q.err = fmt.Errorf("monitoring: %s=%q is not an unsigned integer", name, v)
	}
	return n
}

// subs reads subs=true|detail.
func (q *query) subs() (list, detail bool) {
	if strings.EqualFold(q.str("subs"), "detail") {
		return false, true
	}
	return q.bool("subs"), false
}

// Uptime formats a duration as the reference's documents do:
// "1y2d3h4m5s", largest unit first, leading zero units left out.
func Uptime(d time.Duration) string {
	secs := int64(d / time.Second)
	mins, hours := secs/60, secs/3600
	days := hours / 24
	years := days / 365
	switch {
	case years > 0:
		return fmt.Sprintf("%dy%dd%dh%dm%ds", years, days%365, hours%24, mins%60, secs%60)
	case days > 0:
		return fmt.Sprintf("%dd%dh%dm%ds", days, hours%24, mins%60, secs%60)
	case hours > 0:
		return fmt.Sprintf("%dh%dm%ds", hours, mins%60, secs%60)
	case mins > 0:
		return fmt.Sprintf("%dm%ds", mins, secs%60)
	}
	return fmt.Sprintf("%ds", secs)
}
