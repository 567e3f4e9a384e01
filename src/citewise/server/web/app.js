// citewise chat page: streams /v1/responses over fetch and shows the conversation (statuses,
// the answer rendered by render.js, errors), keeping it across reloads.
"use strict";

const $ = (id) => document.getElementById(id);
const STORE = "citewise-chat"; // the conversation, kept across reloads
const KEY = "citewise-key"; // an API key that worked
let defaults = { scope: "all" };
// {question, answer, annotations, results, verification, statuses, error, stopped}
let turns = loadTurns();
let running = null; // the AbortController of the answer in progress
let chatNumber = 0; // which conversation is on screen (a "new chat" starts the next)

// -- server ----------------------------------------------------------------------------

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = $("key").value || localStorage.getItem(KEY);
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

function askForKey(message) {
  localStorage.removeItem(KEY); // a saved key the server refuses is no use
  $("key-label").hidden = false;
  $("key").focus();
  return message;
}

async function loadModels() {
  const response = await fetch("/v1/models", { headers: headers() });
  if (response.status === 401) {
    return showError(askForKey("This server needs an API key: enter it above, then ask."));
  }
  if (!response.ok) return showError(await errorMessage(response));
  const { data } = await response.json();
  $("model").replaceChildren(...data.map((m) => new Option(m.id, m.id)));
  const settings = data[0].citewise_settings;
  defaults = settings.defaults;
  const scopes = settings.schema.properties.scope.enum || ["all"];
  $("scope").replaceChildren(...scopes.map((s) => new Option(s, s)));
  $("scope").value = defaults.scope;
  // The BM25 toggle is the seed's name for search_type: off searches the embeddings only.
  $("bm25").checked = defaults.search_type !== "vector";
  showError("");
  loadExamples().catch(() => {}); // examples are a nicety: the page works without them
}

async function loadExamples() {
  const kb = encodeURIComponent(defaults.kb || "");
  const response = await fetch(`/v1/knowledge-bases/${kb}/examples`, { headers: headers() });
  if (!response.ok) return;
  const { data } = await response.json();
  $("examples").replaceChildren(...data.map((example) => {
    const button = Object.assign(document.createElement("button"),
      { type: "button", className: "example", textContent: example.question });
    button.addEventListener("click", () => {
      $("question").value = example.question;
      $("ask").requestSubmit();
    });
    return button;
  }));
}

function searchType() {
  if (!$("bm25").checked) return "vector";
  return defaults.search_type === "vector" ? "hybrid" : defaults.search_type;
}

