// Opens springsim's page in Debian's headless Chromium (WebGPU through SwiftShader) for web/test.sh and
// web/bench.sh: waits until the page is ready (or failed to start) and collects its errors.
import puppeteer from "puppeteer-core";

// Runs `body(page, errors, failure)` on the page at `url`; `failure` is the page's start-up failure
// (no WebGPU, a bad query), `errors` collects console errors and uncaught exceptions as they come.
export async function withPage(url, body) {
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    // a page call (30 frames of implicit Euler, the demo's 90) may take minutes on a software adapter
    protocolTimeout: 600000,
    args: ["--no-sandbox", "--enable-unsafe-webgpu", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--disable-quic", "--window-size=960,720"],
  });
  try {
    const page = await browser.newPage();
    await page.setViewport({ width: 960, height: 720 });
    const errors = [];
    page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
    page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
    await page.goto(url, { waitUntil: "load" });
    await page.waitForFunction(() => window.springsim && (window.springsim.ready || window.springsim.failure), { timeout: 180000 });
    const failure = await page.evaluate(() => window.springsim.failure);
    return await body(page, errors, failure);
  } finally {
    await browser.close();
  }
}
