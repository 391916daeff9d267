package conf

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Exports and Imports are an account's exports and imports blocks
// (nats-server's keys): streams and services shared between accounts.
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

// StreamExport is {stream: subject, accounts: [...]}.
type StreamExport struct {
	Subject  string
	Accounts []string
}

// ServiceExport is {service: subject, accounts, response_type,
// response_threshold}; ResponseType is "singleton", "stream" or
// "chunked" ("" for singleton).
type ServiceExport struct {
	Subject           string
	Accounts          []string
	ResponseType      string
	ResponseThreshold time.Duration
	// Latency is the export's latency key; nil: no tracking.
	Latency *Latency
}

// Latency is a service export's latency tracking: {sampling, subject},
// or a subject alone (every request sampled). Sampling is a percentage
// 1..100, or 0 for "headers" (requests carrying a sampled trace header).
type Latency struct {
	Sampling int
	Subject  string
}

// StreamImport is {stream: {account, subject}, prefix | to}.
type StreamImport struct {
	Account, Subject, Prefix, To string
}

// ServiceImport is {service: {account, subject}, to}.
type ServiceImport struct {
	Account, Subject, To string
}

// noShareKey is why an export's or import's key bus lacks is refused.
const noShareKey = "is not in bus yet; " + removeIt

// exports parses an account's exports list.
func (p *blockParser) exports(path string, raw any) Exports {
	var out Exports
	list, ok := raw.([]any)
	if !ok {
		p.bad(path, "Exports should be an array, got %s", describe(raw))
		return out
	}
	for i, entry := range list {
		epath := fmt.Sprintf("%s[%d]", path, i)
		m, ok := p.block(epath, entry)
		if !ok {
			continue
		}
		m = p.refuseShareKeys(epath, m, "account_token_position", "allow_trace")
		f := p.fields(epath, m, [][]string{
			{"stream"}, {"service"}, {"accounts"}, {"latency"},
			{"response_type", "response"}, {"response_threshold", "threshold", "response_max_time", "response_time"},
		})
		stream, isStream := f["stream"]
		service, isService := f["service"]
		switch {
		case isStream == isService:
			p.bad(epath, "an export is a stream or a service")
		case isStream:
			if _, ok := f["response_type"]; ok {
				p.bad(epath+".response_type", "Detected response directive on non-service")
			}
			if _, ok := f["latency"]; ok {
				p.bad(epath+".latency", "Detected latency directive on non-service")
			}
			out.Streams = append(out.Streams, StreamExport{Subject: p.str(epath+".stream", stream), Accounts: p.accountNames(epath, f)})
		default:
			se := ServiceExport{Subject: p.str(epath+".service", service), Accounts: p.accountNames(epath, f)}
			if v, ok := f["response_type"]; ok {
				switch t := strings.ToLower(p.str(epath+".response_type", v)); t {
				case "single", "singleton":
					se.ResponseType = "singleton"
				case "stream":
					se.ResponseType = "stream"
				case "chunk", "chunked":
					se.ResponseType = "chunked"
				default:
					p.bad(epath+".response_type", "Unknown response type: %q", t)
				}
			}
			if v, ok := f["response_threshold"]; ok {
				se.ResponseThreshold = p.seconds(epath+".response_threshold", v)
			}
			if v, ok := f["latency"]; ok {
				se.Latency = p.latency(epath+".latency", v)
			}
			out.Services = append(out.Services, se)
		}
	}
	return out
}

