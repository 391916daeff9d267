// bus dashboard: polls /dashboard/api/state every 2 s and renders it.
// Plain JS, no dependencies; charts are SVG drawn by lineChart below.
"use strict";

const API = "/dashboard/api/";
const POLL_MS = 2000;
const WINDOW_MS = 3600 * 1000; // the server keeps an hour of samples
const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#4b5563"];
// Each line also has its own dash and width (the first the widest), so
// lines with equal values (two consumers as far behind) stay visible.
const DASHES = ["", "8 4", "2 3", "10 3 2 3", "4 4", "1 4", "12 6", "6 2 2 2"];
const lineWidth = (i) => 4 - 2 * i / (COLORS.length - 1);

const $ = (id) => document.getElementById(id);
const st = {
  state: null,        // the last state document
  prev: null,         // the one before, for rates
  view: "overview",
  stream: "",         // the stream of the consumers, dlq or messages view
  since: 0,           // newest sample held, sent as ?since=
  lag: {},            // consumer -> [[t, lag]…] for st.lagStream
  lagStream: "",
  ratesIn: [], ratesOut: [],
  storeRates: {},     // stream -> messages stored per second, from consecutive polls
  msgs: null,         // the message list shown
  msgsFrom: 1,
  expanded: new Set(), // seqs whose headers and payload are open
  full: {},           // seq -> payload shown whole
  auth: "",           // "Basic …" once the user logged in here
  authUser: "",
};

// ---- formatting ----
function esc(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}
function num(n) { return Number(n).toLocaleString("en-US"); }
function bytes(n) {
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  n = Number(n);
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i === 0 ? Math.round(n) : n.toFixed(n < 10 ? 2 : 1)) + " " + u[i];
}
function rate(n) { return n >= 100 ? num(Math.round(n)) : (Math.round(n * 10) / 10).toString(); }
function ago(ms) {
  if (!ms) return "never";
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return s + " s ago";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  if (s < 86400) return Math.floor(s / 3600) + " h ago";
  return Math.floor(s / 86400) + " d ago";
}
function clock(ms) { return new Date(ms).toLocaleTimeString("en-GB", { hour12: false }); }
function when(ms) { return ms ? new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z") : "–"; }

// ---- HTTP ----
// getJSON GETs path; a refusal throws an Error carrying its status.
async function getJSON(path) {
  const headers = st.auth ? { Authorization: st.auth } : {};
  const r = await fetch(API + path, { headers, cache: "no-store" });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) {
    const e = new Error(body.error ? body.error.description : r.status + " " + r.statusText);
    e.status = r.status;
    throw e;
  }
  return body;
}

// getMessages GETs stored messages, which need a login whenever the
// server has authorization: on 401 it asks for a user and tries again.
async function getMessages(path) {
  for (;;) {
    try {
      return await getJSON(path);
    } catch (e) {
      if (e.status !== 401 || !await login(e.message)) throw e;
    }
  }
}

// act POSTs an action; on 401 it asks for a user and tries again.
async function act(path, body) {
  for (;;) {
    const headers = { "Content-Type": "application/json", "X-Bus-Dashboard": "1" };
    if (st.auth) headers.Authorization = st.auth;
    const r = await fetch(API + path, { method: "POST", headers, body: JSON.stringify(body || {}) });
    const res = await r.json().catch(() => ({}));
    if (r.status === 401 || r.status === 403 && !st.auth && /may not publish/.test(res.error && res.error.description)) {
      const ok = await login(res.error ? res.error.description : "Log in");
      if (!ok) throw new Error("not logged in");
      continue;
    }
    if (!r.ok) throw new Error(res.error ? res.error.description : r.status + " " + r.statusText);
    return res;
  }
}

