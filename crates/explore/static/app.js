/*
 * cavesweep explore: the page's script (issue #39), speaking the API in docs/explore-api.md.
 *
 * Plain, dependency-free JavaScript (no framework, bundler or CDN): the file is compiled into the
 * `cavesweep` binary, the page must work with no network access, and the server's
 * Content-Security-Policy allows scripts from 'self' only. Everything here is small enough to
 * read in one sitting: views are plain DOM, charts are hand-written SVG.
 *
 * Every request carries the per-run token (from this page's URL) as the X-Cavesweep-Token header.
 */
'use strict';

(() => {
  // ------------------------------------------------------------------ basics
  const TOKEN = new URLSearchParams(location.search).get('token') || '';
  const MAX_SEED = 18446744073709551614n;
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);

  /** Make an element: el('div', {class: 'x', onclick: f}, child, 'text', ...). */
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    setAttrs(e, attrs);
    for (const c of children) if (c != null) e.append(c);
    return e;
  }
  function svg(tag, attrs, ...children) {
    const e = document.createElementNS(SVG_NS, tag);
    setAttrs(e, attrs);
    for (const c of children) if (c != null) e.append(c);
    return e;
  }
  function setAttrs(e, attrs) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
  }
  const sleep = (ms, signal) =>
    new Promise((ok, fail) => {
      const t = setTimeout(ok, ms);
      if (signal) signal.addEventListener('abort', () => { clearTimeout(t); fail(abortError()); }, { once: true });
    });
  const abortError = () => new DOMException('aborted', 'AbortError');
  const isAbort = (e) => e && e.name === 'AbortError';
  const pngUrl = (b64) => 'data:image/png;base64,' + b64;

  /** Shell-quote one word the way a person would type it. */
  function shq(s) {
    s = String(s);
    return /^[A-Za-z0-9_.,:/=+@%-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'";
  }

  /** Number formatting for metrics and heatmap cells. */
  function fmt(v, digits = 4) {
    if (v == null || (typeof v === 'number' && !Number.isFinite(v))) return '—';
    if (typeof v !== 'number') return String(v);
    if (Number.isInteger(v)) return v.toLocaleString('en-US');
    const a = Math.abs(v);
    if (a >= 1000) return v.toLocaleString('en-US', { maximumFractionDigits: 1 });
    if (a >= 10) return v.toFixed(2);
    return v.toFixed(digits);
  }
  function fmtUs(us) {
    if (us == null) return '?';
    return us < 1000 ? `${Math.round(us)} µs` : `${(us / 1000).toFixed(1)} ms`;
  }

  // ------------------------------------------------------------------ the API
  class ApiError extends Error {
    constructor(status, body) {
      super((body && body.error) || `HTTP ${status}`);
      this.status = status;
      this.key = body ? body.key ?? null : null;
      this.at = body ? body.at ?? null : null;
    }
  }

  // The server runs at most 2 heavy requests (cave, thumbs, export, search) at once and answers
  // a third with 429; the page queues its own so it never hits that, and retries a 429 (another
  // tab) after a short wait. A running search holds one of the two.
  const heavy = { active: 0, queue: [] };
  function heavyLimit() { return state.searchRunning ? 1 : 2; }
  function acquire(signal) {
    if (heavy.active < heavyLimit()) { heavy.active++; return Promise.resolve(); }
    return new Promise((ok, fail) => {
      const entry = { ok, fail };
      heavy.queue.push(entry);
      if (signal) signal.addEventListener('abort', () => {
        const i = heavy.queue.indexOf(entry);
        if (i >= 0) { heavy.queue.splice(i, 1); fail(abortError()); }
      }, { once: true });
    });
  }
  function release() {
    heavy.active--;
    pump();
  }
  function pump() {
    while (heavy.queue.length && heavy.active < heavyLimit()) {
      heavy.active++;
      heavy.queue.shift().ok();
    }
  }

  /** JSON with BigInt seeds written as plain numbers (seeds go up to 2^64 - 2). */
  function toJson(obj) {
    return JSON.stringify(obj, (_, v) => (typeof v === 'bigint' ? `\u0000big${v}\u0000` : v))
      .replace(/"\\u0000big(\d+)\\u0000"/g, '$1');
  }

  /**
   * fetch with the token; `body` is sent as JSON. Returns the parsed JSON, or the Response when
   * `raw` (the caller reads it). Throws ApiError for a 4xx/5xx with the server's message.
   */
  async function api(path, { body, signal, isHeavy = false, raw = false } = {}) {
    const headers = { 'X-Cavesweep-Token': TOKEN };
    const init = { method: body === undefined ? 'GET' : 'POST', headers, signal, cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = toJson(body);
    }
    if (isHeavy) await acquire(signal);
    try {
      for (let attempt = 0; ; attempt++) {
        const res = await fetch(path, init);
        if (res.status === 429 && attempt < 6) {
          await sleep(40 * 2 ** attempt, signal);
          continue;
        }
        if (!res.ok) {
          let b = null;
          try { b = await res.json(); } catch (_) { b = { error: `${res.status} ${res.statusText}` }; }
          throw new ApiError(res.status, b);
        }
        return raw ? res : await res.json();
      }
    } finally {
      if (isHeavy) release();
    }
  }

  // ------------------------------------------------------------------ state
  const state = {
    info: null,
    /** What the recipe starts from: {preset} or {toml, label, set} (a sweep point). */
    base: { preset: 'chapter-strict' },
    /** The overrides sent as `set` (`--set KEY=VALUE`). */
    set: {},
    seed: 42n,
    cave: null,
    frameAtEnd: true,
    caveCtrl: null,
    thumbsCtrl: null,
    raf: 0,
    view: 'generator',
    sweep: null,
    sweepSel: null,
    sweepTimer: 0,
    searchCtrl: null,
    searchRunning: false,
    searchRecipe: null,
  };

  // Known value sets of the recipe keys (crates/core: rule.rs, rng.rs, measure); keys not here
  // get a text box with suggestions, or a plain one.
  const CHOICES = {
    outside: ['floor', 'wall', 'wrap'],
    update: ['sync', 'inplace-row-major', 'inplace-col-major'],
    border: ['none', 'solid'],
    connectivity: ['4', '8', '6'],
    rng: ['xoshiro', 'numpy'],
  };
  const SUGGEST = {
    rule: ['B5678/S5678', 'B5678/S45678', 'B678/S345678', 'B3/S23', 'R1>=5/R2<=2', 'R1>=5'],
    post: ['none', 'bridge', 'keep-largest', 'remove-small 4', 'remove-small 4+bridge'],
    spawn: ['center', '45,70', '1,1'],
    exit: ['none', '88,138', '1,1'],
  };
  const LABELS = {
    fill: 'fill (wall probability)', steps: 'steps (last pass)', rule: 'rule (last pass)',
    floor: 'floor (exact floor cells)', post: 'post-steps', rng: 'RNG',
  };

  function recipeFields(base = state.base, set = state.set) {
    const r = base.toml != null ? { toml: base.toml } : { preset: base.preset };
    r.set = { ...set };
    return r;
  }
  function baseValues() {
    if (state.base.toml != null) return state.base.values || {};
    const p = state.info && state.info.presets.find((x) => x.name === state.base.preset);
    return p ? p.values : {};
  }
  function recipeArgs(base = state.base, set = state.set) {
    const a = base.toml != null ? ['--recipe', 'recipe.toml'] : ['--preset', base.preset];
    for (const [k, v] of Object.entries(set)) a.push('--set', shq(`${k}=${v}`));
    return a.join(' ');
  }

  // ------------------------------------------------------------------ views (tabs)
  const VIEWS = ['generator', 'sweep', 'search'];
  function showView(name, focus = false) {
    if (!VIEWS.includes(name) || $('tab-' + name).hidden) name = 'generator';
    state.view = name;
    for (const v of VIEWS) {
      const on = v === name;
      $('view-' + v).hidden = !on;
      const tab = $('tab-' + v);
      tab.setAttribute('aria-selected', on ? 'true' : 'false');
      tab.tabIndex = on ? 0 : -1;
      if (on && focus) tab.focus();
    }
    if (history.replaceState) history.replaceState(null, '', location.pathname + location.search + '#' + name);
    if (name === 'search') updateSearchRecipe();
    if (name === 'sweep' && state.sweep) renderHeatmap();
  }
  function initTabs() {
    for (const v of VIEWS) $('tab-' + v).addEventListener('click', () => showView(v));
    document.querySelector('.tabs').addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight' && e.key !== 'Home' && e.key !== 'End') return;
      const shown = VIEWS.filter((v) => !$('tab-' + v).hidden);
      let i = shown.indexOf(state.view);
      if (e.key === 'ArrowLeft') i = (i + shown.length - 1) % shown.length;
      else if (e.key === 'ArrowRight') i = (i + 1) % shown.length;
      else if (e.key === 'Home') i = 0;
      else i = shown.length - 1;
      showView(shown[i], true);
      e.preventDefault();
    });
  }

  function banner(msg) {
    const b = $('banner');
    b.textContent = msg || '';
    b.hidden = !msg;
  }

  // ------------------------------------------------------------------ generator: controls
  const controls = {}; // key -> {get(), set(v), inputs: [elements]}

  function buildKeyControls(keys) {
    const box = $('keys');
    for (const key of keys) {
      const id = 'key-' + key;
      const field = el('div', { class: 'field', id: 'field-' + key });
      const label = el('label', { for: id, class: 'key-label' },
        el('span', { text: LABELS[key] || key }), el('span', { class: 'dot', id: 'dot-' + key, title: 'overridden', hidden: true, text: '•' }));
      const err = el('div', { class: 'field-error', id: key + '-error', role: 'alert' });
      let c;
      if (key === 'fill' || key === 'steps') {
        const isFill = key === 'fill';
        const maxSteps = Math.min(50, (state.info.limits && state.info.limits.max_steps) || 50);
        const range = el('input', {
          type: 'range', id, min: 0, max: isFill ? 1 : maxSteps, step: isFill ? 0.01 : 1,
          'aria-describedby': err.id,
        });
        const num = el('input', {
          type: 'number', id: id + '-num', min: 0, max: isFill ? 1 : (state.info.limits && state.info.limits.max_steps) || 200,
          step: isFill ? 0.01 : 1, 'aria-label': key + ' value', 'aria-describedby': err.id,
        });
        range.addEventListener('input', () => { num.value = range.value; range.classList.remove('unset'); changed(key, range.value); });
        num.addEventListener('input', () => { if (num.value !== '') range.value = num.value; changed(key, num.value); });
        c = {
          get: () => num.value,
          // no value (e.g. `fill` of an exact-count recipe): the slider is shown faded
          set: (v) => { num.value = v; if (v !== '') range.value = v; range.classList.toggle('unset', v === ''); },
          inputs: [range, num],
        };
        field.append(label, el('div', { class: 'key-pair' }, range, num), err);
      } else if (CHOICES[key]) {
        const sel = el('select', { id, 'aria-describedby': err.id });
        // '' = no single value (passes that differ): the recipe's own, unless one is chosen
        sel.append(el('option', { value: '', text: '(as the recipe has it)' }));
        for (const v of CHOICES[key]) sel.append(el('option', { value: v, text: v }));
        sel.addEventListener('change', () => changed(key, sel.value));
        c = {
          get: () => sel.value,
          set: (v) => {
            if (v !== '' && ![...sel.options].some((o) => o.value === v)) sel.append(el('option', { value: v, text: v }));
            sel.value = v;
          },
          inputs: [sel],
        };
        field.append(label, sel, err);
      } else {
        const numeric = key === 'rows' || key === 'cols' || key === 'floor';
        const input = el('input', {
          type: numeric ? 'number' : 'text', id, spellcheck: 'false', 'aria-describedby': err.id,
          min: numeric ? (key === 'floor' ? 0 : 1) : null, step: numeric ? 1 : null,
          list: SUGGEST[key] ? 'list-' + key : null, placeholder: numeric ? '' : 'preset default',
        });
        if (SUGGEST[key]) {
          const dl = el('datalist', { id: 'list-' + key });
          for (const v of SUGGEST[key]) dl.append(el('option', { value: v }));
          field.append(dl);
        }
        input.addEventListener('input', () => changed(key, input.value));
        c = { get: () => input.value, set: (v) => { input.value = v; }, inputs: [input] };
        field.append(label, input, err);
      }
      controls[key] = c;
      box.append(field);
    }
    // rows and cols side by side
    if ($('field-rows') && $('field-cols')) {
      const two = el('div', { class: 'two' });
      $('field-rows').before(two);
      two.append($('field-rows'), $('field-cols'));
    }
  }

  /** Fill the controls with `values`; the one being edited keeps what the user typed. */
  function setControls(values, force = false) {
    const active = document.activeElement;
    for (const [key, c] of Object.entries(controls)) {
      if (!force && c.inputs.includes(active)) continue;
      const v = values[key] != null ? String(values[key]) : '';
      if (c.get() !== v) c.set(v);
    }
    markOverrides();
  }

  function markOverrides() {
    for (const key of Object.keys(controls)) {
      const d = $('dot-' + key);
      if (d) d.hidden = !(key in state.set);
    }
    const n = Object.keys(state.set).length;
    $('overrides').textContent = n ? `${n} override${n > 1 ? 's' : ''}: ${Object.entries(state.set).map(([k, v]) => `${k}=${v}`).join(' ')}` : 'no overrides';
  }

  function changed(key, value) {
    const base = baseValues();
    value = value.trim();
    if (value === '' || (base[key] != null && String(base[key]) === value && !(state.base.set && key in state.base.set))) delete state.set[key];
    else state.set[key] = value;
    markOverrides();
    schedule();
  }

  function clearKeyErrors() {
    for (const key of Object.keys(controls)) {
      $(key + '-error').textContent = '';
      for (const i of controls[key].inputs) i.removeAttribute('aria-invalid');
    }
    $('cave-error').textContent = '';
  }

  function showRecipeError(e) {
    clearKeyErrors();
    $('cave').classList.add('stale');
    const key = e.key && controls[e.key] ? e.key : null;
    if (key) {
      $(key + '-error').textContent = e.message;
      for (const i of controls[key].inputs) i.setAttribute('aria-invalid', 'true');
    } else if (e.key === 'seed') {
      $('seed-error').textContent = e.message;
    } else {
      $('cave-error').textContent = e.message;
    }
    $('timing').textContent = `error ${e.status || ''}: the last good cave is shown dimmed`;
  }

  function initPresets() {
    const sel = $('preset');
    for (const p of state.info.presets) sel.append(el('option', { value: p.name, text: p.name }));
    const names = state.info.presets.map((p) => p.name);
    state.base = { preset: names.includes('chapter-strict') ? 'chapter-strict' : names[0] };
    sel.value = state.base.preset;
    sel.addEventListener('change', () => {
      if (sel.value === '__sweep__') return;
      choosePreset(sel.value);
    });
    $('preset-about-more').addEventListener('click', () => {
      const about = $('preset-about');
      const open = about.classList.toggle('clamped') === false;
      $('preset-about-more').textContent = open ? 'less' : 'more';
      $('preset-about-more').setAttribute('aria-expanded', String(open));
    });
    $('reset').addEventListener('click', () => {
      state.set = state.base.set ? { ...state.base.set } : {};
      setControls({ ...baseValues(), ...state.set }, true);
      clearKeyErrors();
      schedule();
    });
  }

  function choosePreset(name) {
    state.base = { preset: name };
    state.set = {};
    const sel = $('preset');
    const opt = sel.querySelector('option[value="__sweep__"]');
    if (opt) opt.remove();
    sel.value = name;
    updateAbout();
    setControls(baseValues(), true);
    clearKeyErrors();
    schedule();
  }

  function updateAbout() {
    const p = state.info.presets.find((x) => x.name === state.base.preset);
    const about = $('preset-about');
    about.textContent = state.base.toml != null
      ? `The sweep's base recipe (${state.base.label}) with the point's values.`
      : (p && p.about) || '';
    // long descriptions are clamped to a few lines; the toggle shows the rest
    about.classList.add('clamped');
    requestAnimationFrame(() => {
      const more = $('preset-about-more');
      more.hidden = about.scrollHeight <= about.clientHeight + 1;
      more.textContent = 'more';
      more.setAttribute('aria-expanded', 'false');
    });
  }

  // ------------------------------------------------------------------ generator: seed
  function setSeed(s, { quiet = false } = {}) {
    if (s < 0n) s = 0n;
    if (s > MAX_SEED) s = MAX_SEED;
    state.seed = s;
    $('seed').value = s.toString();
    $('seed').removeAttribute('aria-invalid');
    $('seed-error').textContent = '';
    if (!quiet) schedule();
  }
  function initSeed() {
    const input = $('seed');
    input.addEventListener('input', () => {
      const t = input.value.trim();
      if (/^\d+$/.test(t) && BigInt(t) <= MAX_SEED) {
        state.seed = BigInt(t);
        input.removeAttribute('aria-invalid');
        $('seed-error').textContent = '';
        schedule();
      } else {
        input.setAttribute('aria-invalid', 'true');
        $('seed-error').textContent = `a seed is a whole number from 0 to ${MAX_SEED}`;
      }
    });
    $('seed-prev').addEventListener('click', () => setSeed(state.seed - 1n));
    $('seed-next').addEventListener('click', () => setSeed(state.seed + 1n));
    $('seed-random').addEventListener('click', () => {
      const a = new Uint32Array(1);
      crypto.getRandomValues(a);
      setSeed(BigInt(a[0]));
    });
    document.addEventListener('keydown', (e) => {
      if (e.key !== '[' && e.key !== ']') return;
      if (e.ctrlKey || e.metaKey || e.altKey || state.view !== 'generator') return;
      if (isTextField(e.target)) return;
      e.preventDefault();
      setSeed(state.seed + (e.key === ']' ? 1n : -1n));
    });
    $('recipe-form').addEventListener('submit', (e) => e.preventDefault());
  }
  function isTextField(t) {
    if (!t || !t.tagName) return false;
    if (t.isContentEditable || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT') return true;
    if (t.tagName !== 'INPUT') return false;
    return !['range', 'checkbox', 'radio', 'button', 'submit', 'reset'].includes(t.type);
  }

  // ------------------------------------------------------------------ generator: the cave
  /** Pixels per cell: 6 like `run --png` for chapter-sized grids, fewer for big ones. */
  function caveScale() {
    const rows = parseInt(controls.rows ? controls.rows.get() : '', 10) || 90;
    const cols = parseInt(controls.cols ? controls.cols.get() : '', 10) || 140;
    const maxScale = (state.info.limits && state.info.limits.max_scale) || 16;
    let s = Math.min(6, maxScale, Math.floor(1400 / Math.max(cols, rows)) || 1);
    while (s > 1 && rows * cols * s * s > 4e6) s--;
    return Math.max(1, s);
  }

  /**
   * Redraw now: one cave request at a time, the latest change wins. A change while a request
   * is in flight marks the cave dirty, and the answer's arrival sends the newest state at once
   * (no waiting for an animation frame, no pile of aborted requests on the server). The
   * thumbnails wait until the changes pause, so they never delay the cave.
   */
  function schedule() {
    state.caveDirty = true;
    // The cave carries aria-busy from a change until the answer for the newest state is shown
    // (screen readers, and tests that must not read an answer to an older request).
    $('cave').setAttribute('aria-busy', 'true');
    // The strip shows the previous seeds' caves until the new ones arrive (screen readers and
    // tests wait for aria-busy to go).
    $('thumbs').setAttribute('aria-busy', 'true');
    if (state.thumbsCtrl) state.thumbsCtrl.abort();
    state.thumbsCtrl = null;
    clearTimeout(state.thumbsTimer);
    if (!state.caveBusy) loadCave();
  }

  async function loadCave() {
    state.caveBusy = true;
    state.caveDirty = false;
    const ctrl = new AbortController();
    state.caveCtrl = ctrl;
    const body = { ...recipeFields(), seed: state.seed, scale: caveScale(), frames: true, frame_scale: 1 };
    const t0 = performance.now();
    let ok = false;
    try {
      const cave = await api('/api/cave', { body, signal: ctrl.signal, isHeavy: true });
      const rtt = performance.now() - t0;
      if (!state.caveDirty) {
        clearKeyErrors();
        renderCave(cave, rtt);
        ok = true;
      }
    } catch (e) {
      if (!isAbort(e) && !state.caveDirty) showRecipeError(e);
    } finally {
      state.caveCtrl = null;
      state.caveBusy = false;
      if (state.caveDirty) loadCave();
      else {
        $('cave').removeAttribute('aria-busy');
        if (ok) state.thumbsTimer = setTimeout(loadThumbs, 150);
      }
    }
  }

  function renderCave(cave, rtt) {
    state.cave = cave;
    if (state.base.toml != null && !state.base.values) state.base.values = cave.values;
    setControls(cave.values || {});
    const img = $('cave');
    img.classList.remove('stale');
    img.alt = `Cave of seed ${state.seed}, ${cave.rows}x${cave.cols}`;
    // The slider runs over the frames; the last frame is the finished cave (shown from `png`).
    const frames = cave.frames || [];
    const slider = $('frame');
    const last = Math.max(0, frames.length - 1);
    slider.max = String(last);
    if (state.frameAtEnd || +slider.value > last) slider.value = String(last);
    $('frame-row').hidden = frames.length < 2;
    showFrame();
    renderMetrics(cave);
    $('timing').textContent =
      `server ${fmtUs(cave.server_us)} · round trip ${rtt.toFixed(1)} ms · ${cave.rows}×${cave.cols}` +
      (frames.length ? ` · ${frames.length} frames` : '');
    $('command').value = cave.command || '';
  }

  function showFrame() {
    const cave = state.cave;
    if (!cave) return;
    const frames = cave.frames || [];
    const slider = $('frame');
    const last = Math.max(0, frames.length - 1);
    const i = Math.min(+slider.value, last);
    state.frameAtEnd = i === last;
    const src = pngUrl(state.frameAtEnd ? cave.png : frames[i].png);
    const img = $('cave');
    // Frames come at one pixel per cell (cheap to encode); the style draws every picture at
    // the box's width, pixelated, so they show at the cave picture's size.
    if (img.getAttribute('src') !== src) img.src = src;
    const label = frames.length ? frames[i].label : '';
    $('frame-label').textContent = state.frameAtEnd ? (label ? `${label} (final)` : 'final') : label;
    $('frame-label').title = $('frame-label').textContent;
    slider.setAttribute('aria-valuetext', $('frame-label').textContent);
    renderTrajectory(cave.trajectory || [], state.frameAtEnd ? null : i);
  }

  function renderMetrics(cave) {
    const tb = $('metrics').tBodies[0];
    tb.textContent = '';
    const m = cave.metrics || {};
    const order = (state.info.metrics || []).filter((k) => k in m).concat(Object.keys(m).filter((k) => !(state.info.metrics || []).includes(k)));
    const row = (k, v) => tb.append(el('tr', null, el('th', { scope: 'row', text: k }), el('td', { text: v })));
    row('seed', state.seed.toString());
    row('size', `${cave.rows} × ${cave.cols}`);
    for (const k of order) row(k, fmt(m[k]));
  }

  /** The wall-fraction trajectory as a small line chart; `cur` marks the shown frame. */
  function renderTrajectory(t, cur) {
    const g = $('trajectory');
    g.textContent = '';
    if (!t.length) return;
    const W = 300, H = 130, L = 40, R = 8, T = 8, B = 22;
    let lo = Math.min(...t), hi = Math.max(...t);
    const pad = Math.max(0.01, (hi - lo) * 0.12);
    lo = Math.max(0, lo - pad);
    hi = Math.min(1, hi + pad);
    if (hi <= lo) hi = lo + 0.01;
    const x = (i) => L + (t.length === 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (t.length - 1));
    const y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
    for (const v of [lo, (lo + hi) / 2, hi]) {
      g.append(svg('line', { class: 'grid', x1: L, x2: W - R, y1: y(v), y2: y(v) }));
      g.append(svg('text', { x: L - 4, y: y(v) + 3, 'text-anchor': 'end' }, v.toFixed(3)));
    }
    g.append(svg('line', { class: 'axis', x1: L, x2: W - R, y1: H - B, y2: H - B }));
    g.append(svg('text', { x: L, y: H - 6, 'text-anchor': 'start' }, 'fill'));
    g.append(svg('text', { x: W - R, y: H - 6, 'text-anchor': 'end' }, `step ${t.length - 1}`));
    g.append(svg('polyline', { class: 'line', points: t.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ') }));
    const r = t.length > 40 ? 1.5 : 3;
    t.forEach((v, i) => {
      const isCur = cur != null ? i === cur : i === t.length - 1;
      g.append(svg('circle', { class: isCur ? 'pt cur' : 'pt', cx: x(i), cy: y(v), r: isCur ? r + 1.5 : r },
        svg('title', null, `${i === 0 ? 'fill' : 'step ' + i}: wall fraction ${v.toFixed(4)}`)));
    });
  }

  // ------------------------------------------------------------------ generator: thumbnails
  async function loadThumbs() {
    if (state.thumbsCtrl) state.thumbsCtrl.abort();
    const ctrl = new AbortController();
    state.thumbsCtrl = ctrl;
    const max = Math.min(16, (state.info.limits && state.info.limits.max_thumbs) || 16);
    let first = state.seed + 1n;
    if (first + BigInt(max) - 1n > MAX_SEED) first = MAX_SEED - BigInt(max) + 1n;
    const count = max;
    const scale = caveScale() >= 4 ? 2 : 1;
    try {
      const res = await api('/api/thumbs', {
        body: { ...recipeFields(), seed: first, count, scale }, signal: ctrl.signal, isHeavy: true,
      });
      if (state.thumbsCtrl !== ctrl) return;
      renderThumbs(res.thumbs || [], first);
      $('thumbs').removeAttribute('aria-busy');
    } catch (e) {
      if (!isAbort(e)) {
        $('thumbs').textContent = `thumbnails: ${e.message}`;
        $('thumbs').removeAttribute('aria-busy');
      }
    }
  }

  function renderThumbs(thumbs, first) {
    const box = $('thumbs');
    box.textContent = '';
    thumbs.forEach((t, i) => {
      const seed = first + BigInt(i); // exact, where the JSON number may not be past 2^53
      const meta = [];
      if (t.floor_fraction != null) meta.push(fmt(t.floor_fraction, 2));
      if (t.components != null) meta.push(fmt(t.components));
      box.append(el('button', {
        type: 'button', class: 'thumb', 'data-seed': seed.toString(),
        'aria-label': `Seed ${seed}${meta.length ? `: floor fraction ${meta[0]}, components ${meta[1]}` : ''}`,
        title: `seed ${seed}\nfloor fraction ${fmt(t.floor_fraction)}\ncomponents ${fmt(t.components)}`,
        onclick: () => setSeed(seed),
      }, el('img', { src: pngUrl(t.png), alt: '' }), el('span', { class: 'seed', text: seed.toString() }),
      el('span', { class: 'meta', text: meta.join(' · ') })));
    });
  }

  // ------------------------------------------------------------------ take it away
  async function exportFile(format, button) {
    const status = $('export-status');
    const body = { ...recipeFields(), seed: state.seed, format };
    if (format === 'png') body.scale = caveScale();
    button.disabled = true;
    status.textContent = `preparing ${format}…`;
    try {
      const res = await api('/api/export', { body, raw: true, isHeavy: true });
      const blob = await res.blob();
      const cd = res.headers.get('Content-Disposition') || '';
      const m = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(cd);
      const name = m ? decodeURIComponent(m[1]) : `cave-${state.seed}.${format}`;
      const url = URL.createObjectURL(blob);
      const a = el('a', { href: url, download: name, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10000);
      status.textContent = `downloaded ${name} (${blob.size.toLocaleString('en-US')} bytes)` +
        (format === 'tmj' || format === 'tmx' ? '; put the Tileset beside it' : '');
    } catch (e) {
      status.textContent = `${format}: ${e.message}`;
    } finally {
      button.disabled = false;
    }
  }

  /** Copy to the clipboard; without clipboard access, select the text in `input` instead. */
  async function copyText(text, input, status) {
    input.value = text;
    try {
      if (!navigator.clipboard || !window.isSecureContext) throw new Error('no clipboard');
      await navigator.clipboard.writeText(text);
      status.textContent = 'copied';
    } catch (_) {
      input.focus();
      input.select();
      let ok = false;
      try { ok = document.execCommand('copy'); } catch (_) { ok = false; }
      status.textContent = ok ? 'copied' : 'selected: press Ctrl+C (⌘C) to copy';
    }
  }

  function searchCommand(base, set) {
    const where = $('search-where').value.trim();
    let c = `cavesweep search ${recipeArgs(base, set)} --where ${shq(where)} --seeds ${shq($('search-seeds').value.trim())}`;
    if (searchMode() === 'top') c += ` --top ${$('search-top').value} --by ${$('search-by').value} --order ${$('search-order').value}`;
    else c += ` --limit ${$('search-limit').value}`;
    return c;
  }

  function initTakeAway() {
    for (const b of $('exports').querySelectorAll('button[data-format]')) {
      b.addEventListener('click', () => exportFile(b.dataset.format, b));
    }
    $('copy-run').addEventListener('click', () =>
      copyText((state.cave && state.cave.command) || '', $('command'), $('export-status')));
    $('copy-search-cmd').addEventListener('click', () =>
      copyText(searchCommand(state.base, state.set), $('command'), $('export-status')));
  }

  // ------------------------------------------------------------------ sweep
  const VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  function ramp(t) {
    t = Math.max(0, Math.min(1, t));
    const p = t * (VIRIDIS.length - 1);
    const i = Math.min(VIRIDIS.length - 2, Math.floor(p));
    const f = p - i;
    const c = VIRIDIS[i].map((a, k) => Math.round(a + (VIRIDIS[i + 1][k] - a) * f));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }

  async function pollSweep() {
    clearTimeout(state.sweepTimer);
    try {
      // (the server counts sweep reads as heavy requests too)
      const s = await api('/api/sweep', { isHeavy: true });
      const first = !state.sweep;
      state.sweep = s;
      if (first) buildSweepControls();
      renderSweepStatus();
      renderHeatmap();
      if (state.sweepSel != null) renderPoint(false);
      if (!s.complete) state.sweepTimer = setTimeout(pollSweep, 2000);
    } catch (e) {
      $('sweep-status').textContent = `cannot read the sweep: ${e.message}`;
      state.sweepTimer = setTimeout(pollSweep, 4000);
    }
  }

  function renderSweepStatus() {
    const s = state.sweep;
    const done = s.points.filter((p) => p.done).length;
    $('sweep-title').textContent = s.dir;
    const seeds = Array.isArray(s.seeds) ? `seeds ${s.seeds[0]}..${s.seeds[1]}` : '';
    $('sweep-status').textContent = [
      s.preset ? `base ${s.preset}` : null, seeds, s.gate ? `gate ${s.gate}` : null,
      `${done}/${s.points.length} points` + (s.complete ? ' · complete' : ' · running, refreshing every 2 s'),
    ].filter(Boolean).join(' · ');
    $('sweep-command').value = s.command || '';
  }

  function buildSweepControls() {
    const s = state.sweep;
    const color = $('sweep-color');
    color.textContent = '';
    (s.gates || []).forEach((g, i) => color.append(el('option', { value: 'rate:' + i, text: g })));
    for (const m of s.metrics || []) color.append(el('option', { value: 'mean:' + m, text: `${m} (mean)` }));
    const xs = $('sweep-x'), ys = $('sweep-y');
    xs.textContent = '';
    ys.textContent = '';
    s.axes.forEach((a, i) => {
      xs.append(el('option', { value: i, text: a.key }));
      ys.append(el('option', { value: i, text: a.key }));
    });
    ys.append(el('option', { value: -1, text: '(none)' }));
    xs.value = '0';
    ys.value = s.axes.length > 1 ? '1' : '-1';
    let prevX = xs.value, prevY = ys.value;
    xs.addEventListener('change', () => {
      if (xs.value === ys.value) ys.value = prevX;
      prevX = xs.value; prevY = ys.value;
      buildFixed();
      renderHeatmap();
    });
    ys.addEventListener('change', () => {
      if (xs.value === ys.value) xs.value = prevY;
      prevX = xs.value; prevY = ys.value;
      buildFixed();
      renderHeatmap();
    });
    color.addEventListener('change', renderHeatmap);
    buildFixed();
  }

  function buildFixed() {
    const s = state.sweep;
    const box = $('sweep-fixed');
    const old = {};
    for (const sel of box.querySelectorAll('select')) old[sel.dataset.axis] = sel.value;
    box.textContent = '';
    const x = +$('sweep-x').value, y = +$('sweep-y').value;
    s.axes.forEach((a, i) => {
      if (i === x || i === y) return;
      const id = 'sweep-fix-' + a.key;
      const sel = el('select', { id, 'data-axis': i });
      a.values.forEach((v, j) => sel.append(el('option', { value: j, text: v })));
      sel.value = old[i] ?? '0';
      sel.addEventListener('change', renderHeatmap);
      box.append(el('div', { class: 'field' }, el('label', { for: id, text: a.key }), sel));
    });
  }

  function pointValue(p, color) {
    const [kind, name] = [color.slice(0, color.indexOf(':')), color.slice(color.indexOf(':') + 1)];
    if (kind === 'rate') return p.rates ? p.rates[+name] : null;
    return p.means ? p.means[name] : null;
  }

  function renderHeatmap() {
    const s = state.sweep;
    if (!s) return;
    const g = $('heatmap');
    g.textContent = '';
    const color = $('sweep-color').value || 'mean:' + ((s.metrics || [])[0] || '');
    const xi = +$('sweep-x').value, yi = +$('sweep-y').value;
    const xa = s.axes[xi], ya = yi >= 0 ? s.axes[yi] : null;
    const xsv = xa ? xa.values : [''], ysv = ya ? ya.values : [''];
    const fixed = {};
    for (const sel of $('sweep-fixed').querySelectorAll('select')) fixed[sel.dataset.axis] = +sel.value;
    const byCoords = new Map(s.points.map((p, i) => [p.coords.join(','), i]));
    const cellIndex = (cx, cy) => {
      const c = s.axes.map((_, i) => (i === xi ? cx : i === yi ? cy : fixed[i] ?? 0));
      return byCoords.get(c.join(','));
    };
    // value range over the shown cells
    let lo = Infinity, hi = -Infinity;
    for (let cy = 0; cy < ysv.length; cy++) for (let cx = 0; cx < xsv.length; cx++) {
      const i = cellIndex(cx, cy);
      const v = i == null ? null : pointValue(s.points[i], color);
      if (typeof v === 'number' && Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    }
    const isRate = color.startsWith('rate:');
    if (isRate && lo <= hi) { lo = Math.min(lo, 0); hi = Math.max(hi, 1); }
    const span = hi > lo ? hi - lo : 1;
    const cw = Math.max(56, Math.min(150, 640 / xsv.length));
    const ch = Math.max(34, Math.min(96, 380 / ysv.length));
    // room on the left for the longest row label (12px monospace: about 7.3px a character)
    const L = ya ? 34 + Math.ceil(7.3 * Math.max(...ysv.map((v) => String(v).length))) : 16;
    const T = 10, B = 44;
    const W = L + cw * xsv.length + 10, H = T + ch * ysv.length + B;
    g.setAttribute('viewBox', `0 0 ${W} ${H}`);
    g.setAttribute('width', W);
    const colorName = $('sweep-color').selectedOptions[0] ? $('sweep-color').selectedOptions[0].text : color;
    for (let cy = 0; cy < ysv.length; cy++) {
      const row = svg('g', { role: 'row' });
      for (let cx = 0; cx < xsv.length; cx++) {
        const i = cellIndex(cx, cy);
        if (i == null) continue;
        const p = s.points[i];
        const v = pointValue(p, color);
        const has = typeof v === 'number' && Number.isFinite(v);
        const t = has ? (v - lo) / span : 0;
        const x = L + cx * cw, y = T + (ysv.length - 1 - cy) * ch; // larger values upwards
        const params = s.axes.map((a, k) => `${a.key}=${p.params[k]}`).join(', ');
        const tip = `${params}\n${colorName}: ${has ? fmt(v) : '—'}` +
          (p.rates && s.gates ? s.gates.map((gn, k) => `\n${gn}: ${fmt(p.rates[k])}`).join('') : '') +
          `\nseeds: ${fmt(p.seeds)}${p.done ? '' : ' (not done yet)'}`;
        const rect = svg('rect', {
          class: 'cell' + (has ? '' : ' pending') + (state.sweepSel === i ? ' sel' : ''),
          x: x + 1, y: y + 1, width: cw - 2, height: ch - 2, rx: 3,
          fill: has ? ramp(t) : null, tabindex: -1, role: 'gridcell', 'data-point': i,
          'data-cx': cx, 'data-cy': cy,
          'aria-label': `${params}: ${colorName} ${has ? fmt(v) : 'not done'}`,
        }, svg('title', null, tip));
        rect.addEventListener('click', () => selectPoint(i));
        rect.addEventListener('keydown', (e) => {
          if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); selectPoint(i); }
        });
        row.append(rect);
        if (cw >= 44) {
          row.append(svg('text', {
            class: 'val ' + (has ? (t < 0.6 ? 'dark' : 'light') : ''), x: x + cw / 2, y: y + ch / 2 + 4, 'text-anchor': 'middle',
          }, has ? cellText(v, isRate) : p.done ? '—' : '…'));
        }
      }
      g.append(row);
      if (ya) g.append(svg('text', { x: L - 6, y: T + (ysv.length - 1 - cy) * ch + ch / 2 + 4, 'text-anchor': 'end' }, ysv[cy]));
    }
    if (xa) {
      xsv.forEach((v, cx) => g.append(svg('text', { x: L + cx * cw + cw / 2, y: T + ysv.length * ch + 16, 'text-anchor': 'middle' }, v)));
      g.append(svg('text', { class: 'axis-name', x: L + (cw * xsv.length) / 2, y: H - 6, 'text-anchor': 'middle' }, xa.key));
    }
    if (ya) g.append(svg('text', { class: 'axis-name', x: 12, y: T + (ch * ysv.length) / 2, 'text-anchor': 'middle', transform: `rotate(-90 12 ${T + (ch * ysv.length) / 2})` }, ya.key));
    // one tab stop for the whole map (the chosen cell, else the first); arrow keys move in it
    const cells = [...g.querySelectorAll('rect.cell')];
    const stop = cells.find((c) => +c.dataset.point === state.sweepSel) || cells[0];
    if (stop) stop.setAttribute('tabindex', '0');
    $('legend-min').textContent = lo <= hi ? fmt(lo, 3) : '';
    $('legend-max').textContent = lo <= hi ? fmt(hi, 3) : '';
  }

  function cellText(v, isRate) {
    if (isRate) return v.toFixed(2);
    const a = Math.abs(v);
    return a >= 100 ? Math.round(v).toLocaleString('en-US') : a >= 10 ? v.toFixed(1) : v.toFixed(3);
  }

  /** A heatmap cell: load its recipe into the generator and show its picks. */
  function selectPoint(i) {
    state.sweepSel = i;
    for (const r of $('heatmap').querySelectorAll('rect.cell')) r.classList.toggle('sel', +r.dataset.point === i);
    loadPointIntoGenerator(state.sweep.points[i]);
    renderPoint(true);
  }

  function loadPointIntoGenerator(p, seed) {
    const s = state.sweep;
    const set = { ...(p.set || {}) };
    if (s.toml != null) {
      state.base = { toml: s.toml, label: `${s.dir}: ${Object.entries(set).map(([k, v]) => `${k}=${v}`).join(' ')}`, set };
    } else {
      state.base = { preset: s.preset, set };
    }
    state.set = { ...set };
    const sel = $('preset');
    if (s.toml != null) {
      let opt = sel.querySelector('option[value="__sweep__"]');
      if (!opt) { opt = el('option', { value: '__sweep__' }); sel.prepend(opt); }
      opt.textContent = `sweep ${s.dir} · ${Object.entries(set).map(([k, v]) => `${k}=${v}`).join(' ')}`;
      sel.value = '__sweep__';
    } else {
      sel.value = s.preset;
    }
    updateAbout();
    // Show the point's values at once; the cave's response fills in the rest.
    const values = { ...(s.toml != null ? {} : baseValues()), ...set };
    for (const [k, v] of Object.entries(values)) if (controls[k]) controls[k].set(String(v));
    markOverrides();
    clearKeyErrors();
    if (seed != null) setSeed(seed, { quiet: true });
    schedule();
  }

  async function renderPoint(fetchPicks) {
    const s = state.sweep;
    const i = state.sweepSel;
    const p = s.points[i];
    $('sweep-point-empty').hidden = true;
    $('sweep-open').hidden = false;
    const tb = $('sweep-point-table').tBodies[0];
    tb.textContent = '';
    const row = (k, v) => tb.append(el('tr', null, el('th', { scope: 'row', text: k }), el('td', { text: v })));
    s.axes.forEach((a, k) => row(a.key, p.params[k]));
    row('seeds', fmt(p.seeds) + (p.done ? '' : ' (running)'));
    (s.gates || []).forEach((g, k) => row(g, fmt(p.rates ? p.rates[k] : null)));
    for (const m of s.metrics || []) if (p.means && m in p.means) row(`${m} (mean)`, fmt(p.means[m]));
    if (!fetchPicks) return;
    const box = $('sweep-picks');
    box.textContent = '';
    try {
      const picks = await api('/api/sweep/picks?point=' + encodeURIComponent(i), { isHeavy: true });
      if (state.sweepSel !== i) return;
      const roles = [['typical', 'typical'], ['passing', 'passing'], ['failing', 'failing']];
      const cards = roles.map(([k, label]) => {
        const seed = picks[k];
        if (seed == null) {
          return el('div', { class: 'pick none' }, el('span', { class: 'role', text: label }), el('span', { class: 'seed', text: 'none' }));
        }
        const img = el('img', { alt: '' });
        const b = el('button', {
          type: 'button', class: 'pick', 'data-seed': seed, 'aria-label': `${label} cave, seed ${seed}`,
          onclick: () => { loadPointIntoGenerator(p, BigInt(seed)); showView('generator'); },
        }, img, el('span', { class: 'role', text: label }), el('span', { class: 'seed', text: String(seed) }));
        return { b, img, seed };
      });
      for (const c of cards) box.append(c.b || c);
      // one small picture each, through the heavy-request queue
      const base = s.toml != null ? { toml: s.toml } : { preset: s.preset };
      for (const c of cards) {
        if (!c.b) continue;
        api('/api/thumbs', { body: { ...base, set: { ...p.set }, seed: BigInt(c.seed), count: 1, scale: 2 }, isHeavy: true })
          .then((r) => { if (r.thumbs && r.thumbs[0]) c.img.src = pngUrl(r.thumbs[0].png); })
          .catch(() => {});
      }
    } catch (e) {
      box.textContent = `picks: ${e.message}`;
    }
  }

  function heatmapKeys(e) {
    const dirs = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
    const d = dirs[e.key];
    const cur = e.target;
    if (!d || !cur.classList || !cur.classList.contains('cell')) return;
    e.preventDefault();
    const cx = +cur.dataset.cx + d[0], cy = +cur.dataset.cy + d[1];
    const next = $('heatmap').querySelector(`rect.cell[data-cx="${cx}"][data-cy="${cy}"]`);
    if (!next) return;
    cur.setAttribute('tabindex', '-1');
    next.setAttribute('tabindex', '0');
    next.focus();
  }

  function initSweep() {
    $('heatmap').addEventListener('keydown', heatmapKeys);
    $('sweep-open').addEventListener('click', () => showView('generator'));
    $('copy-sweep').addEventListener('click', () => copyText($('sweep-command').value, $('sweep-command'), $('sweep-status')));
  }

  // ------------------------------------------------------------------ search
  function searchMode() { return $('search-mode-top').checked ? 'top' : 'limit'; }
  function updateSearchMode() {
    const top = searchMode() === 'top';
    $('search-limit-field').hidden = top;
    $('search-top-field').hidden = !top;
    $('search-by-field').hidden = !top;
    $('search-order-field').hidden = !top;
  }
  function updateSearchRecipe() {
    const baseSet = state.base.set || {};
    const extra = Object.entries(state.set).filter(([k, v]) => baseSet[k] !== v);
    const base = state.base.toml != null ? `the sweep point ${state.base.label}` : state.base.preset;
    $('search-recipe').textContent = `Searches the generator's recipe: ${base}` +
      (extra.length ? ` with ${extra.map(([k, v]) => `${k}=${v}`).join(' ')}` : '') +
      '. Metrics: ' + (state.info.metrics || []).join(', ') + '.';
    $('search-command').value = searchCommand(state.base, state.set);
  }

  function showSearchError(e) {
    const box = $('search-error');
    box.textContent = '';
    box.append(el('div', { text: e.message }));
    const where = $('search-where').value;
    if (e.at != null && (e.key == null || e.key === 'where')) {
      const col = Math.max(1, Math.min(+e.at, where.length + 1));
      box.append(el('pre', { 'aria-hidden': 'true', text: `${where}\n${' '.repeat(col - 1)}^` }));
      const inp = $('search-where');
      inp.setAttribute('aria-invalid', 'true');
    }
    if (e.key && e.key !== 'where') {
      const map = { seeds: 'search-seeds', limit: 'search-limit', top: 'search-top', by: 'search-by', order: 'search-order' };
      if (map[e.key]) $(map[e.key]).setAttribute('aria-invalid', 'true');
    }
  }
  function clearSearchError() {
    $('search-error').textContent = '';
    for (const id of ['search-where', 'search-seeds', 'search-limit', 'search-top', 'search-by', 'search-order']) $(id).removeAttribute('aria-invalid');
  }

  async function runSearch() {
    stopSearch();
    clearSearchError();
    const ctrl = new AbortController();
    state.searchCtrl = ctrl;
    const recipe = { base: { ...state.base }, set: { ...state.set } };
    state.searchRecipe = recipe;
    const body = { ...recipeFields(recipe.base, recipe.set), where: $('search-where').value, seeds: $('search-seeds').value.trim() };
    if (searchMode() === 'top') {
      body.top = parseInt($('search-top').value, 10) || 10;
      body.by = $('search-by').value;
      body.order = $('search-order').value;
    } else {
      body.limit = parseInt($('search-limit').value, 10) || 10;
    }
    const table = $('search-matches');
    table.tHead.textContent = '';
    table.tBodies[0].textContent = '';
    $('search-empty').hidden = true;
    const progress = $('search-progress');
    progress.value = 0;
    progress.removeAttribute('data-done');
    const status = $('search-status');
    status.textContent = 'starting…';
    $('search-run').disabled = true;
    $('search-stop').disabled = false;
    state.searchRunning = true;
    let matched = 0, done = 0, total = 0;
    const t0 = performance.now();
    const columns = [];
    const say = (extra) => {
      const el = ((performance.now() - t0) / 1000).toFixed(1);
      status.textContent = `${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} seeds · ${matched} match${matched === 1 ? '' : 'es'} · ${el} s${extra ? ' · ' + extra : ''}`;
    };
    try {
      const res = await api('/api/search', { body, signal: ctrl.signal, raw: true });
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buf = '';
      const onLine = (line) => {
        if (!line.trim()) return;
        let obj;
        try { obj = JSON.parse(line); } catch (_) { return; }
        if (obj.progress) {
          done = obj.progress.done; total = obj.progress.total;
          progress.max = Math.max(1, total);
          progress.value = done;
          say();
        } else if (obj.match) {
          matched++;
          const raw = /"seed"\s*:\s*(\d+)/.exec(line); // exact, past 2^53 too
          addMatch(obj.match, raw ? raw[1] : String(obj.match.seed), columns, recipe);
          say();
        } else if (obj.end) {
          done = obj.end.searched ?? done;
          if (!total) total = done;
          progress.max = Math.max(1, total);
          progress.value = obj.end.stopped ? Math.min(total, done) : progress.max;
          progress.dataset.done = 'true';
          say(obj.end.stopped ? 'stopped' : done < total ? 'limit reached' : 'done');
        } else if (obj.error) {
          showSearchError({ message: obj.error, at: null, key: null });
          say('error');
        }
      };
      for (;;) {
        const { value, done: eof } = await reader.read();
        if (eof) break;
        buf += decoder.decode(value, { stream: true });
        let nl;
        while ((nl = buf.indexOf('\n')) >= 0) {
          onLine(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
        }
      }
      buf += decoder.decode();
      if (buf) onLine(buf);
    } catch (e) {
      if (isAbort(e)) say('stopped');
      else { showSearchError(e); status.textContent = `error ${e.status || ''}`; }
    } finally {
      if (state.searchCtrl === ctrl) {
        state.searchCtrl = null;
        state.searchRunning = false;
        pump();
        $('search-run').disabled = false;
        $('search-stop').disabled = true;
        if (!matched && table.tBodies[0].rows.length === 0 && progress.dataset.done === 'true') {
          $('search-empty').hidden = false;
          $('search-empty').textContent = 'No matches.';
        }
      }
    }
  }

  function stopSearch() {
    if (state.searchCtrl) state.searchCtrl.abort();
  }

  function addMatch(m, seedText, columns, recipe) {
    const table = $('search-matches');
    if (!columns.length) {
      columns.push('seed', ...Object.keys(m).filter((k) => k !== 'seed'));
      table.tHead.append(el('tr', null, ...columns.map((c) => el('th', { scope: 'col', text: c }))));
    }
    const view = () => viewMatch(seedText, recipe);
    const tr = el('tr', { 'data-seed': seedText, onclick: view });
    columns.forEach((c, i) => {
      if (i === 0) {
        tr.append(el('td', null, el('button', {
          type: 'button', 'aria-label': `View seed ${seedText}`, text: seedText,
          onclick: (e) => { e.stopPropagation(); view(); },
        })));
      } else {
        tr.append(el('td', { text: fmt(m[c]) }));
      }
    });
    table.tBodies[0].append(tr);
  }

  function viewMatch(seedText, recipe) {
    state.base = { ...recipe.base };
    state.set = { ...recipe.set };
    const sel = $('preset');
    if (state.base.toml == null) {
      const opt = sel.querySelector('option[value="__sweep__"]');
      if (opt) opt.remove();
      sel.value = state.base.preset;
    } else {
      sel.value = '__sweep__';
    }
    updateAbout();
    setControls({ ...baseValues(), ...state.set }, true);
    clearKeyErrors();
    setSeed(BigInt(seedText), { quiet: true });
    showView('generator');
    schedule();
  }

  function initSearch() {
    const by = $('search-by');
    for (const m of state.info.metrics || []) by.append(el('option', { value: m, text: m }));
    if ((state.info.metrics || []).includes('floor_fraction')) by.value = 'floor_fraction';
    $('search-form').addEventListener('submit', (e) => { e.preventDefault(); runSearch(); });
    $('search-stop').addEventListener('click', stopSearch);
    $('search-mode-limit').addEventListener('change', updateSearchMode);
    $('search-mode-top').addEventListener('change', updateSearchMode);
    $('search-where').addEventListener('input', clearSearchError);
    $('search-copy').addEventListener('click', () => {
      copyText(searchCommand(state.base, state.set), $('search-command'), $('search-status'));
    });
    $('search-form').addEventListener('input', updateSearchRecipe);
    $('search-form').addEventListener('change', updateSearchRecipe);
    updateSearchMode();
  }

  // ------------------------------------------------------------------ start
  async function start() {
    if (!TOKEN) {
      banner('This page needs its token: open the URL that `cavesweep explore` printed (it ends in ?token=…).');
    }
    let info;
    try {
      info = await api('/api/info');
    } catch (e) {
      banner(e.status === 403
        ? 'The server refused this page (403): open the exact URL that `cavesweep explore` printed, with its token.'
        : `Cannot reach the cavesweep server: ${e.message}. Is \`cavesweep explore\` still running?`);
      $('timing').textContent = 'not connected';
      return;
    }
    banner('');
    state.info = info;
    $('version').textContent = `cavesweep ${info.version || ''}`;
    initTabs();
    initPresets();
    buildKeyControls(info.keys || []);
    initSeed();
    initTakeAway();
    initSearch();
    initSweep();
    $('frame').addEventListener('input', showFrame);
    updateAbout();
    setControls(baseValues(), true);
    if (info.sweep) {
      $('tab-sweep').hidden = false;
      pollSweep();
    }
    const want = location.hash.replace('#', '');
    showView(VIEWS.includes(want) ? want : 'generator');
    schedule();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
