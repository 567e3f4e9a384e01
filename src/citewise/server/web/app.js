// citewise chat page: streams /v1/responses over fetch and renders statuses, answer, citations.
"use strict";

const $ = (id) => document.getElementById(id);
const history = []; // the conversation so far: the server keeps no state, we resend it
let defaults = { scope: "all" };

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = $("key").value || localStorage.getItem("citewise-key");
  if (key) h.Authorization = `Bearer ${key}`;
  return h;
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = !message;
}

async function errorMessage(response) {
  try {
    const body = await response.json();
    return `${response.status}: ${body.error.message}`;
  } catch {
    return `${response.status} ${response.statusText}`;
  }
}

async function loadModels() {
  const response = await fetch("/v1/models", { headers: headers() });
  if (response.status === 401) {
    $("key-label").hidden = false;
    showError("This server needs an API key: enter it above, then ask.");
    return;
  }
  if (!response.ok) return showError(await errorMessage(response));
  const { data } = await response.json();
  $("model").replaceChildren(...data.map((m) => new Option(m.id, m.id)));
  const settings = data[0].citewise_settings;
  defaults = settings.defaults;
  const scopes = settings.schema.properties.scope.enum || ["all"];
  $("scope").replaceChildren(...scopes.map((s) => new Option(s, s)));
  $("scope").value = defaults.scope;
  showError("");
}

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// The answer text with each cited span as a link to its section.
function renderAnswer(element, text, annotations) {
  const spans = [...annotations].sort((a, b) => a.start_index - b.start_index);
  let html = "";
  let at = 0;
  for (const a of spans) {
    if (a.start_index < at) continue;
    const cited = text.slice(a.start_index, a.end_index);
    const link = /^\[([^\]]*)\]\(([^)]*)\)$/.exec(cited);
    const label = link ? link[1] : cited;
    html += escapeHtml(text.slice(at, a.start_index));
    html += `<a class="citation" href="${escapeHtml(a.url)}" title="${escapeHtml(a.title)}"` +
      ` target="_blank" rel="noopener">${escapeHtml(label || a.title)}</a>`;
    at = a.end_index;
  }
  element.innerHTML = html + escapeHtml(text.slice(at));
}

function renderSources(turn, annotations) {
  const seen = new Map(annotations.map((a) => [a.url, a.title]));
  if (!seen.size) return;
  const list = document.createElement("ol");
  list.className = "sources";
  for (const [url, title] of seen) {
    const item = document.createElement("li");
    const link = Object.assign(document.createElement("a"), { href: url, textContent: title });
    link.className = "source";
    item.append(link);
    list.append(item);
  }
  turn.append(list);
}

// Server-sent events from a fetch body: yields each event's parsed JSON data.
async function* events(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split("\n").filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart()).join("\n");
      if (data && data !== "[DONE]") yield JSON.parse(data);
    }
  }
}

function clientSettings() {
  const chosen = { scope: $("scope").value };
  const changed = Object.fromEntries(
    Object.entries(chosen).filter(([k, v]) => v !== defaults[k]));
  return Object.keys(changed).length ? { citewise_settings: JSON.stringify(changed) } : {};
}

async function ask(question) {
  const turn = document.createElement("section");
  turn.className = "turn";
  turn.append(Object.assign(document.createElement("div"),
    { className: "question", textContent: question }));
  $("conversation").append(turn);
  const items = new Map(); // item id -> element
  let answerText = "";
  const annotations = [];
  const body = {
    model: $("model").value || "citewise-rag",
    input: [...history, { role: "user", content: question }],
    stream: true,
    metadata: clientSettings(),
  };
  const response = await fetch("/v1/responses",
    { method: "POST", headers: headers(), body: JSON.stringify(body) });
  if (!response.ok) return showError(await errorMessage(response));
  for await (const event of events(response)) {
    switch (event.type) {
      case "response.output_item.added": {
        const commentary = event.item.phase === "commentary";
        const element = document.createElement("div");
        element.className = commentary ? "status working" : "answer";
        for (const el of turn.querySelectorAll(".status.working")) el.classList.remove("working");
        items.set(event.item.id, element);
        turn.append(element);
        break;
      }
      case "response.output_text.delta": {
        const element = items.get(event.item_id);
        element.textContent += event.delta;
        if (element.classList.contains("answer")) answerText += event.delta;
        break;
      }
      case "response.output_text.annotation.added":
        annotations.push(event.annotation);
        break;
      case "response.output_item.done":
        if (event.item.phase === "final_answer") {
          const text = event.item.content[0].text;
          renderAnswer(items.get(event.item.id), text, annotations);
          renderSources(turn, annotations);
          answerText = text;
        }
        break;
      case "response.failed":
        showError(`The answer failed: ${event.response.error.message}`);
        break;
      case "response.completed":
        for (const el of turn.querySelectorAll(".status.working")) el.classList.remove("working");
        history.push({ role: "user", content: question },
          { role: "assistant", content: answerText });
        break;
    }
  }
}

$("ask").addEventListener("submit", async (e) => {
  e.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  if ($("key").value) localStorage.setItem("citewise-key", $("key").value);
  showError("");
  $("send").disabled = true;
  try {
    if (!$("model").options.length) await loadModels();
    await ask(question);
    $("question").value = "";
  } catch (error) {
    showError(`Could not reach the server: ${error.message}`);
  } finally {
    $("send").disabled = false;
  }
});

$("question").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey) {
    e.preventDefault();
    $("ask").requestSubmit();
  }
});

loadModels().catch((error) => showError(`Could not reach the server: ${error.message}`));