// ---- modal: confirm and login ----
function modal(title, text, okLabel, withLogin) {
  return new Promise((resolve) => {
    $("modal-title").textContent = title;
    $("modal-text").textContent = text;
    $("modal-ok").textContent = okLabel;
    $("modal-login").classList.toggle("hidden", !withLogin);
    $("modal").classList.remove("hidden");
    if (withLogin) $("login-user").focus(); else $("modal-ok").focus();
    const done = (v) => {
      $("modal").classList.add("hidden");
      $("modal-form").onsubmit = null;
      $("modal-cancel").onclick = null;
      resolve(v);
    };
    $("modal-form").onsubmit = (e) => { e.preventDefault(); done(true); };
    $("modal-cancel").onclick = () => done(false);
  });
}
function confirmAction(title, text, label) { return modal(title, text, label || "OK", false); }
async function login(reason) {
  const ok = await modal("Log in", reason, "Log in", true);
  if (!ok) return false;
  const user = $("login-user").value;
  st.auth = "Basic " + btoa(unescape(encodeURIComponent(user + ":" + $("login-pass").value)));
  st.authUser = user;
  $("login-pass").value = "";
  $("user").textContent = "as " + user;
  return true;
}

let noticeTimer = 0;
function notice(text, isError) {
  const n = $("notice");
  n.textContent = text;
  n.className = "notice" + (isError ? " error" : "");
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => n.classList.add("hidden"), isError ? 10000 : 5000);
}

// ---- charts ----
// lineChart draws series ([{name, points: [[t, v]…]}]) over [from, to]
// as an SVG string. Each line carries data-series and data-last.
function lineChart(series, from, to, unit) {
  const W = 900, H = 220, L = 56, R = 12, T = 10, B = 24;
  let maxV = 0;
  for (const s of series) for (const p of s.points) if (p[0] >= from) maxV = Math.max(maxV, p[1]);
  const top = niceMax(maxV);
  const x = (t) => L + (W - L - R) * (t - from) / Math.max(1, to - from);
  const y = (v) => T + (H - T - B) * (1 - v / top);
  let svg = `<svg viewBox="0 0 ${W} ${H}" class="chart-svg" role="img" aria-label="${esc(unit)} over time">`;
  for (let i = 0; i <= 4; i++) {
    const v = top * i / 4, yy = y(v).toFixed(1);
    svg += `<line x1="${L}" x2="${W - R}" y1="${yy}" y2="${yy}" class="grid"/>`;
    svg += `<text x="${L - 6}" y="${yy}" class="axis" text-anchor="end" dominant-baseline="middle">${esc(short(v))}</text>`;
  }
  for (let i = 0; i <= 4; i++) {
    const t = from + (to - from) * i / 4;
    svg += `<text x="${x(t).toFixed(1)}" y="${H - 6}" class="axis" text-anchor="${i === 0 ? "start" : i === 4 ? "end" : "middle"}">${esc(clock(t))}</text>`;
  }
  series.forEach((s, i) => {
    const pts = s.points.filter((p) => p[0] >= from);
    if (!pts.length) return;
    const d = pts.map((p) => x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1)).join(" ");
    const last = pts[pts.length - 1][1];
    const dash = DASHES[i % DASHES.length];
    svg += `<polyline points="${d}" fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="${lineWidth(i % COLORS.length).toFixed(1)}"${dash ? ` stroke-dasharray="${dash}"` : ""} stroke-linecap="round" data-series="${esc(s.name)}" data-last="${last}"/>`;
    if (pts.length === 1) svg += `<circle cx="${x(pts[0][0]).toFixed(1)}" cy="${y(pts[0][1]).toFixed(1)}" r="3" fill="${COLORS[i % COLORS.length]}"/>`;
  });
  svg += "</svg>";
  const legend = series.map((s, i) => {
    const last = s.points.length ? s.points[s.points.length - 1][1] : 0;
    const dash = DASHES[i % DASHES.length];
    return `<span class="legend-item"><svg width="24" height="12"><line x1="1" y1="6" x2="23" y2="6" stroke="${COLORS[i % COLORS.length]}" stroke-width="3"${dash ? ` stroke-dasharray="${dash}"` : ""}/></svg>${esc(s.name)} <b class="legend-value" data-series="${esc(s.name)}">${esc(num(last))}</b>${unit ? " " + esc(unit) : ""}</span>`;
  }).join("");
  return svg + `<div class="legend">${legend}</div>`;
}
function niceMax(v) {
  if (v <= 0) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}
