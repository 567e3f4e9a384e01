// Drives citewise's chat page in headless Chromium and prints what it saw as JSON.
// Usage: node chat.mjs BASE_URL SCREENSHOT_PATH QUESTION FAILING_QUESTION
import { chromium } from "playwright-core";

const [url, screenshot, question, failing] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage"],
});
const result = {};
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  // The docs site is not reachable from a test: serve a stand-in page for its URLs.
  await page.context().route(/^https:\/\/[^/]*github\.io\//, (route) =>
    route.fulfill({ status: 200, contentType: "text/html", body: "<h1>docs page</h1>" }));
  await page.goto(url);
  await page.waitForFunction(() => document.querySelectorAll("#scope option").length > 1);
  result.scopes = await page.$$eval("#scope option", (os) => os.map((o) => o.value));
  result.models = await page.$$eval("#model option", (os) => os.map((o) => o.value));

  await page.fill("#question", question);
  await page.click("#send");
  await page.waitForSelector(".turn .status");
  result.firstStatus = await page.textContent(".turn .status");
  await page.waitForSelector(".turn .answer a.citation");
  await page.waitForFunction(() => !document.querySelector("#send").disabled);
  result.statuses = await page.$$eval(".turn .status", (es) => es.map((e) => e.textContent));
  result.answer = await page.textContent(".turn .answer");
  result.citations = await page.$$eval(".turn .answer a.citation",
    (as) => as.map((a) => ({ href: a.href, text: a.textContent })));
  result.sources = await page.$$eval(".turn .sources a", (as) => as.map((a) => a.href));
  await page.screenshot({ path: screenshot, fullPage: true });

  const [popup] = await Promise.all([
    page.waitForEvent("popup"),
    page.click(".turn .answer a.citation"),
  ]);
  await popup.waitForLoadState();
  result.opened = { url: popup.url(), heading: await popup.textContent("h1") };
  await popup.close();

  await page.fill("#question", failing);
  await page.click("#send");
  await page.waitForSelector("#error:not([hidden])");
  result.error = await page.textContent("#error");
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
