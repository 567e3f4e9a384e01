// The "Ask" widget of a docs page, bundled into /widget.js after marked, DOMPurify, render.js,
// sse.js and rating.js (citewise.server.widget): a launcher button and a dialog in a shadow
// root, answers streamed from /v1/responses with the widget's key, citations to the site's
// own sections (same tab on the same site), thumbs and a comment on each answer.
"use strict";

(function widget() {
  const script = document.currentScript;
  if (!script || window.citewiseWidget) return; // loaded twice: one widget
  const base = new URL(script.src, location.href).origin;
  const kb = script.dataset.kb || "";
  const key = script.dataset.key || "";
  const model = script.dataset.model || "citewise-rag";
  const title = script.dataset.title || "Ask the docs";
  const headers = key ? { Authorization: `Bearer ${key}` } : {};
  const sameSite = (url) => {
    try {
      return new URL(url, location.href).origin === location.origin;
    } catch {
      return false;
    }
  };

  const STYLE = `
    :host { all: initial; }
    * { box-sizing: border-box; }
    .root { --bg: #fff; --fg: #1d2329; --muted: #5b6670; --border: #d5dbe1; --accent: #0b5cad;
            --question: #eef3f8; font: 15px/1.5 system-ui, sans-serif; color: var(--fg); }
    .root.dark { --bg: #1b1f24; --fg: #e6e9ec; --muted: #9aa5b1; --border: #39414a;
                 --accent: #6cb2ff; --question: #262c33; }
    .launcher { position: fixed; right: 20px; bottom: 20px; z-index: 2147483646; border: 0;
                border-radius: 999px; padding: 10px 18px; background: var(--accent); color: #fff;
                font: inherit; font-weight: 600; cursor: pointer; box-shadow: 0 2px 10px #0004; }
    .root.dark .launcher { color: #0d1117; }
    .panel { position: fixed; right: 20px; bottom: 76px; z-index: 2147483647; width: 400px;
             max-height: min(640px, calc(100vh - 100px)); display: flex; flex-direction: column;
             background: var(--bg); color: var(--fg); border: 1px solid var(--border);
             border-radius: 12px; box-shadow: 0 8px 30px #0005; }
    .panel[hidden] { display: none; }
    header { display: flex; align-items: center; padding: 10px 14px;
             border-bottom: 1px solid var(--border); }
    h2 { font-size: 16px; margin: 0 auto 0 0; }
    .close { border: 0; background: transparent; color: var(--fg); font-size: 20px;
             cursor: pointer; line-height: 1; padding: 4px 8px; }
    .log { flex: 1; overflow-y: auto; padding: 10px 14px; min-height: 120px; }
    .turn { margin-bottom: 14px; }
    .question { background: var(--question); border-radius: 8px; padding: 6px 10px;
                margin-bottom: 6px; white-space: pre-wrap; }
    .status { color: var(--muted); font-size: 13px; }
    .answer { overflow-wrap: anywhere; }
    .answer pre, .answer code { font-size: 13px; }
    .answer pre { overflow-x: auto; background: var(--question); padding: 8px; border-radius: 6px; }
    .answer .table { overflow-x: auto; }
    .code { position: relative; }
    .copy { position: absolute; top: 4px; right: 4px; font-size: 12px; }
    a { color: var(--accent); }
    .sources { font-size: 13px; padding-left: 20px; margin: 6px 0 0; }
    .error { color: #c0392b; }
    form.ask { display: flex; gap: 8px; padding: 10px 14px; border-top: 1px solid var(--border); }
    textarea { flex: 1; resize: none; font: inherit; color: var(--fg); background: var(--bg);
               border: 1px solid var(--border); border-radius: 8px; padding: 6px 8px; }
    button.send { border: 0; border-radius: 8px; background: var(--accent); color: #fff;
                  font: inherit; padding: 0 14px; cursor: pointer; }
    .root.dark button.send { color: #0d1117; }
    .rating { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; margin-top: 6px; }
    .rate { border: 1px solid var(--border); background: transparent; border-radius: 6px;
            padding: 4px 8px; cursor: pointer; color: var(--fg); line-height: 0; }
    .rate[aria-pressed="true"] { background: var(--accent); border-color: var(--accent);
                                 color: var(--bg); }
    .rating-note { font-size: 12px; color: var(--muted); }
    .comment { display: flex; gap: 6px; flex-basis: 100%; }
    .comment[hidden] { display: none; }
    .comment-text { flex: 1; min-width: 0; font: inherit; font-size: 13px; color: var(--fg);
                    background: var(--bg); border: 1px solid var(--border); border-radius: 6px;
                    padding: 2px 6px; }
    .comment-send { font-size: 13px; }
    :focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
    @media (max-width: 480px) {
      .panel { left: 0; right: 0; bottom: 0; width: 100%; max-height: 100vh; height: 100%;
               border-radius: 0; }
      .launcher { right: 12px; bottom: 12px; }
    }`;

  const host = Object.assign(document.createElement("div"), { id: "citewise-widget" });
  const shadow = host.attachShadow({ mode: "open" });
  const root = Object.assign(document.createElement("div"), { className: "root" });
  root.innerHTML = `
    <button class="launcher" type="button" aria-haspopup="dialog" aria-expanded="false"
            aria-controls="citewise-panel">Ask</button>
    <section class="panel" id="citewise-panel" role="dialog" aria-modal="true"
             aria-labelledby="citewise-title" hidden>
      <header><h2 id="citewise-title"></h2>
        <button class="close" type="button" aria-label="Close">×</button></header>
      <div class="log" role="log" aria-live="polite"></div>
      <form class="ask">
        <textarea rows="2" aria-label="Your question" required
                  placeholder="Ask a question… (Enter sends)"></textarea>
        <button class="send" type="submit">Ask</button>
      </form>
    </section>`;
  shadow.append(Object.assign(document.createElement("style"), { textContent: STYLE }), root);
  const $ = (selector) => root.querySelector(selector);
  const launcher = $(".launcher");
  const panel = $(".panel");
  const log = $(".log");
  const question = $("textarea");
  $("h2").textContent = title;
  const turns = []; // {question, answer} of this page's conversation
  let running = false;

  // Light or dark as the page is: its background's brightness (the OS's when transparent).
  function followTheme() {
    let dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
    for (const element of [document.body, document.documentElement]) {
      const rgb = element && getComputedStyle(element).backgroundColor.match(/[\d.]+/g);
      if (rgb && (rgb.length < 4 || Number(rgb[3]) > 0)) {
        dark = 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] < 128;
        break;
      }
    }
    root.classList.toggle("dark", dark);
  }

  function open() {
    followTheme();
    panel.hidden = false;
    launcher.setAttribute("aria-expanded", "true");
    question.focus();
  }

  function close() {
    panel.hidden = true;
    launcher.setAttribute("aria-expanded", "false");
    launcher.focus();
  }

  function focusable() {
    return [...panel.querySelectorAll("a[href], button, textarea, input")]
      .filter((el) => !el.disabled && el.offsetParent !== null);
  }

  launcher.addEventListener("click", () => (panel.hidden ? open() : close()));
  $(".close").addEventListener("click", close);
  panel.addEventListener("keydown", (e) => {
    if (e.key === "Escape") {
      e.preventDefault();
      close();
    } else if (e.key === "Tab") { // the focus stays in the dialog while it is open
      const items = focusable();
      const first = items[0];
      const last = items[items.length - 1];
      const active = shadow.activeElement;
      if (e.shiftKey && active === first) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && active === last) {
        e.preventDefault();
        first.focus();
      }
    }
  });
  question.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("form.ask").requestSubmit();
    }
  });

  async function errorOf(response) {
    const body = await response.json().catch(() => ({}));
    return (body.error && body.error.message) || `HTTP ${response.status}`;
  }

  async function ask(text) {
    const turn = Object.assign(document.createElement("div"), { className: "turn" });
    turn.append(Object.assign(document.createElement("div"), { className: "question", textContent: text }));
    const status = Object.assign(document.createElement("div"), { className: "status", textContent: "Searching…" });
    const element = Object.assign(document.createElement("div"), { className: "answer" });
    turn.append(status, element);
    log.append(turn);
    log.scrollTop = log.scrollHeight;
    const history = turns.flatMap((t) => [
      { role: "user", content: t.question }, { role: "assistant", content: t.answer }]);
    const settings = kb ? { citewise_settings: JSON.stringify({ kb }) } : {};
    let streamed = "";
    try {
      const response = await fetch(`${base}/v1/responses`, {
        method: "POST",
        headers: { ...headers, "Content-Type": "application/json" },
        body: JSON.stringify({
          model, stream: true, metadata: settings, include: ["file_search_call.results"],
          input: [...history, { role: "user", content: text }],
        }),
      });
      if (!response.ok) throw new Error(await errorOf(response));
      const read = await readResponse(response, {
        status(line) { status.textContent = line; },
        start() { status.remove(); },
        delta(piece) {
          streamed += piece;
          renderAnswer(element, streamed, [], [], { sameTab: sameSite });
          log.scrollTop = log.scrollHeight;
        },
      });
      status.remove();
      const sources = renderAnswer(element, read.answer, read.annotations, read.results, { sameTab: sameSite });
      renderSources(turn, sources, { sameTab: sameSite });
      turns.push({ question: text, answer: read.answer });
      if (read.id) {
        turn.append(ratingControls((rating) => sendRating(base, headers, read.id, rating)));
      }
    } catch (error) {
      status.remove();
      turn.append(Object.assign(document.createElement("div"),
        { className: "error", role: "alert", textContent: error.message }));
    }
    log.scrollTop = log.scrollHeight;
  }

  $("form.ask").addEventListener("submit", async (e) => {
    e.preventDefault();
    const text = question.value.trim();
    if (!text || running) return;
    running = true;
    question.value = "";
    try {
      await ask(text);
    } finally {
      running = false;
    }
  });

  const mount = () => document.body.append(host);
  if (document.body) mount();
  else document.addEventListener("DOMContentLoaded", mount);
  window.citewiseWidget = { open, close, host };
})();