function short(v) {
  if (v >= 1e9) return (v / 1e9).toFixed(1).replace(/\.0$/, "") + "G";
  if (v >= 1e6) return (v / 1e6).toFixed(1).replace(/\.0$/, "") + "M";
  if (v >= 1e3) return (v / 1e3).toFixed(1).replace(/\.0$/, "") + "k";
  return String(Math.round(v * 100) / 100);
}
function sparkWindow(seriesList, now) {
  let first = now;
  for (const pts of seriesList) if (pts.length) first = Math.min(first, pts[0][0]);
  return Math.max(now - WINDOW_MS, Math.min(first, now - 60 * 1000));
}

// ---- rendering ----
function card(label, value, sub) {
  return `<div class="card"><div class="card-label">${esc(label)}</div><div class="card-value">${value}</div>${sub ? `<div class="card-sub">${sub}</div>` : ""}</div>`;
}
function setHTML(el, html) { if (el.dataset.html !== html) { el.innerHTML = html; el.dataset.html = html; } }

function renderOverview(s, r) {
  const v = s.server;
  setHTML($("overview-cards"), [
    card("Version", esc(v.version), "uptime " + esc(v.uptime)),
    card("Connections", num(v.connections), num(v.total_connections) + " since start" +
      (v.mqtt_connections ? " · " + num(v.mqtt_connections) + " MQTT" : "") + (v.websocket_connections ? " · " + num(v.websocket_connections) + " WebSocket" : "")),
    card("Subscriptions", num(v.subscriptions)),
    card("Messages in", rate(r.in) + "/s", num(v.in_msgs) + " total · " + bytes(r.inBytes) + "/s"),
    card("Messages out", rate(r.out) + "/s", num(v.out_msgs) + " total · " + bytes(r.outBytes) + "/s"),
    card("Bytes in / out", bytes(v.in_bytes) + " / " + bytes(v.out_bytes)),
    card("Slow consumers", `<span class="${v.slow_consumers ? "warn" : ""}">${num(v.slow_consumers)}</span>`),
    card("Memory", bytes(v.mem)),
  ].join(""));
  const j = s.jetstream;
  setHTML($("js-cards"), j ? [
    card("Streams", num(j.streams), num(j.consumers) + " consumers"),
    card("Stored messages", num(j.messages), bytes(j.bytes)),
    card("File storage", bytes(j.storage), "of " + bytes(j.max_storage) + " available"),
    card("Memory storage", bytes(j.memory), "of " + bytes(j.max_memory)),
    card("API requests", num(j.api_total), num(j.api_errors) + " errors"),
    card("Dead-lettered, ever", `<span class="${j.dead_lettered ? "warn" : ""}">${num(j.dead_lettered)}</span>`,
      num(dlqStreams(s).reduce((a, x) => a + x.messages, 0)) + " in dead-letter streams now · " + num(j.dead_letters_lost) + " lost" + (j.damaged ? ` · <span class="warn">${j.damaged} damaged streams</span>` : "")),
  ].join("") : card("JetStream", "off", "persistent streams are disabled"));
  renderConns(s);
  const now = s.now;
  const inPts = st.ratesIn.concat([[now, r.in]]), outPts = st.ratesOut.concat([[now, r.out]]);
  setHTML($("rate-chart"), lineChart([{ name: "in", points: inPts }, { name: "out", points: outPts }], sparkWindow([inPts], now), now, "msgs/s"));
}

