package tests

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/bus-dev/bus/server"
)

// pageResult is what tests/node/browser/ws_page.mjs POSTs to /result.
type pageResult struct {
	Checks []struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
	} `json:"checks"`
	Error string `json:"error"`
}

// wsPageChecks are the checks the page makes, each of which must pass.
var wsPageChecks = []string{
	"connected", "subscribe sees publish", "request answered", "request to a TCP responder",
	"stream publish acked", "consumer next", "ack acknowledged", "kv watch sees put", "kv get", "drained",
}

// bundlePage bundles the page's script and the npm packages it imports
// into one ES module, with the esbuild tests/node/package.json pins.
func bundlePage(t *testing.T) []byte {
	t.Helper()
	nodeInstalled(t)
	out := filepath.Join(t.TempDir(), "page.js")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join("node_modules", ".bin", "esbuild"), filepath.Join("browser", "ws_page.mjs"),
		"--bundle", "--format=esm", "--platform=browser", "--target=es2022", "--log-level=warning", "--outfile="+out)
	cmd.Dir = "node"
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("esbuild: %v\n%s", err, b)
	}
	js, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// pageServer serves the test page and its script, and hands each result
// the page POSTs to the returned channel.
func pageServer(t *testing.T, script []byte) (*httptest.Server, <-chan pageResult) {
	t.Helper()
	results := make(chan pageResult, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><title>running</title><script type="module" src="/page.js"></script>`)
	})
	mux.HandleFunc("GET /page.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write(script)
	})
	mux.HandleFunc("POST /result", func(w http.ResponseWriter, r *http.Request) {
		var res pageResult
		if err := json.NewDecoder(r.Body).Decode(&res); err != nil {
			res.Error = "bad result: " + err.Error()
		}
		select {
		case results <- res:
		default:
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, results
}

// TestWebSocketInBrowser: headless Chromium loads a page with the
// official NATS JavaScript client, which reaches the server over ws://
// from an allowed origin and connects, subscribes, publishes, requests,
// creates a stream, publishes to it and consumes, and puts and watches a
// KV key. The same page runs against the reference, so its expectations
// are the reference's, and against bus over wss:// (the browser trusts
// any certificate: the test's CA is not the system's). What the page did
// is then read over TCP.
func TestWebSocketInBrowser(t *testing.T) {
	ctx := browser(t, chromedp.Flag("ignore-certificate-errors", true))
	ca := newTestCA(t, "browser")
	cert, key := ca.serverCert(t)
	page, results := pageServer(t, bundlePage(t))
	auth := server.Authorization{Users: []server.User{{Name: "web", Password: "pw"}}}
	targets := []struct {
		name  string
		start func(t *testing.T) (ws, tcp string)
	}{
		{"bus", func(t *testing.T) (string, string) {
			s, ws := startWSBus(t, server.Options{JetStream: true, Authorization: auth,
				WebSocket: server.WebSocketOptions{AllowedOrigins: []string{page.URL}}})
			return ws, s.Addr().String()
		}},
		{"bus wss", func(t *testing.T) (string, string) {
			s, ws := startWSBus(t, server.Options{JetStream: true, Authorization: auth,
				WebSocket: server.WebSocketOptions{AllowedOrigins: []string{page.URL},
					TLS: server.TLSOptions{CertFile: cert, KeyFile: key}}})
			return ws, s.Addr().String()
		}},
		{"reference", func(t *testing.T) (string, string) {
			var opts *natsserver.Options // the reference writes the port it bound here
			ns := startReferenceWith(t, func(o *natsserver.Options) {
				opts = o
				o.JetStream, o.StoreDir = true, t.TempDir()
				o.Users = refOptions(auth).Users
				o.Websocket = natsserver.WebsocketOpts{Host: "127.0.0.1", Port: -1, NoTLS: true, AllowedOrigins: []string{page.URL}}
			})
			ws := "ws://127.0.0.1:" + strconv.Itoa(opts.Websocket.Port)
			return ws, refAddr(ns)
		}},
	}
	for _, target := range targets {
		t.Run(target.name, func(t *testing.T) {
			ws, tcp := target.start(t)
			nc := connect(t, "nats://"+tcp, nats.UserInfo("web", "pw"))
			if _, err := nc.Subscribe("test.echo", func(m *nats.Msg) { _ = m.Respond(append([]byte("tcp:"), m.Data...)) }); err != nil {
				t.Fatal(err)
			}
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
			q := url.Values{"ws": {ws}, "user": {"web"}, "pass": {"pw"}}
			do(t, ctx, "load the page", chromedp.Navigate(page.URL+"/?"+q.Encode()))
			var res pageResult
			select {
			case res = <-results:
			case <-time.After(60 * time.Second):
				t.Fatal("the page sent no result within 60s")
			}
			var passed []string
			for _, c := range res.Checks {
				if !c.OK {
					t.Errorf("page check %q failed: %s", c.Name, c.Detail)
					continue
				}
				passed = append(passed, c.Name)
			}
			if res.Error != "" {
				t.Errorf("the page threw: %s", res.Error)
			}
			if !slices.Equal(passed, wsPageChecks) {
				t.Fatalf("page checks passed: %q, want %q", passed, wsPageChecks)
			}

			// What the page stored is there for a TCP client.
			js, err := jetstream.New(nc)
			if err != nil {
				t.Fatal(err)
			}
			jctx := ctxT(t)
			stream, err := js.Stream(jctx, "WEB")
			if err != nil {
				t.Fatal(err)
			}
			m, err := stream.GetMsg(jctx, 1)
			if err != nil || m.Subject != "web.click" || string(m.Data) != "button-1" {
				t.Fatalf("WEB's message 1 over TCP: %v %v", m, err)
			}
			kv, err := js.KeyValue(jctx, "PREFS")
			if err != nil {
				t.Fatal(err)
			}
			e, err := kv.Get(jctx, "theme")
			if err != nil || string(e.Value()) != "dark" {
				t.Fatalf("PREFS theme over TCP: %v %v", e, err)
			}
		})
	}
}
