// Drives a real Open WebUI in headless Chromium: a new chat with a model of the citewise
// connection, one question, and what the streamed answer showed (as JSON).
// Usage: node open_webui.mjs OPEN_WEBUI_URL TOKEN MODEL QUESTION SHOTS
import { chromium } from "playwright-core";

const [url, token, model, question, shots] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage"],
});
const result = { pageErrors: [], snapshots: [] };
try {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  await context.addInitScript((t) => localStorage.setItem("token", t), token);
  const page = await context.newPage();
  page.on("pageerror", (error) => result.pageErrors.push(String(error)));
  await page.goto(`${url}/?models=${encodeURIComponent(model)}`);
  const input = page.locator("#chat-input");
  await input.waitFor({ timeout: 120000 });
  // A first visit shows the release notes over the chat.
  const notes = page.getByText("Okay, Let's Go!");
  if (await notes.isVisible().catch(() => false)) await notes.click();
  await page.screenshot({ path: `${shots}/open-webui-ready.png` });
  await input.click();
  await page.keyboard.type(question);
  await page.keyboard.press("Enter");
  // While it streams: the answer's text as it grows.
  const answer = page.locator("#response-content-container").last();
  await answer.waitFor({ timeout: 120000 });
  const deadline = Date.now() + 120000;
  let last = "";
  while (Date.now() < deadline) {
    const text = (await answer.textContent()) || "";
    if (text && text !== last) result.snapshots.push(text.length);
    last = text;
    const done = await page.locator("#response-content-container a[href]").count();
    if (done && text.includes("restart the server")) break;
    await page.waitForTimeout(50);
  }
  await page.waitForTimeout(1500); // the message settles (Open WebUI re-renders at the end)
  result.answer = await answer.textContent();
  result.links = await page.locator("#response-content-container a[href]").evaluateAll(
    (links) => links.map((a) => ({ href: a.href, text: a.textContent })));
  await page.screenshot({ path: `${shots}/open-webui-answer.png`, fullPage: true });
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