// renderConns lists the open connections: the type /connz gives (nats,
// websocket, mqtt) and who it is, an MQTT client's client id or a NATS
// client's name.
function renderConns(s) {
  const cs = s.connections || [];
  if (!cs.length) { setHTML($("conns-table"), `<p class="muted">No client connections.</p>`); return; }
  const rows = cs.map((c) => `<tr data-cid="${c.cid}"><td class="n">${c.cid}</td><td class="conn-type"><span class="badge">${esc(c.type)}</span></td>
    <td class="conn-who">${c.mqtt_client ? `<code>${esc(c.mqtt_client)}</code>` : esc(c.name || "–")}</td><td>${esc(c.ip.includes(":") ? "[" + c.ip + "]" : c.ip)}:${c.port}</td>
    <td>${esc(ago(c.start))}</td><td class="n">${num(c.subscriptions)}</td><td class="n">${num(c.in_msgs)}</td><td class="n">${num(c.out_msgs)}</td></tr>`).join("");
  setHTML($("conns-table"), `<table><thead><tr><th class="n">Cid</th><th>Type</th><th title="an MQTT client's client id, or the name a NATS client gave">Client id / name</th><th>Address</th>
    <th>Connected</th><th class="n">Subscriptions</th><th class="n">Messages in</th><th class="n">Messages out</th></tr></thead><tbody>${rows}</tbody></table>` +
    (s.connections_omitted ? `<p class="muted">${num(s.connections_omitted)} more connections not shown (see <a href="/connz">/connz</a>).</p>` : ""));
}

function renderStreams(s) {
  if (!s.jetstream) { setHTML($("streams-table"), `<p class="muted">JetStream is off.</p>`); return; }
  if (!s.streams.length) { setHTML($("streams-table"), `<p class="muted">No streams yet.</p>`); return; }
  const rows = s.streams.map((x) => `<tr data-stream="${esc(x.name)}">
    <td><a href="#consumers/${encodeURIComponent(x.name)}" class="stream-name">${esc(x.name)}</a>${x.dlq ? ` <a class="badge dlq" href="#dlq/${encodeURIComponent(x.name)}">DLQ</a>` : ""}</td>
    <td>${esc(x.storage)}</td><td class="n msgs">${num(x.messages)}</td><td class="n">${bytes(x.bytes)}</td>
    <td class="n">${num(x.first_seq)}</td><td class="n">${num(x.last_seq)}</td>
    <td class="n">${num(x.consumers)}</td><td class="n">${num(x.lag)}</td>
    <td class="n rate">${rate(st.storeRates[x.name] || 0)}/s</td><td class="n">${x.dead_lettered ? `<span class="warn">${num(x.dead_lettered)}</span>` : "0"}</td>
    <td>${esc(ago(x.last_ts))}</td>
    <td class="actions"><a href="#messages/${encodeURIComponent(x.name)}">Browse</a>
      <button data-action="purge" data-stream="${esc(x.name)}" class="danger small">Purge</button></td></tr>`).join("");
  setHTML($("streams-table"), `<table><thead><tr><th>Name</th><th>Storage</th><th class="n">Messages</th><th class="n">Bytes</th>
    <th class="n">First seq</th><th class="n">Last seq</th><th class="n">Consumers</th><th class="n">Lag</th><th class="n" title="messages stored per second: published, mirrored or sourced">Store rate</th>
    <th class="n" title="messages its consumers dead-lettered since the server started">Dead-lettered, ever</th><th>Last message</th><th></th></tr></thead><tbody>${rows}</tbody></table>` +
    (s.streams_omitted ? `<p class="muted">${num(s.streams_omitted)} more streams not shown.</p>` : ""));
}

