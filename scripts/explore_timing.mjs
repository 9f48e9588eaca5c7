// How fast `cavesweep explore` answers (issue #39): the server's time per cave, the page's
// round trip, and key press -> new picture on screen, measured in a real headless Chromium.
//
//   node scripts/explore_timing.mjs [PRESET] [N]      (default classic-4-5, 60 changes)
//
// Needs what tests/e2e/run.sh installs (playwright-core in target/e2e/node, Debian's chromium)
// and a built binary (CAVESWEEP_BIN, default target/release/cavesweep). It starts the explorer,
// loads the page, then N times presses `]` (next seed) and waits for the cave picture's `load`
// event, reading the page's timing line (the server's `server_us` for that answer and the
// fetch round trip the page measured). Also N direct requests from node (no browser): the
// server's time and the HTTP round trip alone. Prints medians and p90s. A benchmark, not a test:
// it asserts nothing.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import readline from 'node:readline';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = process.env.CAVESWEEP_BIN || path.join(ROOT, 'target', 'release', 'cavesweep');
const PRESET = process.argv[2] || 'classic-4-5';
const N = parseInt(process.argv[3] || '60', 10);
const { chromium } = createRequire(path.join(ROOT, 'target', 'e2e', 'node', 'package.json'))('playwright-core');

const child = spawn(BIN, ['explore', '--port', '0'], { stdio: ['ignore', 'pipe', 'ignore'] });
const url = await new Promise((res) => readline.createInterface({ input: child.stdout }).once('line', res));
const token = new URL(url).searchParams.get('token');
const q = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };
const show = (name, xs) => console.log(`${name.padEnd(44)} median ${q(xs, 0.5).toFixed(2)} ms  p90 ${q(xs, 0.9).toFixed(2)} ms  (n=${xs.length})`);

try {
  // Direct: what the server and HTTP cost without a browser (the page's own request body).
  const server = [], rtt = [];
  for (let i = 0; i < N; i++) {
    const body = JSON.stringify({ preset: PRESET, seed: 1000 + i, scale: 6, frames: true, frame_scale: 1 });
    const t0 = performance.now();
    const r = await fetch(new URL('/api/cave', url), { method: 'POST', body, headers: { 'X-Cavesweep-Token': token, 'Content-Type': 'application/json' } });
    const v = await r.json();
    rtt.push(performance.now() - t0);
    server.push(v.server_us / 1000);
  }
  console.log(`cavesweep explore, preset ${PRESET}, ${N} caves each (seeds differ), frames included`);
  show('server time per cave (direct requests)', server);
  show('HTTP round trip from node', rtt);

  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(url);
  await page.selectOption('#preset', PRESET);
  await page.waitForFunction(() => /round trip/.test(document.getElementById('timing').textContent));
  await page.waitForTimeout(500);
  const onscreen = [], loaded = [], pserver = [], prtt = [];
  for (let i = 0; i < N; i++) {
    const r = await page.evaluate(async () => {
      const img = document.getElementById('cave');
      const t0 = performance.now();
      const loaded = new Promise((res) => img.addEventListener('load', () => res(performance.now()), { once: true }));
      document.dispatchEvent(new KeyboardEvent('keydown', { key: ']', bubbles: true }));
      const t1 = await loaded;
      // The picture's frame is painted at the next animation frame.
      await new Promise((res) => requestAnimationFrame(() => res()));
      return { ms: performance.now() - t0, loadMs: t1 - t0, timing: document.getElementById('timing').textContent };
    });
    onscreen.push(r.ms);
    loaded.push(r.loadMs);
    const m = /server ([\d.]+) (ms|µs|us).*round trip ([\d.]+) ms/.exec(r.timing);
    if (m) { pserver.push(m[2] === 'ms' ? +m[1] : +m[1] / 1000); prtt.push(+m[3]); }
    await page.waitForTimeout(30); // let the thumbnails' request finish, as between a person's key presses
  }
  show('page: server time (from its timing line)', pserver);
  show('page: fetch round trip (from its timing line)', prtt);
  show('page: key press -> new picture decoded', loaded);
  show('page: key press -> next frame after it', onscreen);
  await browser.close();
} finally {
  child.kill('SIGINT');
}
