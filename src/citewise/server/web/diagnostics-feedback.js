// The diagnostics page's feedback section: readers' ratings from GET /v1/feedback (the helpful
// rate per window, the worst-rated questions with the sections their answers cited).
// Loaded after diagnostics.js, whose call() and cells() it uses.
async function loadFeedback() {
  let feedback;
  try {
    feedback = await (await call("/v1/feedback")).json();
  } catch {
    return; // diagnostics.js shows what went wrong (a key to enter)
  }
  $("feedback-summary").textContent = feedback.ratings
    ? `${feedback.ratings} rating${feedback.ratings === 1 ? "" : "s"} kept (at most ${feedback.limits.ratings})`
    : "No ratings yet.";
  const windows = $("feedback-windows");
  windows.replaceChildren();
  for (const [name, w] of Object.entries(feedback.windows)) {
    const row = document.createElement("tr");
    row.dataset.window = name;
    cells(row, [name, w.ratings, w.up, w.down, pct(w.helpful_rate)]);
    windows.append(row);
  }
  const worst = $("feedback-worst");
  worst.replaceChildren();
  for (const q of feedback.worst) {
    const row = document.createElement("tr");
    row.className = "worst";
    cells(row, [q.question || `#${q.question_hash}`, q.kb, q.down, q.up]);
    const sections = Object.assign(document.createElement("td"), { className: "sections" });
    for (const s of q.sections) {
      sections.append(Object.assign(document.createElement("a"),
        { href: s.url, textContent: s.title || s.url, target: "_blank", rel: "noopener" }));
    }
    if (q.comments.length) {
      sections.append(Object.assign(document.createElement("small"),
        { textContent: `“${q.comments.join("” · “")}”` }));
    }
    row.append(sections);
    worst.append(row);
  }
}

$("refresh").addEventListener("click", loadFeedback);
$("key").addEventListener("change", loadFeedback);
loadFeedback();
setInterval(loadFeedback, 10000);