function renderConsumers(s) {
  const sel = $("consumer-stream");
  const names = s.streams.map((x) => x.name);
  const opts = names.map((n) => `<option value="${esc(n)}"${n === st.stream ? " selected" : ""}>${esc(n)}</option>`).join("");
  if (sel.dataset.html !== opts) { sel.innerHTML = opts; sel.dataset.html = opts; }
  if (!s.selected) {
    setHTML($("consumers-table"), `<p class="muted">${names.length ? "Pick a stream." : "No streams yet."}</p>`);
    setHTML($("lag-chart"), "");
    return;
  }
  const cs = s.selected.consumers;
  setHTML($("consumers-table"), cs.length ? `<table><thead><tr><th>Consumer</th><th class="n">Lag (pending)</th><th class="n">Ack pending</th>
    <th class="n">Redelivered</th><th class="n">Waiting pulls</th><th class="n" title="messages this consumer dead-lettered since the server started">Dead-lettered, ever</th><th class="n">Delivered seq</th>
    <th class="n">Ack floor</th><th>Last active</th><th>Oldest unprocessed</th></tr></thead><tbody>${cs.map((c) => `<tr data-consumer="${esc(c.name)}">
    <td>${esc(c.name)}</td><td class="n lag">${num(c.num_pending)}</td><td class="n">${num(c.num_ack_pending)}</td>
    <td class="n">${num(c.num_redelivered)}</td><td class="n">${num(c.num_waiting)}</td>
    <td class="n">${c.dead_lettered ? `<span class="warn">${num(c.dead_lettered)}</span>` : "0"}${c.dead_letters_lost ? ` <span class="warn">(${num(c.dead_letters_lost)} lost)</span>` : ""}</td>
    <td class="n">${num(c.delivered_seq)}</td><td class="n">${num(c.ack_floor_seq)}</td>
    <td>${esc(ago(c.last_active))}</td><td>${c.oldest_unprocessed ? esc(ago(c.oldest_unprocessed)) : "–"}</td></tr>`).join("")}</tbody></table>`
    : `<p class="muted">No consumers on this stream.</p>`);
  // The eight most lagging consumers, each its history and the live value.
  const now = s.now;
  const series = cs.slice().sort((a, b) => b.num_pending - a.num_pending).slice(0, COLORS.length)
    .map((c) => ({ name: c.name, points: (st.lag[c.name] || []).concat([[now, c.num_pending]]) }));
  setHTML($("lag-chart"), series.length ? lineChart(series, sparkWindow(series.map((x) => x.points), now), now, "") : "");
  $("lag-note").textContent = (cs.length > COLORS.length ? `The ${COLORS.length} most lagging of ${cs.length} consumers. ` : "") +
    (s.selected.untracked ? `${s.selected.untracked} consumers of the server have no history (the server keeps at most 500).` : "");
}

function dlqStreams(s) { return s.streams.filter((x) => x.dlq); }

function renderDLQ(s) {
  const list = dlqStreams(s);
  const badge = $("dlq-count");
  const total = list.reduce((a, x) => a + x.messages, 0);
  badge.textContent = num(total);
  badge.title = num(total) + " dead letters stored now";
  badge.classList.toggle("hidden", total === 0);
  if (st.view !== "dlq") return;
  setHTML($("dlq-list"), list.length ? `<table><thead><tr><th>Stream</th><th class="n">Dead letters now</th><th class="n">Bytes</th><th>Newest</th><th></th></tr></thead><tbody>` +
    list.map((x) => `<tr class="${x.name === st.stream ? "selected" : ""}" data-stream="${esc(x.name)}"><td><a href="#dlq/${encodeURIComponent(x.name)}" class="dlq-name">${esc(x.name)}</a></td>
    <td class="n">${num(x.messages)}</td><td class="n">${bytes(x.bytes)}</td><td>${esc(ago(x.last_ts))}</td>
    <td class="actions"><button data-action="redrive-all" data-stream="${esc(x.name)}" ${x.messages ? "" : "disabled"}>Redrive all</button>
    <button data-action="purge" data-stream="${esc(x.name)}" class="danger small" ${x.messages ? "" : "disabled"}>Purge</button></td></tr>`).join("") + "</tbody></table>"
    : `<p class="muted">No dead-letter streams. Give a consumer <code>x_bus_dead_letter_subject</code> and a stream that captures it.</p>`);
}

