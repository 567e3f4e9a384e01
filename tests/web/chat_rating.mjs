// Rates an answer on citewise's chat page in headless Chromium, then reloads the page and
// prints (as JSON) what the rating showed. Usage: node chat_rating.mjs BASE_URL QUESTION
import { chromium } from "playwright-core";

const [url, question] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage"],
});
const result = { pageErrors: [] };
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
  page.on("pageerror", (error) => result.pageErrors.push(String(error)));
  await page.goto(url);
  await page.waitForSelector("#model option", { state: "attached" });
  await page.fill("#question", question);
  await page.keyboard.press("Enter");
  await page.waitForSelector(".turn .rating");
  result.buttons = await page.$$eval(".turn .rating .rate", (bs) =>
    bs.map((b) => ({ label: b.getAttribute("aria-label"), pressed: b.getAttribute("aria-pressed") })));
  await page.click(".turn .rate-up");
  await page.waitForSelector(".turn .comment:not([hidden])");
  await page.fill(".turn .comment-text", "Exactly what I needed");
  await page.click(".turn .comment-send");
  await page.waitForFunction(() => document.querySelector(".turn .comment").hidden);
  result.note = await page.textContent(".turn .rating-note");
  await page.reload();
  await page.waitForSelector(".turn .rating");
  result.afterReload = await page.$$eval(".turn .rating .rate", (bs) =>
    bs.map((b) => b.getAttribute("aria-pressed")));
  result.citations = await page.$$eval(".turn .answer a.citation", (as) => as.length);
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
