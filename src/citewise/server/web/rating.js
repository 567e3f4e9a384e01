// Thumbs up/down and an optional comment under an answer, sent to POST /v1/feedback: used by
// the chat page and bundled into /widget.js. `send({rating, comment})` posts it (a promise);
// `saved` is a rating given before (the chat page keeps it across reloads).
"use strict";

// A thumb drawn inline (no emoji font needed); "down" is the same thumb turned over.
const THUMB = '<svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false">'
  + '<path fill="currentColor" d="M2 21h4V9H2v12zm20-11a2 2 0 0 0-2-2h-6.3l1-4.6v-.3c0-.4-.2'
  + '-.8-.4-1.1L13.2 1 6.6 7.6C6.2 8 6 8.5 6 9v10a2 2 0 0 0 2 2h9c.8 0 1.5-.5 1.8-1.2l3-7.1c.1'
  + '-.2.2-.5.2-.7v-2z"/></svg>';

function ratingControls(send, saved = null) {
  const box = Object.assign(document.createElement("div"), { className: "rating" });
  box.setAttribute("role", "group");
  box.setAttribute("aria-label", "Rate this answer");
  const button = (rating, label) => {
    const b = Object.assign(document.createElement("button"),
      { type: "button", className: `rate rate-${rating}`, innerHTML: THUMB, title: label });
    if (rating === "down") b.firstChild.style.transform = "rotate(180deg)";
    b.dataset.rating = rating;
    b.setAttribute("aria-label", label);
    b.setAttribute("aria-pressed", String(Boolean(saved && saved.rating === rating)));
    return b;
  };
  const up = button("up", "Helpful");
  const down = button("down", "Not helpful");
  const form = Object.assign(document.createElement("form"), { className: "comment", hidden: true });
  const comment = Object.assign(document.createElement("input"), {
    type: "text", className: "comment-text", maxLength: 1000,
    placeholder: "What was missing or wrong? (optional)",
  });
  comment.setAttribute("aria-label", "Comment on this answer (optional)");
  const submit = Object.assign(document.createElement("button"),
    { type: "submit", className: "comment-send", textContent: "Send" });
  form.append(comment, submit);
  const note = Object.assign(document.createElement("span"), { className: "rating-note" });
  note.setAttribute("aria-live", "polite");
  if (saved) note.textContent = "Thanks for the feedback.";
  let chosen = saved ? saved.rating : null;

  const post = async (rating, text) => {
    note.textContent = "Sending…";
    try {
      await send({ rating, comment: text });
      chosen = rating;
      for (const b of [up, down]) b.setAttribute("aria-pressed", String(b.dataset.rating === rating));
      note.textContent = "Thanks for the feedback.";
      return true;
    } catch (error) {
      note.textContent = `Not sent: ${error.message}`;
      return false;
    }
  };
  for (const b of [up, down]) {
    b.addEventListener("click", async () => {
      if (await post(b.dataset.rating, "")) {
        form.hidden = false;
        comment.focus();
      }
    });
  }
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!chosen || !comment.value.trim()) return;
    if (await post(chosen, comment.value.trim())) form.hidden = true;
  });
  box.append(up, down, note, form);
  return box;
}

// POST /v1/feedback at `base` with `headers`; throws the server's message on an error.
async function sendRating(base, headers, responseId, { rating, comment }) {
  const response = await fetch(`${base}/v1/feedback`, {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify({ response_id: responseId, rating, comment }),
  });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw new Error((body.error && body.error.message) || `HTTP ${response.status}`);
  }
  return response.json();
}
