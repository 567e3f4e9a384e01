// Drives citewise's diagnostics page in headless Chromium and prints what it saw as JSON.
// Usage: node diagnostics.mjs BASE_URL SCREENSHOT_PATH API_KEY
import { chromium } from "playwright-core";

const [url, screenshot, key] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage"],
});
const result = {};
const rows = (page) => page.$$eval("#operations tr", (trs) => trs.map((tr) => ({
  kind: tr.className, cells: [...tr.children].map((td) => td.textContent),
})));
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  page.on("dialog", (dialog) => dialog.accept());
  await page.goto(`${url}/diagnostics`);
  // The server wants a key: the page says so and shows the key field.
  await page.waitForSelector("#error:not([hidden])");
  result.needsKey = await page.textContent("#error");
  result.keyShown = await page.isVisible("#key");
  await page.fill("#key", key);
  await page.dispatchEvent("#key", "change");
  await page.waitForSelector("#operations tr.operation");
  result.errorHidden = await page.isHidden("#error");
  result.summary = await page.textContent("#summary");
  result.alerts = await page.$$eval("#alerts li", (lis) => lis.map((li) => ({
    alert: li.dataset.alert || null, text: li.textContent,
  })));
  result.rows = await rows(page);
  result.quality = await page.textContent("#quality");
  result.recent = await page.$$eval("#recent tr", (trs) => trs.map(
    (tr) => [...tr.children].map((td) => td.textContent)));
  await page.screenshot({ path: screenshot, fullPage: true });

  await page.click('#windows button[data-window="1h"]');
  result.hourSummary = await page.textContent("#summary");

  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export")]);
  result.download = download.suggestedFilename();
  const chunks = [];
  for await (const chunk of await download.createReadStream()) chunks.push(chunk);
  result.exported = JSON.parse(Buffer.concat(chunks).toString("utf-8")).history.length;

  await page.click("#clear");
  await page.waitForFunction(() => !document.querySelector("#operations tr"));
  result.afterClear = await page.textContent("#summary");
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