function payloadHTML(m, full) {
  const p = full || m.payload;
  const more = p.truncated ? ` <button data-action="show-all" data-seq="${m.seq}" class="link">show all ${bytes(p.size)}</button>` : "";
  return `<pre class="payload ${p.encoding}" data-encoding="${p.encoding}">${esc(p.text)}</pre><div class="muted">${esc(p.encoding)} · ${bytes(p.size)}${p.truncated ? " · truncated" : ""}${more}</div>`;
}

function renderMessages(el, stream, isDLQ) {
  const m = st.msgs;
  if (!m || m.stream !== stream) { setHTML(el, `<h2>${esc(stream)}</h2><p class="muted">Loading…</p>`); return; }
  if (m.needLogin) {
    // With authorization the server shows stored messages only to one
    // of its users: say so, and how to log in.
    setHTML(el, `<h2>${esc(stream)}</h2><div class="login-needed">
      <p>Stored messages need a login here. This server has authorization configured, so the dashboard shows messages only to one of its users
      (a user name and password, or any name with the token as the password), with that user's subscribe permissions.
      ${st.authUser ? `The login as <b>${esc(st.authUser)}</b> was refused.` : ""}</p>
      <p><button data-action="login" class="primary">Log in</button></p>
      <p class="muted">To protect the counters and the rest of the monitoring port as well, set <code>http_auth: true</code>.</p></div>`);
    return;
  }
  if (m.error) { setHTML(el, `<h2>${esc(stream)}</h2><p class="error-text">${esc(m.error)}</p>`); return; }
  const head = `<h2>${isDLQ ? "Dead letters in" : "Messages of"} <span class="stream-title">${esc(stream)}</span></h2>
    <div class="pager">${st.msgsFrom > 1 ? `<button data-action="first-page">First</button>` : ""}${m.next_seq ? `<button data-action="next-page" data-seq="${m.next_seq}">Next page</button>` : ""}
    <span class="muted">from seq ${num(st.msgsFrom)}</span></div>`;
  if (!m.messages.length) { setHTML(el, head + `<p class="muted">No messages${st.msgsFrom > 1 ? " from here on" : ""}.</p>`); return; }
  const rows = m.messages.map((x) => {
    const d = x.dead_letter;
    const open = st.expanded.has(x.seq);
    const cols = d ? `<td>${esc(d.stream)} <span class="muted">#${esc(d.sequence)}</span><br><code>${esc(d.subject)}</code></td><td>${esc(d.consumer)}</td><td class="n">${esc(d.deliveries)}</td><td class="reason">${esc(d.reason)}${d.redrive_count ? ` <span class="badge">redriven ${esc(d.redrive_count)}×</span>` : ""}</td>`
      : `<td colspan="4"><code>${esc(x.subject)}</code></td>`;
    const preview = x.payload.encoding === "text" ? x.payload.text.slice(0, 80) : "(binary, " + bytes(x.payload.size) + ")";
    return `<tr class="msg" data-seq="${x.seq}"><td class="n"><button data-action="toggle" data-seq="${x.seq}" class="link">${open ? "▾" : "▸"} ${x.seq}</button></td><td>${esc(when(x.time))}</td>${cols}
      <td class="preview">${esc(preview)}</td><td class="actions">${d ? `<button data-action="redrive" data-seq="${x.seq}" class="redrive">Redrive</button>` : ""}
      <button data-action="delete" data-seq="${x.seq}" class="danger small">Delete</button></td></tr>` +
      (open ? `<tr class="detail"><td></td><td colspan="7"><table class="headers">${x.headers.map((h) => `<tr><th>${esc(h.key)}</th><td>${esc(h.value)}</td></tr>`).join("") || `<tr><td class="muted">no headers</td></tr>`}</table>${payloadHTML(x, st.full[x.seq])}</td></tr>` : "");
  }).join("");
  setHTML(el, head + `<table class="messages"><thead><tr><th class="n">Seq</th><th>Stored</th>${isDLQ || m.messages.some((x) => x.dead_letter) ? "<th>Origin</th><th>Consumer</th><th class=\"n\">Deliveries</th><th>Reason</th>" : "<th colspan=\"4\">Subject</th>"}<th>Payload</th><th></th></tr></thead><tbody>${rows}</tbody></table>`);
}

