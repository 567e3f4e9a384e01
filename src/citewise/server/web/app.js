// citewise chat page: streams /v1/responses over fetch (read by sse.js) and shows the
// conversation (statuses, the answer rendered by render.js, its rating by rating.js, errors),
// keeping it across reloads.
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
  // Several knowledge bases: a picker, all (routed) or one; a scope belongs to one.
  const kbs = settings.schema.properties.kb.enum || [];
  $("kb").replaceChildren(...kbs.map((name) => new Option(name, name)));
  $("kb").value = defaults.kb;
  $("kb-label").hidden = kbs.length < 2;
  $("kb").onchange = () => {
    $("scope").value = "all";
    $("scope").disabled = $("kb").value !== defaults.kb;
  };
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
  if (!$("kb-label").hidden) chosen.kb = $("kb").value;
  const changed = Object.fromEntries(
    Object.entries(chosen).filter(([k, v]) => v !== defaults[k]));
  return Object.keys(changed).length ? { citewise_settings: JSON.stringify(changed) } : {};
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

// Thumbs and a comment under an answer, kept with the turn once sent.
function addRating(turn, data) {
  if (!data.responseId || data.error || data.stopped) return;
  turn.append(ratingControls(async (rating) => {
    await sendRating("", headers(), data.responseId, rating);
    data.rating = rating;
    saveTurns();
  }, data.rating || null));
}

function showTurn(data) {
  const turn = newTurnElement(data.question);
  for (const status of data.statuses || []) addStatus(turn, status, false);
  if (data.answer) {
    const element = Object.assign(document.createElement("div"), { className: "answer" });
    turn.append(element);
    renderSources(turn, renderAnswer(element, data.answer, data.annotations, data.results,
      { verification: data.verification }));
  }
  endTurn(turn, data);
  addRating(turn, data);
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
    const read = await readResponse(response, {
      start() {
        element = Object.assign(document.createElement("div"), { className: "answer" });
        for (const el of turn.querySelectorAll(".status.working")) el.classList.remove("working");
        turn.append(element);
      },
      delta(text) {
        data.answer += text;
        if (!pending) {
          pending = true;
          requestAnimationFrame(render);
        }
      },
      status(text) {
        const stick = nearBottom();
        data.statuses.push(text);
        addStatus(turn, text, true);
        follow(stick);
      },
    });
    data.responseId = read.id;
    data.answer = read.answer;
    data.annotations = read.annotations;
    data.results = read.results;
    data.verification = read.verification;
    finished = true;
    if (element) {
      const stick = nearBottom();
      renderSources(turn, renderAnswer(element, data.answer, data.annotations, data.results,
        { verification: data.verification }));
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
    addRating(turn, data);
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

hoverCards(document, $("card"));
showConversation();
loadModels().catch((error) => showError(`Could not reach the server: ${error.message}`));
