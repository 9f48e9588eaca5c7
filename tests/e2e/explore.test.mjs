// End-to-end test of `cavesweep explore` (issue #39) in a real headless Chromium.
//
// Run it with tests/e2e/run.sh (installs playwright-core into target/e2e/node first). It makes a
// small sweep folder with the real binary, starts `cavesweep explore SWEEP_DIR --port 0`, reads
// the URL (with its token) from the server's first line of stdout, and drives Debian's chromium
// through the page like a person: the fill slider, a bad rule, a heatmap cell, a streaming
// search, a download, phone width. Screenshots of each view go to target/e2e/*.png.
//
// Environment: CAVESWEEP_BIN (default target/release/cavesweep, else target/ci/cavesweep),
// CHROMIUM (default /usr/bin/chromium).

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const started = Date.now();
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SHOTS = path.join(ROOT, 'target', 'e2e');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const BIN = process.env.CAVESWEEP_BIN || [
  path.join(ROOT, 'target', 'release', 'cavesweep'),
  path.join(ROOT, 'target', 'ci', 'cavesweep'),
].find((p) => fs.existsSync(p)) || path.join(ROOT, 'target', 'release', 'cavesweep');
const TIMEOUT = 20_000;

/** playwright-core from target/e2e/node (run.sh's npm ci), else from next to this file. */
function loadPlaywright() {
  const bases = [path.join(ROOT, 'target', 'e2e', 'node', 'package.json'), import.meta.url];
  for (const base of bases) {
    try { return createRequire(base)('playwright-core'); } catch (_) { /* next */ }
  }
  throw new Error('playwright-core is not installed: run tests/e2e/run.sh (npm ci into target/e2e/node)');
}

let tmp, server, serverUrl, browser, context, page;
const pageErrors = [];

/** Start the server and resolve with the URL it prints first. */
function startServer(sweepDir) {
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, ['explore', sweepDir, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    server = child;
    const timer = setTimeout(() => reject(new Error('explore printed no URL within 30 s')), 30_000);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('exit', (code, sig) => { clearTimeout(timer); reject(new Error(`explore exited early (${code ?? sig})`)); });
    child.stderr.on('data', (d) => process.stderr.write(`[explore] ${d}`));
    const lines = readline.createInterface({ input: child.stdout });
    let first = true;
    lines.on('line', (line) => {
      if (first) {
        first = false;
        clearTimeout(timer);
        const m = /^(http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)\s*$/.exec(line.trim());
        if (m) resolve(m[1]);
        else reject(new Error(`explore's first line is not its URL: ${JSON.stringify(line)}`));
      } else {
        process.stderr.write(`[explore] ${line}\n`);
      }
    });
  });
}

/** The cave shows the answer to the page's newest state: none in flight, none pending, no error. */
const caveSettled = () => page.waitForFunction(() => {
  const cave = document.getElementById('cave');
  return (cave.getAttribute('src') || '').startsWith('data:image/png;base64,')
    && !cave.classList.contains('stale') && !cave.hasAttribute('aria-busy');
});

async function shot(name, fullPage = true) {
  const file = path.join(SHOTS, name);
  await page.screenshot({ path: file, fullPage });
  console.log(`screenshot: ${path.relative(ROOT, file)}`);
}

const attr = (sel, name) => page.locator(sel).getAttribute(name);

