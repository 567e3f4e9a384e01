// Drives the citewise widget on a docs page in headless Chromium at 390 px wide and prints
// what it saw as JSON. Usage: node widget.mjs DOCS_URL CITEWISE_URL API_KEY QUESTION SHOTS
import { chromium } from "playwright-core";

const [docs, citewise, key, question, shots] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage"],
});
const result = { pageErrors: [], consoleErrors: [] };
try {
  const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
  const page = await context.newPage();
  page.on("pageerror", (error) => result.pageErrors.push(String(error)));
  page.on("console", (m) => { if (m.type() === "error") result.consoleErrors.push(m.text()); });
  page.on("response", (r) => {
    if (r.url().endsWith("/v1/responses")) result.answerType = r.headers()["content-type"];
  });
  await page.goto(`${docs}/`);
  await page.waitForSelector(".launcher");
  // Light page: light widget. Everything below pierces the open shadow root.
  result.darkOnLight = await page.$eval("#citewise-widget", (h) =>
    h.shadowRoot.querySelector(".root").classList.contains("dark"));
  const launcher = page.locator(".launcher");
  result.launcherLabel = await launcher.textContent();
  await launcher.focus();
  await page.keyboard.press("Enter"); // the keyboard opens it
  await page.waitForSelector(".panel:not([hidden])");
  result.expanded = await launcher.getAttribute("aria-expanded");
  result.dialog = await page.locator(".panel").evaluate((p) => ({
    role: p.getAttribute("role"), modal: p.getAttribute("aria-modal"),
    label: p.querySelector("#" + p.getAttribute("aria-labelledby")).textContent,
    width: p.getBoundingClientRect().width,
  }));
  result.focusedOnOpen = await page.evaluate(() =>
    document.querySelector("#citewise-widget").shadowRoot.activeElement.tagName);
  // Tab stays inside the dialog.
  const inside = [];
  for (let n = 0; n < 5; n += 1) {
    await page.keyboard.press("Tab");
    inside.push(await page.evaluate(() => {
      const shadow = document.querySelector("#citewise-widget").shadowRoot;
      const active = shadow.activeElement;
      return Boolean(active && shadow.querySelector(".panel").contains(active));
    }));
  }
  result.focusTrapped = inside.every(Boolean);
  await page.keyboard.press("Escape");
  result.closedByEscape = await page.locator(".panel").isHidden();
  result.focusBack = await page.evaluate(() =>
    document.querySelector("#citewise-widget").shadowRoot.activeElement?.className);
  await page.keyboard.press("Enter");
  await page.waitForSelector(".panel:not([hidden])");
  await page.screenshot({ path: `${shots}/widget-open.png` });

  // Count the answer's renders while it streams: more than one is a streamed answer.
  await page.evaluate(() => {
    const shadow = document.querySelector("#citewise-widget").shadowRoot;
    window.renders = new Set();
    new MutationObserver(() => {
      const answer = shadow.querySelector(".answer");
      if (answer && answer.textContent) window.renders.add(answer.textContent);
    }).observe(shadow, { subtree: true, childList: true, characterData: true });
  });
  await page.fill("textarea", question);
  await page.keyboard.press("Enter");
  await page.waitForSelector(".answer a.citation", { timeout: 60000 });
  await page.waitForSelector(".rating");
  result.renders = await page.evaluate(() => window.renders.size);
  result.answer = await page.locator(".answer").textContent();
  result.citation = await page.locator(".answer a.citation").first().evaluate((a) => ({
    href: a.href, target: a.getAttribute("target"), text: a.textContent,
  }));
  result.sources = await page.locator(".sources a").evaluateAll((links) =>
    links.map((a) => ({ href: a.href, target: a.getAttribute("target") })));
  await page.screenshot({ path: `${shots}/widget-answer.png` });

  // Rate it down with a comment.
  await page.click(".rate-down");
  await page.waitForSelector(".comment:not([hidden])");
  await page.fill(".comment-text", "It does not say where to set the keys");
  await page.click(".comment-send");
  await page.waitForFunction(() => {
    const shadow = document.querySelector("#citewise-widget").shadowRoot;
    return shadow.querySelector(".comment").hidden
      && shadow.querySelector(".rating-note").textContent.startsWith("Thanks");
  });
  result.pressed = await page.locator(".rate-down").getAttribute("aria-pressed");

  // The citation lands on its section, in this tab.
  const before = page.url();
  await page.locator(".answer a.citation").first().click();
  await page.waitForURL((url) => url.href !== before);
  result.landed = page.url();
  result.samePage = context.pages().length === 1;
  result.target = await page.evaluate(() => {
    const target = document.getElementById(location.hash.slice(1));
    return target ? { text: target.textContent, top: Math.round(target.getBoundingClientRect().top) } : null;
  });

  // The rating on citewise's diagnostics page.
  const diagnostics = await context.newPage();
  await diagnostics.goto(`${citewise}/diagnostics`);
  await diagnostics.fill("#key", key);
  await diagnostics.dispatchEvent("#key", "change");
  await diagnostics.waitForSelector("#feedback-worst tr.worst");
  result.diagnostics = {
    summary: await diagnostics.textContent("#feedback-summary"),
    hour: await diagnostics.$$eval('#feedback-windows tr[data-window="1h"] td',
      (tds) => tds.map((td) => td.textContent)),
    worst: await diagnostics.$$eval("#feedback-worst tr.worst td",
      (tds) => tds.map((td) => td.textContent)),
    sections: await diagnostics.$$eval("#feedback-worst td.sections a", (as) => as.map((a) => a.href)),
  };
  await diagnostics.screenshot({ path: `${shots}/widget-diagnostics.png`, fullPage: true });

  // Dark page: dark widget.
  const dark = await context.newPage();
  await dark.goto(`${docs}/`);
  await dark.evaluate(() => { document.body.style.background = "#111"; });
  await dark.locator(".launcher").click();
  result.darkOnDark = await dark.$eval("#citewise-widget", (h) =>
    h.shadowRoot.querySelector(".root").classList.contains("dark"));
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
