// Drives citewise's chat page in headless Chromium and prints what it saw as JSON.
// Usage:
//   node chat.mjs scripted BASE_URL SHOTS_DIR RICH_QUESTION FAILING_QUESTION SLOW_QUESTION
//   node chat.mjs extractive BASE_URL QUESTION SHOTS_DIR
//   node chat.mjs files BASE_URL QUESTION
//   node chat.mjs keys BASE_URL QUESTION WRONG_KEY RIGHT_KEY
//   node chat.mjs bm25 BASE_URL QUESTION
//   node chat.mjs library BASE_URL QUESTION KB
//   node chat.mjs unsupported BASE_URL QUESTION SHOTS_DIR
import { chromium } from "playwright-core";

const [mode, url, ...rest] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage"],
});

const DONE = "#send:not([hidden])"; // the page is ready for the next question
const LAST = ".turn:last-of-type";

async function open(viewport = { width: 1000, height: 900 }) {
  const page = await browser.newPage({ viewport });
  page.on("pageerror", (error) => { result.pageErrors.push(error.message); });
  // The docs site is not reachable from a test: serve a stand-in page for its URLs.
  await page.context().route(/^https:\/\/[^/]*github\.io\//, (route) =>
    route.fulfill({ status: 200, contentType: "text/html", body: "<h1>docs page</h1>" }));
  await page.goto(url);
  await page.waitForFunction(() => document.querySelectorAll("#model option").length > 0);
  return page;
}

// Asks and returns once the question's turn is on the page (the answer may still stream;
// waiting for DONE then waits for it to end, however quickly it came).
async function ask(page, question) {
  const before = await page.$$eval(".turn", (ts) => ts.length);
  await page.fill("#question", question);
  await page.press("#question", "Enter");
  await page.waitForFunction((n) => document.querySelectorAll(".turn").length > n, before);
}

// What the last turn's answer shows: its text, links and rendered Markdown.
function answerOf(page) {
  return page.$eval(`${LAST} .answer`, (answer) => ({
    text: answer.innerText,
    html: answer.innerHTML,
    pre: answer.querySelectorAll("pre > code").length,
    tables: answer.querySelectorAll("table").length,
    blockquotes: answer.querySelectorAll("blockquote").length,
    copyButtons: answer.querySelectorAll("button.copy").length,
    citations: [...answer.querySelectorAll("a.citation")].map((a) => ({
      href: a.href,
      text: [...a.childNodes].filter((n) => n.nodeName !== "SUP").map((n) => n.textContent)
        .join(""),
      number: a.querySelector("sup")?.textContent,
      target: a.target,
      before: a.previousSibling?.textContent ?? "",
    })),
    // Citations citewise attributed: a number after the block they cover.
    attributed: [...answer.querySelectorAll("a.citation-attributed")].map((a) => ({
      href: a.href,
      number: a.querySelector("sup")?.textContent,
      after: a.closest("p, li")?.previousElementSibling?.className ?? "",
    })),
  }));
}

