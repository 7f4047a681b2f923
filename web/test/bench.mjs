// web/bench.sh's driver: times the scene files given on the page's WebGPU (springsim_web::time_frames:
// frames pipelined as `springsim bench` pipelines them natively) and prints one JSON line per file:
// { file, frames, median_ms, q1_ms, q3_ms, adapter }.
//
// usage: node test/bench.mjs URL WARMUP FRAMES FILE.ron...
import { withPage } from "./page.mjs";
import fs from "node:fs";

const [url, warmup, frames, ...files] = process.argv.slice(2);
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  const i = (s.length - 1) * q;
  return s[Math.floor(i)] + (s[Math.ceil(i)] - s[Math.floor(i)]) * (i - Math.floor(i));
};
const code = await withPage(url, async (page, errors, failure) => {
  if (failure) {
    console.error(`web/bench.sh: the page did not start: ${failure}`);
    return 1;
  }
  for (const file of files) {
    const ron = fs.readFileSync(file, "utf8");
    const r = await page.evaluate(async (ron, warmup, frames) => {
      const out = await window.springsim.time_frames(ron, warmup, frames);
      return { times: Array.from(out.times), diverged: out.diverged, adapter: out.adapter };
    }, ron, Number(warmup), Number(frames));
    if (r.diverged) console.error(`web/bench.sh: ${file} diverged on the page: ${r.diverged}`);
    console.log(JSON.stringify({ file, frames: r.times.length, median_ms: quantile(r.times, 0.5), q1_ms: quantile(r.times, 0.25),
                                 q3_ms: quantile(r.times, 0.75), adapter: r.adapter }));
  }
  if (errors.length) {
    console.error(`web/bench.sh: page errors: ${errors.join(" | ")}`);
    return 1;
  }
  return 0;
});
process.exit(code);