before(async () => {
  assert.ok(fs.existsSync(BIN), `no cavesweep binary at ${BIN} (build it, or set CAVESWEEP_BIN)`);
  assert.ok(fs.existsSync(CHROMIUM), `no chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM)`);
  fs.mkdirSync(SHOTS, { recursive: true });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cavesweep-e2e-'));
  const sweepDir = path.join(tmp, 'fills');
  execFileSync(BIN, [
    'sweep', '--preset', 'classic-4-5', '--vary', 'fill=0.40,0.45,0.50', '--vary', 'steps=3,5',
    '--seeds', '0..200', '--per-seed', 'all', '--out', sweepDir,
  ], { stdio: ['ignore', 'ignore', 'inherit'] });
  serverUrl = await startServer(sweepDir);
  console.log(`server: ${serverUrl.replace(/token=.*/, 'token=…')}`);
  const { chromium } = loadPlaywright();
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, acceptDownloads: true });
  page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT);
  page.on('pageerror', (e) => pageErrors.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // 4xx answers to bad input are expected; a CSP violation or a script error is not.
    if (m.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) {
      pageErrors.push(`console error: ${m.text()}`);
    }
  });
});

after(async () => {
  if (browser) await browser.close().catch(() => {});
  if (server && server.exitCode == null) {
    server.removeAllListeners('exit');
    server.kill('SIGTERM');
  }
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  console.log(`e2e elapsed: ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

test('the page loads: a cave, its metrics, timing and 16 thumbnails', async () => {
  await page.goto(serverUrl);
  await page.waitForFunction(() => (document.getElementById('cave').getAttribute('src') || '').startsWith('data:image/png;base64,'));
  await page.waitForFunction(() => document.querySelectorAll('#thumbs .thumb img').length === 16 && !document.getElementById('thumbs').hasAttribute('aria-busy'));
  const timing = await page.locator('#timing').textContent();
  assert.match(timing, /server .+ round trip [\d.]+ ms/);
  console.log(`timing (first cave): ${timing}`);
  const metrics = await page.locator('#metrics').textContent();
  assert.match(metrics, /floor_fraction/);
  assert.ok(await page.locator('#preset option').count() >= 2, 'the preset picker lists the presets');
  for (const key of ['fill', 'steps', 'rows', 'cols', 'rule']) {
    assert.equal(await page.locator(`#key-${key}`).count(), 1, `#key-${key} exists`);
  }
});

test('moving the fill slider redraws the cave', async () => {
  await page.selectOption('#preset', 'classic-4-5');
  await page.waitForFunction(() => document.getElementById('key-rule').value === 'B5678/S45678');
  await caveSettled();
  const before = await attr('#cave', 'src');
  const fill0 = await page.locator('#key-fill').inputValue();
  await page.locator('#key-fill').focus();
  for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
  await page.waitForFunction((src) => document.getElementById('cave').getAttribute('src') !== src, before);
  await caveSettled();
  const fill1 = await page.locator('#key-fill').inputValue();
  assert.ok(Math.abs(Number(fill1) - Number(fill0) - 0.03) < 1e-9, `fill moved from ${fill0} to ${fill1}`);
  assert.equal(await page.locator('#key-fill-num').inputValue(), fill1);
  // the step slider shows earlier frames
  const finalSrc = await attr('#cave', 'src');
  await page.locator('#frame').fill('0');
  await page.waitForFunction(() => !document.getElementById('frame-label').textContent.includes('final'));
  assert.equal(await page.locator('#frame-label').textContent(), 'fill');
  assert.notEqual(await attr('#cave', 'src'), finalSrc);
  await page.locator('#frame').focus();
  await page.keyboard.press('End');
  await page.waitForFunction(() => document.getElementById('frame-label').textContent.endsWith('final)'));
  assert.equal(await attr('#cave', 'src'), finalSrc);
  console.log(`timing (after the slider): ${await page.locator('#timing').textContent()}`);
});

