// The diagnostics page: the history's snapshot from /v1/diagnostics, one window at a time.
const $ = (id) => document.getElementById(id);
let windowName = "5m";
let snapshot = null;

function headers() {
  const h = {};
  const key = $("key").value || localStorage.getItem("citewise-key");
  if (key) h.Authorization = `Bearer ${key}`;
  return h;
}

function showError(text) {
  $("error").textContent = text;
  $("error").hidden = !text;
}

async function call(path, options = {}) {
  const response = await fetch(path, { ...options, headers: headers() });
  if (response.status === 401) {
    $("key-label").hidden = false;
    throw new Error("This server needs a key: enter it above.");
  }
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw new Error(body.error?.message || `${path}: HTTP ${response.status}`);
  }
  if ($("key").value) localStorage.setItem("citewise-key", $("key").value);
  return response;
}

const ms = (s) => (s === null || s === undefined ? "–" : (s * 1000).toFixed(0));
const pct = (r) => (r === null || r === undefined ? "–" : `${Math.round(r * 100)}%`);

function cells(row, values) {
  for (const value of values) {
    const td = document.createElement("td");
    td.textContent = value;
    row.append(td);
  }
}

function render() {
  if (!snapshot) return;
  const window = snapshot.windows[windowName];
  $("summary").textContent =
    `${window.count} operations in the last ${windowName} · ${snapshot.events} events kept`;
  const alerts = $("alerts");
  alerts.replaceChildren();
  for (const alert of snapshot.alerts) {
    const li = document.createElement("li");
    li.dataset.alert = alert.alert;
    li.textContent = alert.message;
    alerts.append(li);
  }
  if (!snapshot.alerts.length) {
    const li = document.createElement("li");
    li.className = "none";
    li.textContent = "No alerts.";
    alerts.append(li);
  }
  const body = $("operations");
  body.replaceChildren();
  for (const [name, stats] of Object.entries(window.operations)) {
    const row = document.createElement("tr");
    row.className = "operation";
    row.dataset.operation = name;
    const l = stats.latency;
    cells(row, [name, stats.count, stats.rate_per_minute.toFixed(2), pct(stats.error_rate),
      pct(stats.zero_result_rate), ms(l.mean), ms(l.p50), ms(l.p95), ms(l.p99), ms(l.max)]);
    body.append(row);
    for (const [stage, s] of Object.entries(stats.stages)) {
      const sub = document.createElement("tr");
      sub.className = "stage";
      sub.dataset.operation = name;
      cells(sub, [stage, "", "", "", "", ms(s.mean), ms(s.p50), ms(s.p95), ms(s.p99),
        ms(s.max)]);
      body.append(sub);
    }
  }
  const q = window.quality;
  $("quality").textContent = `Top-K fill ${pct(q.top_k_fill)} · citation coverage ` +
    `${pct(q.citation_coverage)} · reranked ${pct(q.rerank_rate)} · filtered ` +
    `${pct(q.filtered_rate)} (${q.searches} searches, ${q.answers} answers)`;
  const recent = $("recent");
  recent.replaceChildren();
  for (const event of snapshot.recent) {
    const row = document.createElement("tr");
    row.className = "event";
    cells(row, [new Date(event.t * 1000).toLocaleTimeString(), event.op, event.kb || "",
      event.outcome, ms(event.seconds), event.subject || ""]);
    recent.append(row);
  }
}

async function load() {
  try {
    snapshot = await (await call("/v1/diagnostics")).json();
    showError("");
    render();
  } catch (error) {
    showError(error.message);
  }
}

$("windows").addEventListener("click", (event) => {
  const button = event.target.closest("button[data-window]");
  if (!button) return;
  windowName = button.dataset.window;
  for (const b of $("windows").querySelectorAll("button")) {
    b.setAttribute("aria-pressed", String(b === button));
  }
  render();
});

$("refresh").addEventListener("click", load);
$("key").addEventListener("change", load);

$("export").addEventListener("click", async () => {
  try {
    const response = await call("/v1/diagnostics/export");
    const name = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") || "");
    const link = document.createElement("a");
    link.href = URL.createObjectURL(await response.blob());
    link.download = name ? name[1] : "citewise-diagnostics.json";
    link.click();
    URL.revokeObjectURL(link.href);
  } catch (error) {
    showError(error.message);
  }
});

$("clear").addEventListener("click", async () => {
  if (!confirm("Forget every recorded operation?")) return;
  try {
    await call("/v1/diagnostics/clear", { method: "POST" });
    await load();
  } catch (error) {
    showError(error.message);
  }
});

load();
setInterval(load, 10000);