function clientSettings() {
  const chosen = { scope: $("scope").value, search_type: searchType() };
  const changed = Object.fromEntries(
    Object.entries(chosen).filter(([k, v]) => v !== defaults[k]));
  return Object.keys(changed).length ? { citewise_settings: JSON.stringify(changed) } : {};
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

// A document of this server needs the API key, which a plain link cannot send.
document.addEventListener("click", async (e) => {
  const link = e.target.closest && e.target.closest("a[href]");
  const key = $("key").value || localStorage.getItem(KEY);
  if (!link || !key || !link.href.startsWith(`${location.origin}/v1/`)) return;
  e.preventDefault();
  const opened = window.open("", "_blank");
  const response = await fetch(link.href, { headers: headers() });
  const blob = await response.blob();
  opened.location = URL.createObjectURL(blob);
});

// -- the conversation ------------------------------------------------------------------

function loadTurns() {
  try {
    const saved = JSON.parse(localStorage.getItem(STORE) || "[]");
    return Array.isArray(saved) ? saved : [];
  } catch {
    return [];
  }
}

function saveTurns() {
  try {
    localStorage.setItem(STORE, JSON.stringify(turns));
  } catch {
    // Storage full or disabled: the conversation still works, it just won't survive a reload.
  }
}

function history() {
  return turns.filter((t) => t.answer && !t.error && !t.stopped).flatMap((t) => [
    { role: "user", content: t.question },
    { role: "assistant", content: t.answer },
  ]);
}

function nearBottom() {
  return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 120;
}

function follow(stick) {
  if (stick) window.scrollTo(0, document.documentElement.scrollHeight);
}

function newTurnElement(question) {
  const turn = Object.assign(document.createElement("section"), { className: "turn" });
  turn.append(Object.assign(document.createElement("div"),
    { className: "question", textContent: question }));
  $("conversation").append(turn);
  $("empty").hidden = true;
  return turn;
}

function addStatus(turn, text, working) {
  for (const el of turn.querySelectorAll(".status.working")) el.classList.remove("working");
  turn.append(Object.assign(document.createElement("div"),
    { className: working ? "status working" : "status", textContent: text }));
}

function endTurn(turn, data) {
  for (const el of turn.querySelectorAll(".status.working")) el.classList.remove("working");
  if (data.error) {
    turn.append(Object.assign(document.createElement("div"),
      { className: "error", role: "alert", textContent: data.error }));
  } else if (data.stopped) {
    turn.append(Object.assign(document.createElement("div"),
      { className: "stopped", textContent: "Stopped." }));
  }
}

function showTurn(data) {
  const turn = newTurnElement(data.question);
  for (const status of data.statuses || []) addStatus(turn, status, false);
  if (data.answer) {
    const element = Object.assign(document.createElement("div"), { className: "answer" });
    turn.append(element);
    renderSources(turn,
      renderAnswer(element, data.answer, data.annotations, data.results, data.verification));
  }
  endTurn(turn, data);
}

function showConversation() {
  for (const turn of document.querySelectorAll("#conversation .turn")) turn.remove();
  turns.forEach(showTurn);
  $("empty").hidden = turns.length > 0;
}

async function ask(question, signal) {
  const data = { question, answer: "", annotations: [], results: [], statuses: [] };
  const chat = chatNumber;
  const turn = newTurnElement(question);
  follow(true);
  const body = {
    model: $("model").value || "citewise-rag",
    input: [...history(), { role: "user", content: question }],
    stream: true,
    metadata: clientSettings(),
    include: ["file_search_call.results"], // the sections found: the citations' hover cards
  };
  let element = null; // the answer's element, once it starts
  let answerId = null;
  let pending = false; // a render is scheduled for the next frame
  let finished = false; // the final render (with citations) must not be overwritten
  const render = () => {
    pending = false;
    if (finished) return;
    const stick = nearBottom();
    renderAnswer(element, data.answer);
    follow(stick);
  };
  try {
    const response = await fetch("/v1/responses",
      { method: "POST", headers: headers(), body: JSON.stringify(body), signal });
    if (response.status === 401) throw new Error(askForKey(await errorMessage(response)));
    if (!response.ok) throw new Error(await errorMessage(response));
    if ($("key").value) localStorage.setItem(KEY, $("key").value); // it worked: keep it
    for await (const event of events(response)) {
      switch (event.type) {
        case "response.output_item.added":
          if (event.item.type === "message" && event.item.phase === "final_answer") {
            answerId = event.item.id;
            element = Object.assign(document.createElement("div"), { className: "answer" });
            for (const el of turn.querySelectorAll(".status.working")) {
              el.classList.remove("working");
            }
            turn.append(element);
          }
          break;
        case "response.output_text.delta":
          if (event.item_id === answerId) {
            data.answer += event.delta;
            if (!pending) {
              pending = true;
              requestAnimationFrame(render);
            }
          }
          break;
        case "response.reasoning_summary_part.done": { // a status: what citewise is doing
          const stick = nearBottom();
          data.statuses.push(event.part.text);
          addStatus(turn, event.part.text, true);
          follow(stick);
          break;
        }
        case "response.output_item.done":
          if (event.item.type !== "message" || event.item.id !== answerId) break;
          data.answer = event.item.content[0].text;
          data.annotations = event.item.content[0].annotations;
          break;
        case "response.failed":
          throw new Error(`The answer failed: ${event.response.error.message}`);
        case "response.completed": {
          const found = event.response.output.find((item) => item.type === "file_search_call");
          data.results = found ? found.results : [];
          // The grounding check's report (a JSON string: metadata values are strings).
          const report = (event.response.metadata || {}).citewise_verification;
          data.verification = report ? JSON.parse(report) : null;
          break;
        }
      }
    }
    finished = true;
    if (element) {
      const stick = nearBottom();
      renderSources(turn,
      renderAnswer(element, data.answer, data.annotations, data.results, data.verification));
      follow(stick);
    }
    return true;
  } catch (error) {
    finished = true;
    if (error.name === "AbortError") data.stopped = true;
    else data.error = error instanceof TypeError
      ? `Could not reach the server: ${error.message}` : error.message;
    if (element && data.answer) renderAnswer(element, data.answer);
    return false;
  } finally {
    endTurn(turn, data);
    follow(!data.error && !data.stopped ? nearBottom() : true);
    if (chat === chatNumber) { // not a conversation the user has since left
      turns.push(data);
      saveTurns();
    }
  }
}

function setRunning(controller) {
  running = controller;
  $("send").hidden = Boolean(controller);
  $("stop").hidden = !controller;
}

$("ask").addEventListener("submit", async (e) => {
  e.preventDefault();
  const question = $("question").value.trim();
  if (!question || running) return;
  showError("");
  const controller = new AbortController();
  setRunning(controller);
  $("question").value = "";
  try {
    if (!$("model").options.length) await loadModels();
    const answered = await ask(question, controller.signal);
    // A failed or stopped question stays in the box, ready to send again.
    if (!answered && !$("question").value) $("question").value = question;
  } finally {
    setRunning(null);
  }
});

$("stop").addEventListener("click", () => running && running.abort());

$("new-chat").addEventListener("click", () => {
  if (running) running.abort();
  chatNumber += 1;
  turns = [];
  saveTurns();
  showConversation();
  $("question").focus();
});

$("question").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    $("ask").requestSubmit();
  }
});

showConversation();
loadModels().catch((error) => showError(`Could not reach the server: ${error.message}`));
