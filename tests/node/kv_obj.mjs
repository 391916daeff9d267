// The official NATS JavaScript client against a server (bus in
// tests/node_client_test.go, or nats-server): JetStream publish and
// consume, key-value buckets and the object store. Prints one line per
// check and exits non-zero at the first failure.
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, AckPolicy } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { Objm } from "@nats-io/obj";
import { createHash, randomBytes } from "node:crypto";

const url = process.argv[2] ?? "nats://127.0.0.1:4222";
const nc = await connect({ servers: url, timeout: 5000 });
let failed = false;
function check(name, ok, detail = "") {
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${detail ? ": " + detail : ""}`);
  if (!ok) failed = true;
}
const te = new TextEncoder();
const td = new TextDecoder();

try {
  // JetStream: a stream, acked publishes, a durable pull consumer.
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: "ORDERS", subjects: ["orders.>"] });
  const js = jetstream(nc);
  const pa = await js.publish("orders.new", te.encode("o1"), { msgID: "o-1" });
  const dup = await js.publish("orders.new", te.encode("o1"), { msgID: "o-1" });
  check("publish acked", pa.seq === 1 && pa.stream === "ORDERS", JSON.stringify(pa));
  check("duplicate detected", dup.duplicate === true && dup.seq === 1);
  await jsm.consumers.add("ORDERS", { durable_name: "billing", ack_policy: AckPolicy.Explicit });
  const c = await js.consumers.get("ORDERS", "billing");
  const m = await c.next({ expires: 5000 });
  check("consumer next", m !== null && td.decode(m.data) === "o1" && m.info.deliveryCount === 1, JSON.stringify(m?.info));
  await m.ackAck();
  const ci = await c.info();
  check("acked", ci.num_ack_pending === 0 && ci.num_pending === 0, JSON.stringify({ pending: ci.num_pending, ack: ci.num_ack_pending }));

  // Key-value.
  const kvm = new Kvm(nc);
  const kv = await kvm.create("CFG", { history: 5 });
  const r1 = await kv.put("db.url", "postgres://a");
  const r2 = await kv.put("db.url", "postgres://b");
  check("kv put revisions", r1 === 1 && r2 === 2, `${r1} ${r2}`);
  const e = await kv.get("db.url");
  check("kv get", e?.string() === "postgres://b" && e.revision === 2);
  let casFailed = false;
  try { await kv.update("db.url", "postgres://c", 1); } catch { casFailed = true; }
  check("kv update with a stale revision fails", casFailed);
  const r3 = await kv.update("db.url", "postgres://c", 2);
  check("kv update with the right revision", r3 === 3, `${r3}`);
  let createFailed = false;
  try { await kv.create("db.url", "x"); } catch { createFailed = true; }
  check("kv create of an existing key fails", createFailed);
  await kv.put("feature.x", "on");
  const keys = [];
  for await (const k of await kv.keys()) keys.push(k);
  keys.sort();
  check("kv keys", JSON.stringify(keys) === JSON.stringify(["db.url", "feature.x"]), JSON.stringify(keys));
  const hist = [];
  for await (const h of await kv.history({ key: "db.url" })) hist.push(h.string());
  check("kv history", JSON.stringify(hist) === JSON.stringify(["postgres://a", "postgres://b", "postgres://c"]), JSON.stringify(hist));
  await kv.delete("feature.x");
  const gone = await kv.get("feature.x");
  check("kv delete leaves a marker", gone !== null && gone.operation === "DEL", gone?.operation);
  await kv.purge("db.url");
  const keysAfter = [];
  for await (const k of await kv.keys()) keysAfter.push(k);
  check("kv keys after delete and purge", keysAfter.length === 0, JSON.stringify(keysAfter));
  const w = await kv.watch({ key: "live.>" });
  const seen = (async () => {
    for await (const u of w) {
      if (u.key === "live.a") return u.string();
    }
  })();
  await kv.put("live.a", "hello");
  const watched = await Promise.race([seen, new Promise((r) => setTimeout(() => r("timeout"), 5000))]);
  w.stop();
  check("kv watch", watched === "hello", watched);
  const st = await kv.status();
  check("kv status", st.bucket === "CFG" && st.history === 5, JSON.stringify({ bucket: st.bucket, history: st.history }));

  // Object store: several chunks, digest checked by the client.
  const objm = new Objm(nc);
  const os = await objm.create("FILES");
  const data = randomBytes(300 * 1024 + 7);
  const info = await os.putBlob({ name: "blob.bin", description: "random" }, data);
  check("obj put", info.size === data.length && info.chunks > 1, `${info.size} bytes, ${info.chunks} chunks`);
  const back = await os.getBlob("blob.bin");
  const same = back !== null && createHash("sha256").update(back).digest("hex") === createHash("sha256").update(data).digest("hex");
  check("obj get", same, `${back?.length} bytes`);
  await os.putBlob({ name: "small.txt" }, te.encode("hi"));
  const names = (await os.list()).map((i) => i.name).sort();
  check("obj list", JSON.stringify(names) === JSON.stringify(["blob.bin", "small.txt"]), JSON.stringify(names));
  await os.delete("blob.bin");
  const after = await os.info("blob.bin");
  check("obj delete", after === null || after.deleted === true);
  const sealed = await os.seal();
  check("obj seal", sealed.sealed === true);
} catch (err) {
  check("unexpected error", false, err?.stack ?? String(err));
}
await nc.close();
process.exit(failed ? 1 : 0);