function render() {
  const s = st.state;
  if (!s) return;
  $("server-name").textContent = s.server.name === s.server.id ? "" : s.server.name;
  const r = rates(s);
  renderOverview(s, r);
  renderStreams(s);
  renderConsumers(s);
  renderDLQ(s);
  if (st.view === "dlq") {
    const show = !!st.stream;
    $("dlq-messages").classList.toggle("hidden", !show);
    if (show) renderMessages($("dlq-messages"), st.stream, true);
  } else if (st.view === "messages") {
    renderMessages($("stream-messages"), st.stream, false);
  }
}

// rates are the server's per-second traffic between the last two polls,
// and each stream's store rate: the larger move of its last seq, which
// every message it stores advances (published, mirrored or sourced), and
// of accepted, which counts publishes only.
function rates(s) {
  const p = st.prev;
  const out = { in: 0, out: 0, inBytes: 0, outBytes: 0 };
  if (!p || s.now <= p.now) return out;
  const dt = (s.now - p.now) / 1000;
  out.in = Math.max(0, s.server.in_msgs - p.server.in_msgs) / dt;
  out.out = Math.max(0, s.server.out_msgs - p.server.out_msgs) / dt;
  out.inBytes = Math.max(0, s.server.in_bytes - p.server.in_bytes) / dt;
  out.outBytes = Math.max(0, s.server.out_bytes - p.server.out_bytes) / dt;
  const before = {};
  for (const x of p.streams) before[x.name] = x;
  st.storeRates = {};
  for (const x of s.streams) {
    const b = before[x.name];
    if (b) st.storeRates[x.name] = Math.max(0, x.last_seq - b.last_seq, x.accepted - b.accepted) / dt;
  }
  return out;
}

// ---- polling ----
let polling = false;
async function poll() {
  if (polling) return;
  polling = true;
  try {
    const wantLag = st.view === "consumers" ? st.stream : "";
    if (wantLag !== st.lagStream) { st.lagStream = wantLag; st.lag = {}; st.since = 0; st.ratesIn = []; st.ratesOut = []; }
    const s = await getJSON("state?since=" + st.since + (wantLag ? "&stream=" + encodeURIComponent(wantLag) : ""));
    absorb(s);
    if ((st.view === "dlq" && st.stream) || st.view === "messages") await loadMessages();
    $("live").textContent = "live";
    $("live").className = "live ok";
  } catch (e) {
    $("live").textContent = "offline: " + e.message;
    $("live").className = "live bad";
  } finally {
    polling = false;
  }
  render();
}

function absorb(s) {
  const cut = s.now - WINDOW_MS;
  const add = (list, pts) => list.concat(pts).filter((p) => p[0] >= cut);
  let newest = st.since;
  st.ratesIn = add(st.ratesIn, s.rates_in);
  st.ratesOut = add(st.ratesOut, s.rates_out);
  for (const p of s.rates_in) newest = Math.max(newest, p[0]);
  if (s.selected && s.selected.stream === st.lagStream) {
    for (const [name, pts] of Object.entries(s.selected.lag)) {
      st.lag[name] = add(st.lag[name] || [], pts);
      for (const p of pts) newest = Math.max(newest, p[0]);
    }
  }
  st.since = newest;
  if (st.view === "consumers" && !st.stream && s.streams.length) { st.stream = s.streams[0].name; location.hash = "#consumers/" + encodeURIComponent(st.stream); }
  st.prev = st.state;
  st.state = s;
}

