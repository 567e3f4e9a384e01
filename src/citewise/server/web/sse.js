// Reads a streamed /v1/responses answer: server-sent events from a fetch body, and the
// Responses events that make the answer (statuses, text deltas, citations, sections found).
// Loaded before app.js by the chat page, and bundled into /widget.js.
"use strict";

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

// The answer of a streamed Responses request, calling `on.status(text)` for each status,
// `on.start()` when the answer begins and `on.delta(text)` for each piece of it. Resolves to
// {id, answer, annotations, results, verification}; a failed response throws with its message.
async function readResponse(response, on = {}) {
  const data = { id: null, answer: "", annotations: [], results: [], verification: null };
  let answerId = null;
  for await (const event of events(response)) {
    switch (event.type) {
      case "response.created":
        data.id = event.response.id;
        break;
      case "response.output_item.added":
        if (event.item.type === "message" && event.item.phase === "final_answer") {
          answerId = event.item.id;
          if (on.start) on.start();
        }
        break;
      case "response.output_text.delta":
        if (event.item_id === answerId) {
          data.answer += event.delta;
          if (on.delta) on.delta(event.delta);
        }
        break;
      case "response.reasoning_summary_part.done": // a status: what citewise is doing
        if (on.status) on.status(event.part.text);
        break;
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
  return data;
}
