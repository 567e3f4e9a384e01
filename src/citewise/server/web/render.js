// An answer's Markdown rendered (marked, sanitized by DOMPurify), its citations as numbered
// links with a hover card, and its sources list: loaded before app.js by the chat page, and
// bundled into /widget.js. `options.sameTab(url)` true: that link opens in the same tab.
"use strict";

const CITE = "#citewise-cite-"; // placeholder href of a citation before decoration

// The server counts start_index/end_index in code points (as Python does); JavaScript
// strings index UTF-16 units, where an emoji takes two. offsets[i] is code point i's unit.
function utf16Offsets(text) {
  const offsets = [0];
  let unit = 0;
  for (const char of text) {
    unit += char.length;
    offsets.push(unit);
  }
  return offsets;
}

// The sources cited, numbered in order of first citation: url -> {n, title, result}.
function numberSources(annotations, results) {
  const sources = new Map();
  for (const a of annotations) {
    if (!sources.has(a.url)) {
      const result = results.find((r) => r.attributes && r.attributes.url === a.url) || null;
      sources.set(a.url, { n: sources.size + 1, url: a.url, title: a.title, result });
    }
  }
  return sources;
}

// The Markdown with each cited span made a link to a placeholder (marked and DOMPurify
// leave it alone); `decorate` turns the placeholders into the numbered citation links.
function citedMarkdown(text, annotations) {
  const offsets = utf16Offsets(text);
  const spans = [...annotations].sort((a, b) => a.start_index - b.start_index);
  let source = "";
  let at = 0;
  spans.forEach((a, index) => {
    const start = offsets[a.start_index];
    const end = offsets[a.end_index];
    if (start === undefined || end === undefined || start < at) return;
    const cited = text.slice(start, end);
    const link = /^\[([^\]]*)\]\([^)]*\)$/.exec(cited);
    if (!link && !/^[a-z][a-z0-9+.-]*:\S*$/i.test(cited)) {
      // A citation citewise attributed (the model wrote no link): it spans a whole block,
      // which stays as written with the numbered marker after it (a code block or a table
      // gets the marker on its own line, where it cannot break the block).
      const apart = /^\s*(```|~~~|\|)/.test(cited);
      source += `${text.slice(at, end)}${apart ? "\n\n" : " "}[](${CITE}${index})`;
      at = end;
      return;
    }
    const label = (link ? link[1] : "") || a.title.replace(/[[\]]/g, "");
    source += `${text.slice(at, start)}[${label}](${CITE}${index})`;
    at = end;
  });
  return { source: source + text.slice(at), spans };
}

const RELATIVE = /^(?![a-z][a-z0-9+.-]*:|\/|#)/i;

function target(link, options) {
  if (options.sameTab && options.sameTab(link.href)) {
    link.removeAttribute("target");
    return;
  }
  link.target = "_blank";
  link.rel = "noopener";
}

function decorate(element, spans, sources, options = {}) {
  for (const a of element.querySelectorAll(`a[href^="${CITE}"]`)) {
    const span = spans[Number(a.getAttribute("href").slice(CITE.length))];
    const source = sources.get(span.url);
    a.href = span.url;
    // An attributed citation is a bare number after the text it covers.
    a.className = a.textContent ? "citation" : "citation-attributed";
    if (!a.textContent) a.title = `Source ${source.n} (added by citewise): ${span.title}`;
    a.dataset.source = String(source.n);
    a.append(Object.assign(document.createElement("sup"), { textContent: source.n }));
  }
  for (const a of element.querySelectorAll("a[href]")) {
    // A link the server did not turn into a citation, relative to a file: not this page's.
    if (RELATIVE.test(a.getAttribute("href"))) a.removeAttribute("href");
    target(a, options);
  }
  for (const pre of element.querySelectorAll("pre")) {
    const copy = Object.assign(document.createElement("button"),
      { type: "button", className: "copy", textContent: "Copy" });
    copy.addEventListener("click", () => copyText(pre.innerText, copy));
    const wrap = Object.assign(document.createElement("div"), { className: "code" });
    pre.replaceWith(wrap);
    wrap.append(copy, pre);
  }
  for (const table of element.querySelectorAll("table")) {
    const wrap = Object.assign(document.createElement("div"), { className: "table" });
    table.replaceWith(wrap);
    wrap.append(table);
  }
}

async function copyText(text, button) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = Object.assign(document.createElement("textarea"), { value: text });
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  button.textContent = "Copied";
  setTimeout(() => { button.textContent = "Copy"; }, 1500);
}

// Letters and digits only: a block's rendered text and the Markdown excerpt the grounding
// check reports compare once the syntax (backticks, emphasis, list markers) is gone.
function plainWords(text) {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

function excerptKey(excerpt) {
  return plainWords(excerpt.replace(/…$/, "")
    .replace(/^\s*(?:```+|~~~+)[\w+-]*/, "") // a code block's fence and language
    .replace(/^\s*(?:[-*+]|\d+[.)])\s+/, "") // a list item's marker
    .replace(/\]\([^)]*\)/g, "]") // a link's target
    .replace(/```+|~~~+/g, ""));
}

// The blocks no retrieved section supports (the grounding check's `unsupported_blocks`: each
// block's first words, as Markdown), marked where they render: a claim that stands on no
// source is shown as such.
function markUnsupported(element, verification) {
  const excerpts = (verification && verification.unsupported_blocks) || [];
  for (const excerpt of excerpts) {
    const key = excerptKey(excerpt);
    if (!key) continue;
    for (const block of element.querySelectorAll("p, li, pre")) {
      if (block.closest(".unsupported")) continue;
      const copy = block.cloneNode(true);
      for (const marker of copy.querySelectorAll("sup")) marker.remove();
      if (plainWords(copy.textContent).startsWith(key)) {
        block.classList.add("unsupported");
        block.title = "No retrieved section supports this (citewise's grounding check)";
        break;
      }
    }
  }
}

// `options`: `sameTab` (citations open in this tab) and `verification` (the grounding
// check's report: its unsupported blocks are marked).
function renderAnswer(element, text, annotations = [], results = [], options = {}) {
  const sources = numberSources(annotations, results);
  const { source, spans } = citedMarkdown(text, annotations);
  element.innerHTML = DOMPurify.sanitize(marked.parse(source, { gfm: true }));
  decorate(element, spans, sources, options);
  markUnsupported(element, options.verification);
  return sources;
}

function renderSources(turn, sources, options = {}) {
  turn.querySelector(".sources")?.remove();
  if (!sources.size) return;
  const list = Object.assign(document.createElement("ol"), { className: "sources" });
  for (const source of sources.values()) {
    const link = Object.assign(document.createElement("a"),
      { href: source.url, textContent: source.title });
    target(link, options);
    link.className = "source";
    link.dataset.source = String(source.n);
    list.append(Object.assign(document.createElement("li"), { value: source.n }));
    list.lastChild.append(link);
  }
  turn.append(list);
  turn.sources = sources;
}

function snippet(result) {
  if (!result) return "";
  const text = result.text.includes("\n\n") ? result.text.split("\n\n").slice(1).join("\n\n") : "";
  // Read through the same renderer as the answers, so Markdown syntax goes and what it marks
  // stays as written (an identifier's underscores, a code block's text).
  const rendered = document.createElement("div");
  rendered.innerHTML = DOMPurify.sanitize(marked.parse(text || result.text, { gfm: true }));
  const blocks = [...rendered.children].map((block) => block.textContent);
  const plain = (blocks.length ? blocks.join(" ") : rendered.textContent).replace(/\s+/g, " ").trim();
  return plain.length > 240 ? `${plain.slice(0, 240)}…` : plain;
}

// The hover card of a citation: the section's heading path and the start of its text.
function showCard(link, card) {
  const turn = link.closest(".turn");
  const source = turn && turn.sources && turn.sources.get(link.href);
  if (!source) return;
  const path = source.result ? source.result.attributes.heading_path : source.title;
  card.replaceChildren(
    Object.assign(document.createElement("strong"), { textContent: path || source.title }),
    Object.assign(document.createElement("p"), { textContent: snippet(source.result) }),
    Object.assign(document.createElement("small"), { textContent: source.url }));
  card.hidden = false;
  const box = link.getBoundingClientRect();
  const left = Math.max(8, Math.min(box.left, window.innerWidth - card.offsetWidth - 8));
  card.style.left = `${left + window.scrollX}px`;
  card.style.top = `${box.bottom + window.scrollY + 6}px`;
}

// Shows the hover card `card` for the citations under `root` (the chat page: the document).
function hoverCards(root, card) {
  const CITED = "a.citation, a.citation-attributed, a.source";
  root.addEventListener("mouseover", (e) => {
    const link = e.target.closest && e.target.closest(CITED);
    if (link) showCard(link, card);
  });
  root.addEventListener("mouseout", (e) => {
    if (e.target.closest && e.target.closest(CITED)) card.hidden = true;
  });
  root.addEventListener("focusin", (e) => {
    if (e.target.matches && e.target.matches(CITED)) showCard(e.target, card);
  });
  root.addEventListener("focusout", () => { card.hidden = true; });
}