// loadMessages fetches the page of messages shown; a refusal is shown in
// its place (the rest of the dashboard stays live).
async function loadMessages() {
  const stream = st.stream;
  let m;
  try {
    m = await getJSON(`streams/${encodeURIComponent(stream)}/messages?from=${st.msgsFrom}&limit=25`);
  } catch (e) {
    if (!e.status) throw e;
    m = { stream, messages: [], needLogin: e.status === 401, error: e.message };
  }
  if (stream === st.stream) st.msgs = m;
}

// ---- navigation ----
function route() {
  const [view, arg] = location.hash.replace(/^#/, "").split("/");
  const v = ["overview", "streams", "consumers", "dlq", "messages"].includes(view) ? view : "overview";
  const stream = arg ? decodeURIComponent(arg) : "";
  if (stream !== st.stream || v !== st.view) { st.msgs = null; st.msgsFrom = 1; st.expanded.clear(); st.full = {}; }
  st.view = v;
  st.stream = stream;
  for (const sec of document.querySelectorAll(".view")) sec.classList.toggle("hidden", sec.id !== "view-" + v);
  for (const a of document.querySelectorAll("#tabs a")) a.classList.toggle("active", a.dataset.tab === (v === "messages" ? "streams" : v));
  render();
  poll();
}

// ---- actions ----
document.addEventListener("click", async (e) => {
  const b = e.target.closest("button[data-action]");
  if (!b) return;
  const a = b.dataset.action, stream = b.dataset.stream || st.stream, seq = Number(b.dataset.seq);
  try {
    switch (a) {
      case "toggle":
        if (st.expanded.has(seq)) st.expanded.delete(seq); else st.expanded.add(seq);
        render();
        return;
      case "show-all": {
        const m = await getMessages(`streams/${encodeURIComponent(stream)}/messages/${seq}`);
        st.full[seq] = m.payload;
        render();
        return;
      }
      case "login":
        if (!await login("Log in to read the stored messages, as a user of this server's authorization block.")) return;
        await poll();
        return;
      case "next-page": st.msgsFrom = seq; st.expanded.clear(); await poll(); return;
      case "first-page": st.msgsFrom = 1; st.expanded.clear(); await poll(); return;
      case "purge":
        if (!await confirmAction("Purge " + stream + "?", "Every message of stream " + stream + " will be deleted. This cannot be undone.", "Purge")) return;
        notice("Purged " + num((await act(`streams/${encodeURIComponent(stream)}/purge`)).purged) + " messages from " + stream);
        break;
      case "delete":
        if (!await confirmAction("Delete message " + seq + "?", "Message " + seq + " of " + stream + " will be deleted.", "Delete")) return;
        await act(`streams/${encodeURIComponent(stream)}/messages/${seq}/delete`);
        notice("Deleted message " + seq + " of " + stream);
        break;
      case "redrive":
      case "redrive-all": {
        const all = a === "redrive-all";
        if (all && !await confirmAction("Redrive " + stream + "?", "Every dead letter of " + stream + " goes back to its original subject.", "Redrive all")) return;
        b.disabled = true;
        const r = await act(`streams/${encodeURIComponent(stream)}/redrive`, all ? {} : { seq });
        const failed = r.failed.map((f) => "#" + f.seq + ": " + f.reason).join("; ");
        notice("Redriven " + num(r.redriven) + (r.failed.length ? ", failed " + r.failed.length + " (" + failed + ")" : "") +
          (r.next_seq ? "; stopped at seq " + r.next_seq + ": redrive again to go on" : ""), r.failed.length > 0);
        break;
      }
      default: return;
    }
  } catch (err) {
    notice(err.message, true);
  }
  b.disabled = false;
  await poll();
});

$("consumer-stream").addEventListener("change", (e) => { location.hash = "#consumers/" + encodeURIComponent(e.target.value); });
window.addEventListener("hashchange", route);
route();
setInterval(poll, POLL_MS);