async function scripted(shots, rich, failing, slow) {
  const page = await open();
  await page.waitForFunction(() => document.querySelectorAll("#scope option").length > 1);
  result.scopes = await page.$$eval("#scope option", (os) => os.map((o) => o.value));
  result.models = await page.$$eval("#model option", (os) => os.map((o) => o.value));
  await page.waitForSelector("#examples button.example");
  result.examples = await page.$$eval("#examples button", (bs) => bs.map((b) => b.textContent));

  await ask(page, rich);
  await page.waitForSelector(".turn .status");
  result.firstStatus = await page.textContent(".turn .status");
  await page.waitForSelector(DONE);
  result.statuses = await page.$$eval(".turn .status", (es) => es.map((e) => e.textContent));
  result.answer = await answerOf(page);
  result.sources = await page.$$eval(".turn .sources a", (as) => as.map((a) => a.href));
  await page.screenshot({ path: `${shots}/web-chat-desktop.png`, fullPage: true });
  await page.hover(".turn .answer a.citation");
  result.card = await page.textContent("#card");
  await page.screenshot({ path: `${shots}/web-chat-card.png` });
  await page.mouse.move(0, 0);

  const [popup] = await Promise.all([
    page.waitForEvent("popup"),
    page.click(".turn .answer a.citation"),
  ]);
  await popup.waitForLoadState();
  result.opened = { url: popup.url(), heading: await popup.textContent("h1") };
  await popup.close();

  await ask(page, failing);
  await page.waitForSelector(`${LAST} .error`);
  await page.waitForSelector(DONE);
  result.error = await page.textContent(`${LAST} .error`);
  result.failedStatuses = await page.$$eval(`${LAST} .status.working`, (es) => es.length);
  result.keptQuestion = await page.inputValue("#question");

  await page.fill("#question", "");
  await ask(page, slow);
  await page.waitForSelector(`${LAST} .answer`); // the answer is streaming
  await page.click("#stop");
  await page.waitForSelector(`${LAST} .stopped`);
  await page.waitForSelector(DONE);
  result.stoppedQuestion = await page.inputValue("#question");
  result.turns = await page.$$eval(".turn", (ts) => ts.length);

  await page.reload();
  await page.waitForSelector(".turn .answer a.citation");
  result.afterReload = {
    turns: await page.$$eval(".turn", (ts) => ts.length),
    answer: await page.$eval(".turn .answer", (a) => a.innerText),
    error: await page.$$eval(".turn", (ts) => ts[1].querySelector(".error")?.textContent),
    empty: await page.$eval("#empty", (e) => !e.hidden),
  };

  await page.setViewportSize({ width: 390, height: 844 });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForTimeout(200);
  result.narrowOverflow = await page.evaluate(
    () => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  // The viewport, as a phone shows it (a full-page shot would stack the sticky input box
  // in the middle of the page).
  await page.screenshot({ path: `${shots}/web-chat-390.png` });
  await page.emulateMedia({ colorScheme: "dark" });
  await page.screenshot({ path: `${shots}/web-chat-390-dark.png` });
  await page.emulateMedia({ colorScheme: "light" });

  await page.click("#new-chat");
  result.afterNewChat = {
    turns: await page.$$eval(".turn", (ts) => ts.length),
    empty: await page.$eval("#empty", (e) => !e.hidden),
    stored: await page.evaluate(() => localStorage.getItem("citewise-chat")),
  };
}

async function extractive(question, shots) {
  const page = await open();
  await ask(page, question);
  await page.waitForSelector(DONE);
  result.answer = await answerOf(page);
  await page.screenshot({ path: `${shots}/web-chat-extractive.png`, fullPage: true });
  result.sources = await page.$$eval(".turn .sources a", (as) => as.map((a) => a.href));
  await page.hover(".turn .answer a.citation");
  result.card = await page.textContent("#card");
  // The card's snippet of a section written with identifiers, emphasis and code.
  result.snippet = await page.evaluate(() => snippet({
    text: "Auth\n\nReturn `HTTP_401_UNAUTHORIZED` (see **API_KEYS**, _once_).\n\n"
      + "```python\nif key not in API_KEYS:\n    raise\n```",
  }));
}

async function files(question) {
  const page = await open();
  await ask(page, question);
  await page.waitForSelector(DONE);
  result.answer = await answerOf(page);
  const responded = page.context().waitForEvent("response",
    (response) => response.url().includes("/content"));
  const [popup] = await Promise.all([
    page.waitForEvent("popup"),
    page.click(".turn .answer a.citation"),
  ]);
  const response = await responded;
  await popup.waitForLoadState();
  result.opened = {
    url: popup.url(),
    status: response.status(),
    contentType: response.headers()["content-type"],
    text: await popup.evaluate(() => document.body.innerText),
    // The element the link's #fragment names: the cited section itself.
    target: await popup.evaluate(() => {
      const id = decodeURIComponent(location.hash.slice(1));
      const found = id && document.getElementById(id);
      return found ? found.textContent : null;
    }),
  };
}

async function keys(question, wrong, right) {
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  page.on("pageerror", (error) => { result.pageErrors.push(error.message); });
  await page.goto(url);
  await page.waitForSelector("#key-label:not([hidden])");
  result.asked = await page.textContent("#error");
  await page.fill("#key", wrong);
  await ask(page, question);
  await page.waitForSelector(`${LAST} .error`);
  await page.waitForSelector(DONE);
  result.wrong = {
    error: await page.textContent(`${LAST} .error`),
    question: await page.inputValue("#question"),
    stored: await page.evaluate(() => localStorage.getItem("citewise-key")),
  };
  await page.fill("#key", right);
  await page.fill("#question", "");
  await ask(page, question);
  await page.waitForSelector(DONE);
  result.right = {
    citations: (await answerOf(page)).citations.length,
    stored: await page.evaluate(() => localStorage.getItem("citewise-key")),
  };
}

// The BM25 toggle: asks with it as the page opens, then switched off; what each request sent.
async function bm25(question) {
  const page = await open();
  const sent = [];
  page.on("request", (request) => {
    if (request.url().endsWith("/v1/responses")) sent.push(request.postDataJSON().metadata ?? {});
  });
  result.checkedAtFirst = await page.isChecked("#bm25");
  await ask(page, question);
  await page.waitForSelector(DONE);
  await page.uncheck("#bm25");
  await ask(page, question);
  await page.waitForSelector(DONE);
  result.answer = await answerOf(page);
  result.sent = sent;
}

// The library picker: its choices, then one picked and asked; what the request sent.
async function library(question, kb) {
  const page = await open();
  const sent = [];
  page.on("request", (request) => {
    if (request.url().endsWith("/v1/responses")) sent.push(request.postDataJSON().metadata ?? {});
  });
  result.pickerShown = await page.isVisible("#kb");
  result.choices = await page.$$eval("#kb option", (os) => os.map((o) => o.value));
  result.chosenAtFirst = await page.inputValue("#kb");
  await page.selectOption("#kb", kb);
  await ask(page, question);
  await page.waitForSelector(DONE);
  result.answer = await answerOf(page);
  result.sent = sent;
}

// The blocks the grounding check found unsupported, as the page marks them (and after a
// reload, from the stored conversation).
async function unsupported(question, shots) {
  const page = await open();
  await ask(page, question);
  await page.waitForSelector(DONE);
  const marked = () => page.$$eval(`${LAST} .answer .unsupported`, (es) => es.map((e) => ({
    tag: e.tagName.toLowerCase(),
    text: e.textContent,
    title: e.title,
    label: getComputedStyle(e, "::before").content,
  })));
  result.marked = await marked();
  result.blocks = await page.$$eval(`${LAST} .answer p, ${LAST} .answer li`, (es) => es.length);
  await page.screenshot({ path: `${shots}/web-chat-unsupported.png`, fullPage: true });
  await page.reload();
  await page.waitForSelector(`${LAST} .answer`);
  result.afterReload = await marked();
}

const result = { pageErrors: [] };
try {
  if (mode === "scripted") await scripted(...rest);
  else if (mode === "extractive") await extractive(...rest);
  else if (mode === "files") await files(...rest);
  else if (mode === "keys") await keys(...rest);
  else if (mode === "bm25") await bm25(...rest);
  else if (mode === "library") await library(...rest);
  else if (mode === "unsupported") await unsupported(...rest);
  else throw new Error(`unknown mode ${mode}`);
} catch (error) {
  // What the page showed when it went wrong, for the test's failure message.
  for (const context of browser.contexts()) {
    for (const page of context.pages()) {
      const html = await page.evaluate(() => document.querySelector("main")?.innerHTML ?? "")
        .catch(() => "");
      console.error(`page ${page.url()}:\n${html.slice(-6000)}`);
    }
  }
  console.error(JSON.stringify(result));
  throw error;
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