test('[ and ] step the seed; a thumbnail selects its seed', async () => {
  await page.locator('#tab-generator').focus();
  const seed0 = BigInt(await page.locator('#seed').inputValue());
  await page.keyboard.press(']');
  assert.equal(BigInt(await page.locator('#seed').inputValue()), seed0 + 1n);
  await page.keyboard.press('[');
  assert.equal(BigInt(await page.locator('#seed').inputValue()), seed0);
  await page.waitForFunction(() => document.querySelectorAll('#thumbs .thumb').length === 16 && !document.getElementById('thumbs').hasAttribute('aria-busy'));
  const thumb = page.locator('#thumbs .thumb').nth(3);
  const seed = await thumb.getAttribute('data-seed');
  const before = await attr('#cave', 'src');
  await thumb.click();
  assert.equal(await page.locator('#seed').inputValue(), seed);
  await page.waitForFunction((src) => document.getElementById('cave').getAttribute('src') !== src, before);
  await caveSettled();
});

test('a bad rule shows the server\'s error under the rule field', async () => {
  const rule = page.locator('#key-rule');
  const good = await rule.inputValue();
  await rule.fill('B9/S');
  await page.waitForFunction(() => document.getElementById('rule-error').textContent.trim().length > 0);
  const msg = await page.locator('#rule-error').textContent();
  console.log(`rule error: ${msg}`);
  assert.equal(await rule.getAttribute('aria-invalid'), 'true');
  await shot('generator-error.png', false);
  await rule.fill(good);
  await page.waitForFunction(() => document.getElementById('rule-error').textContent === '');
  await caveSettled();
  await page.waitForFunction(() => document.querySelectorAll('#thumbs .thumb img').length === 16 && !document.getElementById('thumbs').hasAttribute('aria-busy'));
  await shot('generator.png');
});

test('exports download files', async () => {
  for (const [format, ext] of [['png', '.png'], ['tmj', '.tmj'], ['toml', '.toml']]) {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator(`#exports button[data-format="${format}"]`).click(),
    ]);
    const name = download.suggestedFilename();
    assert.ok(name.endsWith(ext), `${format} downloads as ${name}`);
    const file = await download.path();
    assert.ok(fs.statSync(file).size > 0, `${name} is not empty`);
  }
  assert.match(await page.locator('#command').inputValue(), /^cavesweep run /);
});

test('the sweep view: a heatmap cell loads its point into the generator', async () => {
  await page.locator('#tab-sweep').click();
  await page.waitForFunction(() => document.querySelectorAll('#heatmap rect.cell').length === 6);
  assert.match(await page.locator('#heatmap rect.cell title').first().textContent(), /fill=/);
  // a cell whose fill differs from the generator's current one
  const fillNow = Number(await page.locator('#key-fill').inputValue());
  const cells = page.locator('#heatmap rect.cell');
  let target = null, want = null;
  for (let i = 0; i < (await cells.count()); i++) {
    const label = await cells.nth(i).getAttribute('aria-label');
    const m = /fill=([\d.]+)/.exec(label);
    if (m && Math.abs(Number(m[1]) - fillNow) > 1e-9) { target = cells.nth(i); want = Number(m[1]); break; }
  }
  assert.ok(target, 'a heatmap cell with another fill');
  await target.click();
  await page.waitForFunction((w) => Math.abs(Number(document.getElementById('key-fill').value) - w) < 1e-9, want);
  await page.waitForFunction(() => document.querySelectorAll('#sweep-picks .pick').length === 3);
  await page.waitForFunction(() => document.querySelector('#sweep-picks button.pick img[src^="data:"]') !== null);
  await shot('sweep.png');
  // by keyboard: arrow keys move between cells, Enter loads one
  await target.focus();
  await page.keyboard.press(Number(await target.getAttribute('data-cx')) > 0 ? 'ArrowLeft' : 'ArrowRight');
  const label = await page.evaluate(() => document.activeElement.getAttribute('aria-label'));
  const want2 = Number(/fill=([\d.]+)/.exec(label)[1]);
  assert.notEqual(want2, want, `the arrow key moved to another fill (${label})`);
  await page.keyboard.press('Enter');
  await page.waitForFunction((w) => Math.abs(Number(document.getElementById('key-fill').value) - w) < 1e-9, want2);
  want = want2;
  await page.waitForFunction(() => document.querySelectorAll('#sweep-picks .pick').length === 3);
  // a pick opens its cave in the generator
  const pick = page.locator('#sweep-picks button.pick').first();
  const seed = await pick.getAttribute('data-seed');
  await pick.click();
  await page.waitForFunction(() => !document.getElementById('view-generator').hidden);
  assert.equal(await page.locator('#seed').inputValue(), seed);
  await page.waitForFunction((w) => Math.abs(Number(document.getElementById('key-fill').value) - w) < 1e-9, want);
});

