// The page tests/ws_browser_test.go loads in headless Chromium: the
// official NATS JavaScript client (@nats-io/nats-core's wsconnect, with
// @nats-io/jetstream and @nats-io/kv), bundled for the browser by
// esbuild, against the WebSocket URL in the page's ?ws= parameter. It
// connects, subscribes, publishes, requests, creates a stream, publishes
// to it and consumes, and puts and watches a KV key, then POSTs its
// checks to /result on the page's own server, which the test reads.
import { wsconnect } from "@nats-io/nats-core";
import { jetstream, jetstreamManager, AckPolicy } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";

const params = new URLSearchParams(location.search);
const checks = [];
function check(name, ok, detail = "") {
  checks.push({ name, ok: !!ok, detail: String(detail) });
}

// first is the first value of an async iterator, or null after ms.
async function first(iter, ms, pred = () => true) {
  const timeout = new Promise((resolve) => setTimeout(() => resolve(null), ms));
  const next = (async () => {
    for await (const v of iter) if (pred(v)) return v;
    return null;
  })();
  return Promise.race([next, timeout]);
}

async function run() {
  const nc = await wsconnect({
    servers: params.get("ws"),
    user: params.get("user") ?? undefined,
    pass: params.get("pass") ?? undefined,
    timeout: 5000,
  });
  check("connected", nc.info?.server_id, nc.getServer());

  // Core: a subscription sees this page's publish, and a request is
  // answered by a responder (this page's, then the test's over TCP).
  const sub = nc.subscribe("page.>", { max: 1 });
  nc.publish("page.hello", "hi");
  const m = await first(sub, 5000);
  check("subscribe sees publish", m?.subject === "page.hello" && m.string() === "hi", m?.subject);
  nc.subscribe("page.echo", { callback: (_, msg) => msg.respond("echo:" + msg.string()) });
  const r = await nc.request("page.echo", "q", { timeout: 5000 });
  check("request answered", r.string() === "echo:q", r.string());
  const fromTest = await nc.request("test.echo", "from the page", { timeout: 5000 });
  check("request to a TCP responder", fromTest.string() === "tcp:from the page", fromTest.string());

  // JetStream: a stream, an acked publish, a durable pull consumer.
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "WEB", subjects: ["web.>"] });
  const js = jetstream(nc);
  const pa = await js.publish("web.click", "button-1", { msgID: "click-1" });
  check("stream publish acked", pa.stream === "WEB" && pa.seq === 1, JSON.stringify(pa));
  await jsm.consumers.add("WEB", { durable_name: "page", ack_policy: AckPolicy.Explicit });
  const c = await js.consumers.get("WEB", "page");
  const jm = await c.next({ expires: 5000 });
  check("consumer next", jm?.string() === "button-1" && jm.subject === "web.click", jm?.subject);
  const acked = await jm?.ackAck();
  check("ack acknowledged", acked === true, acked);

  // KV: a watch sees a put, and a get reads it back.
  const kv = await new Kvm(nc).create("PREFS", { history: 3 });
  const watch = await kv.watch({ key: "theme" });
  const rev = await kv.put("theme", "dark");
  const e = await first(watch, 5000, (e) => e.key === "theme");
  check("kv watch sees put", e?.string() === "dark" && e.revision === rev, `${e?.string()} rev ${e?.revision}`);
  watch.stop();
  const got = await kv.get("theme");
  check("kv get", got?.string() === "dark", got?.string());

  await nc.drain();
  check("drained", nc.isClosed());
}

let error = "";
try {
  await run();
} catch (err) {
  error = String(err?.stack ?? err);
}
await fetch("/result", { method: "POST", body: JSON.stringify({ checks, error }) });
document.title = "done";
