// web/test.sh's driver: opens the page in Debian's headless Chromium (WebGPU through SwiftShader), runs
// the curtain for 30 frames with each method on the page's WebGPU (springsim_web::self_test) and
// compares the positions with the native f64 reference (`springsim run --backend cpu-reference`, same
// scene files). The page is opened with ?demo=off: this headless Chromium loses a WebGPU device that
// presents to a canvas (a 15-line page that clears a canvas loses it too), so the demo's drawing is
// not checked here.
//
// usage: node test/browser.mjs URL REFERENCE_DIR OUTPUT_DIR
import puppeteer from "puppeteer-core";
import fs from "node:fs";
import path from "node:path";

const [url, refDir, outDir] = process.argv.slice(2);
const here = path.dirname(new URL(import.meta.url).pathname);
// The methods and their tolerances on ‖x_web − x_f64‖ / ‖x_f64 − x0‖ after 30 frames: about 4× what the
// same scene files give natively on lavapipe (printed below as `native`), the policy of the native GPU
// tests (tests/gpu_vs_cpu.rs).
const CASES = [
  ["symplectic-euler", 1e-3],
  ["implicit-euler", 3e-6],
  ["local-global", 1.5e-5],
];
const FRAMES = 30;
let passed = 0, failed = 0;
const ok = (name, detail) => { passed++; console.log(`ok    ${name}: ${detail}`); };
const bad = (name, detail) => { failed++; console.log(`FAIL  ${name}: ${detail}`); };

function obj(file) {
  return fs.readFileSync(file, "utf8").split("\n").filter((l) => l.startsWith("v ")).map((l) => l.split(/\s+/).slice(1, 4).map(Number));
}

function motionError(x, ref, x0) {
  let num = 0, den = 0;
  for (let i = 0; i < ref.length; i++) {
    for (let c = 0; c < 3; c++) {
      num += (x[3 * i + c] - ref[i][c]) ** 2;
      den += (ref[i][c] - x0[3 * i + c]) ** 2;
    }
  }
  return Math.sqrt(num / Math.max(den, 1e-300));
}

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
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
  if (failure) {
    bad("the page starts", failure);
  } else {
    ok("the page starts", await page.evaluate(async () => (await navigator.gpu.requestAdapter())?.info?.description || "a WebGPU adapter"));
    for (const [method, tol] of CASES) {
      const ron = fs.readFileSync(path.join(here, `curtain-${method}.ron`), "utf8");
      try {
        const r = await page.evaluate(async (ron, frames) => {
          const t = performance.now();
          const out = await window.springsim.self_test(ron, frames);
          return { positions: Array.from(out.positions), initial: Array.from(out.initial), diverged: out.diverged, adapter: out.adapter,
                   ms: (performance.now() - t) / frames };
        }, ron, FRAMES);
        const ref = obj(path.join(refDir, method, `frame_${String(FRAMES).padStart(4, "0")}.obj`));
        const nativeFile = path.join(refDir, `${method}-gpu`, `frame_${String(FRAMES).padStart(4, "0")}.obj`);
        const e = motionError(r.positions, ref, r.initial);
        const eNative = fs.existsSync(nativeFile) ? motionError(obj(nativeFile).flat(), ref, r.initial) : NaN;
        const finite = r.positions.every(Number.isFinite);
        const detail = `‖x_web − x_f64‖/‖x_f64 − x0‖ = ${e.toExponential(2)} (native lavapipe ${eNative.toExponential(2)}, tolerance ${tol.toExponential(0)}); ` +
                       `${r.ms.toFixed(1)} ms/frame on ${r.adapter}`;
        if (r.positions.length !== 3 * ref.length) bad(`${method} 30 frames`, `${r.positions.length / 3} particles, the reference has ${ref.length}`);
        else if (!finite || r.diverged) bad(`${method} 30 frames`, `diverged: ${r.diverged || "non-finite positions"}`);
        else if (!(e < tol)) bad(`${method} 30 frames`, detail);
        else ok(`${method} 30 frames`, detail);
      } catch (e) {
        bad(`${method} 30 frames`, String(e && e.message ? e.message : e));
      }
    }
  }
  if (errors.length === 0) ok("no page errors", "none");
  else bad("no page errors", errors.join(" | "));
} finally {
  await browser.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