test('search: a bad query shows a caret; matches stream in; stop works', async () => {
  await page.locator('#tab-search').click();
  await page.locator('#search-where').fill('floor_fraction>>0.3');
  await page.locator('#search-seeds').fill('0..20000');
  await page.locator('#search-limit').fill('10');
  await page.locator('#search-run').click();
  await page.waitForFunction(() => document.getElementById('search-error').textContent.trim().length > 0);
  console.log(`search error: ${(await page.locator('#search-error').innerText()).replace(/\n/g, ' | ')}`);

  await page.locator('#search-where').fill('floor_fraction>0.3');
  // record every value the progress bar takes
  await page.evaluate(() => {
    window.__progress = [];
    const p = document.getElementById('search-progress');
    const tick = () => {
      const v = p.value / p.max;
      if (window.__progress[window.__progress.length - 1] !== v) window.__progress.push(v);
      if (!window.__progressStop) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  await page.locator('#search-run').click();
  await page.waitForFunction(() => document.querySelectorAll('#search-matches tbody tr').length >= 1);
  await page.waitForFunction(() => !document.getElementById('search-run').disabled);
  const rows = await page.locator('#search-matches tbody tr').count();
  assert.ok(rows >= 1 && rows <= 10, `${rows} matches (limit 10)`);
  // One last sample as the search ends: a search done within one animation frame set its
  // final value after the last frame sampled (a race that failed this test 1 run in 3).
  const progress = await page.evaluate(() => {
    window.__progressStop = true;
    const p = document.getElementById('search-progress');
    window.__progress.push(p.value / p.max);
    return window.__progress;
  });
  assert.ok(Math.max(...progress) > 0, `the progress bar moved: ${JSON.stringify(progress)}`);
  assert.equal(await page.locator('#search-error').textContent(), '');
  console.log(`search: ${await page.locator('#search-status').textContent()}`);
  await shot('search.png');

  // a long search, stopped
  await page.locator('#search-where').fill('floor_fraction>0.999');
  await page.locator('#search-seeds').fill('0..10000000');
  await page.locator('#search-run').click();
  await page.waitForFunction(() => !document.getElementById('search-stop').disabled);
  await page.waitForTimeout(400);
  await page.locator('#search-stop').click();
  await page.waitForFunction(() => !document.getElementById('search-run').disabled);
  assert.match(await page.locator('#search-status').textContent(), /stopped|done/);

  // a match opens in the generator
  await page.locator('#search-where').fill('floor_fraction>0.3');
  await page.locator('#search-seeds').fill('0..20000');
  await page.locator('#search-run').click();
  await page.waitForFunction(() => !document.getElementById('search-run').disabled);
  const first = page.locator('#search-matches tbody tr').first();
  const seed = await first.getAttribute('data-seed');
  await first.locator('button').click();
  await page.waitForFunction(() => !document.getElementById('view-generator').hidden);
  assert.equal(await page.locator('#seed').inputValue(), seed);
});

test('phone width: one column, nothing wider than the screen', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.locator('#tab-generator').click();
  await caveSettled();
  await page.waitForTimeout(200);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(overflow <= 390, `page is ${overflow}px wide at 390px`);
  await shot('phone.png');
  await page.setViewportSize({ width: 1400, height: 1000 });
});

test('no script error or CSP violation on the page', () => {
  assert.deepEqual(pageErrors, []);
});
