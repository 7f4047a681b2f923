// web/test.sh's driver: opens the page in Debian's headless Chromium (WebGPU through SwiftShader), runs
// the curtain for 30 frames with each method on the page's WebGPU (springsim_web::self_test) and
// compares the positions with the native f64 reference (`springsim run --backend cpu-reference`, same
// scene files); then runs the demo as the page runs it (the curtain at 41x41, symplectic Euler, the egui
// panel) for 90 frames on a texture of the canvas's size (springsim_web::draw_test), writes the picture to
// OUTPUT_DIR/web-demo.png and checks that the cloth covers at least 10% of it and the panel is drawn;
// then again with the scene and the method switched half-way (to the flag and local/global), as the
// panel switches them (web-demo-switched.png).
// The page is opened with ?demo=off and the demo draws on a texture rather than the canvas: this
// headless Chromium loses a WebGPU device that presents to a canvas (a 15-line page that clears a
// canvas loses it too); the pipelines, the frame and the pixels are the canvas's otherwise.
//
// usage: node test/browser.mjs URL REFERENCE_DIR OUTPUT_DIR
import { withPage } from "./page.mjs";
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

await withPage(url, async (page, errors, failure) => {
  if (failure) {
    bad("the page starts", failure);
  } else {
    ok("the page starts", await page.evaluate(async () => (await navigator.gpu.requestAdapter())?.info?.description || "a WebGPU adapter"));
    for (const [method, tol] of CASES) {
      const ron = fs.readFileSync(path.join(here, `curtain-${method}.ron`), "utf8");
      try {
        const r = await page.evaluate(async (ron, frames) => {
          const out = await window.springsim.self_test(ron, frames);
          return { positions: Array.from(out.positions), initial: Array.from(out.initial), diverged: out.diverged, adapter: out.adapter };
        }, ron, FRAMES);
        const ref = obj(path.join(refDir, method, `frame_${String(FRAMES).padStart(4, "0")}.obj`));
        const nativeFile = path.join(refDir, `${method}-gpu`, `frame_${String(FRAMES).padStart(4, "0")}.obj`);
        const e = motionError(r.positions, ref, r.initial);
        const eNative = fs.existsSync(nativeFile) ? motionError(obj(nativeFile).flat(), ref, r.initial) : NaN;
        const finite = r.positions.every(Number.isFinite);
        const detail = `‖x_web − x_f64‖/‖x_f64 − x0‖ = ${e.toExponential(2)} (native lavapipe ${eNative.toExponential(2)}, tolerance ${tol.toExponential(0)}) ` +
                       `on ${r.adapter}`;
        if (r.positions.length !== 3 * ref.length) bad(`${method} 30 frames`, `${r.positions.length / 3} particles, the reference has ${ref.length}`);
        else if (!finite || r.diverged) bad(`${method} 30 frames`, `diverged: ${r.diverged || "non-finite positions"}`);
        else if (!(e < tol)) bad(`${method} 30 frames`, detail);
        else ok(`${method} 30 frames`, detail);
      } catch (e) {
        bad(`${method} 30 frames`, String(e && e.message ? e.message : e));
      }
    }
    // the demo as the page runs it, then switched as the panel switches it: each picture's share of
    // pixels that differ (any channel by more than 12 of 255), and the frame as a PNG
    const DRAWS = [
      ["the demo draws 90 frames", "curtain", "symplectic-euler", 90, "", "web-demo.png"],
      ["the demo switches to the flag and local/global", "curtain", "symplectic-euler", 30, "flag:local-global", "web-demo-switched.png"],
    ];
    for (const [name, scene, method, frames, switchTo, file] of DRAWS) {
      try {
        const d = await page.evaluate(async (scene, method, frames, switchTo, w, h) => {
          const t = performance.now();
          const r = await window.springsim.draw_test(scene, method, 41, frames, w, h, switchTo);
          const differ = (a, b) => {
            let n = 0;
            for (let i = 0; i < a.length; i += 4) {
              if (Math.abs(a[i] - b[i]) > 12 || Math.abs(a[i + 1] - b[i + 1]) > 12 || Math.abs(a[i + 2] - b[i + 2]) > 12) n++;
            }
            return n / (a.length / 4);
          };
          const canvas = document.createElement("canvas");
          canvas.width = r.width;
          canvas.height = r.height;
          canvas.getContext("2d").putImageData(new ImageData(new Uint8ClampedArray(r.frame.buffer), r.width, r.height), 0, 0);
          return { cloth: differ(r.scene, r.ground), panel: differ(r.frame, r.scene), png: canvas.toDataURL("image/png"),
                   message: r.message, adapter: r.adapter, s: (performance.now() - t) / 1e3 };
        }, scene, method, frames, switchTo, 960, 720);
        const png = path.join(outDir, file);
        fs.writeFileSync(png, Buffer.from(d.png.split(",")[1], "base64"));
        const detail = `the cloth covers ${(100 * d.cloth).toFixed(1)}% of the picture, the panel ${(100 * d.panel).toFixed(1)}% ` +
                       `(${png}; ${d.s.toFixed(1)} s on ${d.adapter})${d.message ? `; the demo says: ${d.message}` : ""}`;
        if (d.cloth >= 0.10 && d.panel >= 0.01 && !d.message) ok(name, detail);
        else bad(name, detail);
      } catch (e) {
        bad(name, String(e && e.message ? e.message : e));
      }
    }
  }
  if (errors.length === 0) ok("no page errors", "none");
  else bad("no page errors", errors.join(" | "));
});
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