// latency parses a service export's latency key as nats-server does: a
// subject, or {sampling: 50 | "50%" | "headers", subject} with sampling
// 100 when left out.
func (p *blockParser) latency(path string, raw any) *Latency {
	if subject, ok := raw.(string); ok {
		return &Latency{Sampling: 100, Subject: subject}
	}
	m, ok := p.block(path, raw)
	if !ok {
		return nil
	}
	f := p.fields(path, m, [][]string{{"sampling"}, {"subject"}})
	l := &Latency{Sampling: 100}
	if v, ok := f["sampling"]; ok {
		spath := path + ".sampling"
		n, isNumber := number(v)
		switch text, isText := v.(string); {
		case isText && strings.EqualFold(strings.TrimSpace(text), "headers"):
			n, isNumber = 0, false
		case isText:
			parsed, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(text), "%"))
			if err != nil {
				p.bad(spath, "Failed to parse latency sample: %v", err)
				return nil
			}
			n, isNumber = int64(parsed), true
		case !isNumber:
			p.bad(spath, "Expected latency sample to be a string or map/struct, got %s", describe(v))
			return nil
		}
		if isNumber && (n < 1 || n > 100) {
			p.bad(spath, "bad sampling percentage, should be 1-100")
			return nil
		}
		l.Sampling = int(n)
	}
	v, ok := f["subject"]
	if !ok {
		p.bad(path, "Latency subject required, but missing")
		return nil
	}
	l.Subject = p.str(path+".subject", v)
	return l
}

func (p *blockParser) accountNames(path string, f map[string]any) []string {
	v, ok := f["accounts"]
	if !ok {
		return nil
	}
	return p.strings(path+".accounts", v)
}

// imports parses an account's imports list.
func (p *blockParser) imports(path string, raw any) Imports {
	var out Imports
	list, ok := raw.([]any)
	if !ok {
		p.bad(path, "Imports should be an array, got %s", describe(raw))
		return out
	}
	for i, entry := range list {
		ipath := fmt.Sprintf("%s[%d]", path, i)
		m, ok := p.block(ipath, entry)
		if !ok {
			continue
		}
		m = p.refuseShareKeys(ipath, m, "share", "allow_trace")
		f := p.fields(ipath, m, [][]string{{"stream"}, {"service"}, {"prefix"}, {"to"}})
		stream, isStream := f["stream"]
		service, isService := f["service"]
		var to, prefix string
		if v, ok := f["to"]; ok {
			to = p.str(ipath+".to", v)
		}
		if v, ok := f["prefix"]; ok {
			prefix = p.str(ipath+".prefix", v)
		}
		switch {
		case isStream == isService:
			p.bad(ipath, "an import is a stream or a service")
		case isStream:
			acc, subject := p.importSource(ipath+".stream", stream)
			if prefix != "" && to != "" {
				p.bad(ipath, "Stream import can not have a 'prefix' and a 'to' property")
			}
			out.Streams = append(out.Streams, StreamImport{Account: acc, Subject: subject, Prefix: prefix, To: to})
		default:
			if prefix != "" {
				p.bad(ipath+".prefix", "a service import takes to, not prefix")
			}
			acc, subject := p.importSource(ipath+".service", service)
			out.Services = append(out.Services, ServiceImport{Account: acc, Subject: subject, To: to})
		}
	}
	return out
}

// importSource reads {account, subject}.
func (p *blockParser) importSource(path string, raw any) (string, string) {
	m, ok := p.block(path, raw)
	if !ok {
		return "", ""
	}
	f := p.fields(path, m, [][]string{{"account"}, {"subject"}})
	var acc, subject string
	if v, ok := f["account"]; ok {
		acc = p.str(path+".account", v)
	}
	if v, ok := f["subject"]; ok {
		subject = p.str(path+".subject", v)
	}
	if acc == "" || subject == "" {
		p.bad(path, "Expect an account name and a subject")
	}
	return acc, subject
}

// refuseShareKeys reports m's keys among names (nats-server's, which
// bus does not implement) and returns m without them.
func (p *blockParser) refuseShareKeys(path string, m map[string]any, names ...string) map[string]any {
	out := maps.Clone(m)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if slices.Contains(names, strings.ToLower(k)) {
			p.errs = append(p.errs, &nestedError{path: path + "." + k, reason: k + " " + noShareKey, err: ErrUnsupportedKey})
			delete(out, k)
		}
	}
	return out
}
