// mcpgym web viewer: the episode list (`/`) and one episode (`/view/{id}`).
// Everything from the server is shown with textContent / DOM nodes, never as HTML.
'use strict';

const AUTH_MSG = 'This server needs its token: open /?token=YOUR_TOKEN once.';
const SVG_NS = 'http://www.w3.org/2000/svg';

// ---------- helpers ----------

/** Builds an element: attrs may hold class, text, data-* and plain attributes. */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = String(v);
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : String(c));
  }
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  return node;
}

class ApiError extends Error {}

/** fetch with the cookie; throws ApiError carrying the server's sentence on 4xx/5xx. */
async function api(url, options) {
  let res;
  try {
    res = await fetch(url, Object.assign({ credentials: 'same-origin' }, options || {}));
  } catch (e) {
    throw new ApiError('The server does not answer (' + e.message + ').');
  }
  if (res.status === 401) throw new ApiError(AUTH_MSG);
  if (!res.ok) {
    let msg = 'HTTP ' + res.status;
    try {
      const body = await res.json();
      if (body && body.error) msg = String(body.error);
    } catch (_) { /* not JSON */ }
    const err = new ApiError(msg);
    err.status = res.status;
    throw err;
  }
  return res;
}

async function getJson(url) { return (await api(url)).json(); }

async function postJson(url, body) {
  const res = await api(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.json();
}

function showMessage(text) {
  const box = document.getElementById('message');
  if (!box) return;
  box.textContent = text || '';
  box.classList.toggle('hidden', !text);
}

function fmt3(x) {
  const n = Number(x);
  return Number.isFinite(n) ? n.toFixed(3) : '–';
}

// An episode whose trajectory has its end record but that is not done was closed unfinished
// (deleted, reaped when idle, its server stopped): closed, not running.
function stateOf(s) {
  if (s.aborted) return 'aborted';
  if (s.truncated) return 'truncated';
  if (s.done) return 'done';
  if (s.ended) return 'closed';
  return 'running';
}

/** What a state badge says when hovered: why an aborted episode was aborted. */
function stateTitle(s) {
  if (s.aborted) return s.abort_reason ? 'aborted: ' + s.abort_reason : 'aborted: the environment failed';
  if (stateOf(s) === 'closed') return 'closed before it was done';
  return undefined;
}

function fmtAge(seconds) {
  if (!Number.isFinite(seconds)) return '';
  const s = Math.max(0, seconds);
  if (s < 60) return Math.floor(s) + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min';
  if (s < 86400) return Math.floor(s / 3600) + ' h';
  return Math.floor(s / 86400) + ' d';
}

function ageOf(ep) {
  if (typeof ep.age_s === 'number') return ep.age_s;
  if (ep.started) return (Date.now() - Date.parse(ep.started)) / 1000;
  return NaN;
}

// A generated family's instances are `<family>/<n>`; fixed tasks numbered `<name>-<n>`
// (Wordle's `train-0412`, the desktop's `desktop-train-000`) are grouped by name.
function family(task) {
  const t = String(task || '');
  const i = t.indexOf('/');
  if (i >= 0) return t.slice(0, i);
  return t.replace(/-\d+$/, '') || t;
}

function componentsText(comp) {
  return Object.entries(comp || {}).map(([k, v]) => k + ' ' + fmt3(v)).join(', ');
}

function jsonText(v) {
  try {
    const flat = JSON.stringify(v);
    return flat.length <= 90 ? flat : JSON.stringify(v, null, 2);
  } catch (_) { return String(v); }
}

/** A status, with a seed above 2^53 kept exact as a string. */
async function getStatus(url) {
  const text = await (await api(url)).text();
  const s = JSON.parse(text);
  const m = /"seed"\s*:\s*(\d{16,})/.exec(text);
  if (m) s.seed = m[1];
  return s;
}

/** A poller that runs `fn` every `ms` while the page is visible, until stop(). */
function poller(fn, ms) {
  let timer = null;
  let stopped = false;
  let running = false;
  let again = false;
  const tick = async () => {
    timer = null;
    if (stopped) return;
    if (document.hidden) return; // resumed by visibilitychange
    running = true;
    try { await fn(); } finally { running = false; }
    if (!stopped && !document.hidden && timer === null) timer = setTimeout(tick, again ? 0 : ms);
    again = false;
  };
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden && !stopped && !running && timer === null) tick();
  });
  return {
    now() {
      if (running) again = true;
      if (stopped || running) return;
      if (timer !== null) { clearTimeout(timer); timer = null; }
      tick();
    },
    stop() { stopped = true; if (timer !== null) clearTimeout(timer); },
    start() { tick(); },
  };
}

function imageUrl(id, path) {
  const name = String(path).split('/').pop();
  return '/episodes/' + encodeURIComponent(id) + '/images/' + encodeURIComponent(name);
}

/** An <img> that turns into a "screenshot not kept" placeholder on 404. */
function screenshot(id, path, cls) {
  const img = el('img', { class: cls, src: imageUrl(id, path), alt: 'screenshot ' + path });
  img.addEventListener('error', () => {
    img.replaceWith(el('div', { class: cls + ' missing', text: 'screenshot not kept' }));
  }, { once: true });
  return img;
}

// ---------- index page ----------

function indexPage() {
  const tbody = document.getElementById('episodes');
  const filter = document.getElementById('filter');
  const envFilter = document.getElementById('env-filter');
  const form = document.getElementById('new-episode');
  const newEnv = document.getElementById('new-env');
  let last = null;
  let summaryKey = '';
  let envsKey = '';
  let evalsKey = '';
  let ticks = 0;

  const render = () => {
    if (!last) return;
    const q = filter.value.trim().toLowerCase();
    const env = envFilter.value;
    const rows = [];
    for (const ep of last.episodes || []) {
      if (env && ep.env !== env) continue;
      if (q && ![ep.env, ep.task, ep.id].some((f) => String(f || '').toLowerCase().includes(q))) continue;
      const state = stateOf(ep);
      const href = '/view/' + encodeURIComponent(ep.id);
      const tr = el('tr', { class: 'episode state-' + state, 'data-id': ep.id, 'data-state': state },
        el('td', { class: 'env' }, el('a', { href, text: ep.env })),
        el('td', { class: 'task' }, el('a', { href, text: ep.task, title: ep.id })),
        el('td', { class: 'turn num', text: ep.turn + '/' + ep.max_turns }),
        el('td', { class: 'return num', text: fmt3(ep.return), title: componentsText(ep.reward_components) }),
        el('td', { class: 'state' }, el('span', { class: 'badge ' + state, text: state, title: stateTitle(ep) })),
        el('td', { class: 'age num', text: fmtAge(ageOf(ep)) }));
      tr.addEventListener('click', (e) => {
        if (!(e.target instanceof HTMLAnchorElement)) location.href = href;
      });
      rows.push(tr);
    }
    if (!rows.length) {
      rows.push(el('tr', { class: 'empty' }, el('td', { colspan: 6, text: (last.episodes || []).length ? 'No episode matches the filter.' : 'No episodes yet.' })));
    }
    tbody.replaceChildren(...rows);
    document.getElementById('shown').textContent =
      (last.episodes || []).length + ' shown of ' + (last.total ?? (last.episodes || []).length);
  };

  const renderEnvs = (envs) => {
    const key = envs.join(',');
    if (key === envsKey) return;
    envsKey = key;
    const keep = envFilter.value;
    envFilter.replaceChildren(el('option', { value: '', text: 'all envs' }),
      ...envs.map((e) => el('option', { value: e, text: e })));
    envFilter.value = envs.includes(keep) ? keep : '';
    const keepNew = newEnv.value;
    newEnv.replaceChildren(...envs.map((e) => el('option', { value: e, text: e })));
    if (envs.includes(keepNew)) newEnv.value = keepNew;
    else if (envs.includes('wordle')) newEnv.value = 'wordle';
    loadTasks();
  };

  const poll = poller(async () => {
    try {
      last = await getJson('/episodes?limit=200');
    } catch (e) {
      showMessage(e.message);
      return;
    }
    showMessage('');
    const live = last.source === 'live';
    const src = document.getElementById('source');
    src.textContent = last.source || '?';
    src.className = 'badge source ' + (live ? 'live' : 'recorded');
    form.classList.toggle('hidden', !live);
    renderEnvs(last.envs || []);
    const eps = last.episodes || [];
    document.getElementById('counts').textContent = (last.total ?? eps.length) + ' episodes · ' +
      eps.filter((e) => stateOf(e) === 'running').length + ' running · ' + (last.finished || []).length + ' finished';
    render();
    renderSummary(last.finished || []);
    // A recorded folder may hold eval runs (one still running rewrites its summary).
    if (!live && ticks++ % 5 === 0) loadEvals();
  }, 1000);

  async function loadEvals() {
    let got;
    try {
      got = await getJson('/evals');
    } catch (_) {
      return;
    }
    const runs = got.runs || [];
    const key = JSON.stringify(runs.map((r) => [r.name, (r.episodes || []).length, r.error]));
    if (key === evalsKey) return;
    evalsKey = key;
    document.getElementById('evals').classList.toggle('hidden', !runs.length);
    document.getElementById('eval-runs').replaceChildren(...runs.map(evalRun));
  }

  function renderSummary(finished) {
    const key = finished.length + ':' + (finished.length ? finished[finished.length - 1].id : '');
    if (key === summaryKey) return;
    summaryKey = key;
    const groups = new Map();
    let passed = 0, truncated = 0, aborted = 0;
    for (const f of finished) {
      const k = f.env + '\u0000' + family(f.task);
      if (!groups.has(k)) groups.set(k, { env: f.env, fam: family(f.task), items: [] });
      groups.get(k).items.push(f);
      if (f.passed) passed++;
      if (f.truncated) truncated++;
      if (f.aborted) aborted++;
    }
    const box = document.getElementById('summary');
    const overall = el('p', { class: 'overall', id: 'summary-overall' },
      finished.length + ' finished · ' + passed + ' passed · ' + truncated + ' truncated · ' + aborted + ' aborted');
    if (!finished.length) {
      box.replaceChildren(overall);
      return;
    }
    const rows = [...groups.values()].sort((a, b) => (a.env + a.fam).localeCompare(b.env + b.fam)).map((g) => {
      const n = g.items.length;
      const pass = g.items.filter((f) => f.passed).length;
      const mean = g.items.reduce((s, f) => s + (Number(f.return) || 0), 0) / n;
      return el('tr', { class: 'task-summary', 'data-task': g.fam, 'data-env': g.env },
        el('td', { text: g.env }), el('td', { text: g.fam }),
        el('td', { class: 'num', text: n }),
        el('td', { class: 'num', text: (100 * pass / n).toFixed(0) + '%' }),
        el('td', { class: 'num', text: fmt3(mean) }),
        el('td', {}, sparkline(g.items.slice(-40).map((f) => Number(f.return) || 0))));
    });
    box.replaceChildren(overall, el('table', { class: 'summary' },
      el('thead', {}, el('tr', {}, ['env', 'task family', 'count', 'pass rate', 'mean return', 'recent returns'].map((h) => el('th', { text: h })))),
      el('tbody', {}, rows)));
  }

  async function loadTasks() {
    const list = document.getElementById('new-task-list');
    if (!newEnv.value || form.classList.contains('hidden')) return;
    try {
      const t = await getJson('/tasks?env=' + encodeURIComponent(newEnv.value) + '&split=train&limit=50');
      list.replaceChildren(...(t.tasks || []).map((id) => el('option', { value: id })));
    } catch (_) { list.replaceChildren(); }
  }

  filter.addEventListener('input', render);
  envFilter.addEventListener('change', render);
  newEnv.addEventListener('change', loadTasks);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const status = document.getElementById('new-status');
    const body = { env: newEnv.value };
    const task = document.getElementById('new-task').value.trim();
    const seed = document.getElementById('new-seed').value.trim();
    if (task) body.task = task;
    if (seed) body.seed = Number(seed);
    status.textContent = 'starting…';
    status.className = 'status';
    try {
      const made = await postJson('/episodes', body);
      location.href = '/view/' + encodeURIComponent(made.id);
    } catch (err) {
      status.textContent = err.message;
      status.className = 'status error';
    }
  });
  poll.start();
}

/** One eval run: its settings, its table per family and level (as `mcpgym eval` prints it),
 * and a link to each episode of a row, marked passed or not. */
function evalRun(run) {
  const head = el('h3', { class: 'eval-name', text: run.name });
  if (run.error) {
    return el('div', { class: 'eval-run', 'data-run': run.name }, head,
      el('p', { class: 'status error', text: run.error }));
  }
  const c = run.config || {};
  const episodes = run.episodes || [];
  const about = [c.env, c.policy, c.split && 'split ' + c.split, c.k && 'k=' + c.k,
    c.seed !== undefined && 'seed ' + c.seed, episodes.length + ' episodes'].filter(Boolean).join(' · ');
  const byRow = new Map();
  for (const e of episodes) {
    const k = e.family + '\u0000' + (e.level ?? '-');
    if (!byRow.has(k)) byRow.set(k, []);
    byRow.get(k).push(e);
  }
  const link = (e) => el('a', {
    href: '/view/' + encodeURIComponent(e.episode),
    class: 'eval-episode ' + (e.passed ? 'passed' : 'failed'),
    'data-episode': e.episode,
    title: e.task + ' · seed ' + e.seed + ' · sample ' + e.sample + ' · return ' + fmt3(e.return) +
      (e.error ? ' · ' + e.error : ''),
    text: e.passed ? '\u2713' : '\u2717',
  });
  const pct = (x) => fmt3(x);
  const rows = (run.table || []).map((r) => el('tr', { class: 'eval-row', 'data-family': r.family, 'data-level': r.level },
    el('td', { text: r.family }), el('td', { text: r.level }),
    el('td', { class: 'num', text: r.tasks }), el('td', { class: 'num', text: r.episodes }),
    el('td', { class: 'num pass-1', text: pct(r['pass@1']) }), el('td', { class: 'num pass-k', text: pct(r['pass@k']) }),
    el('td', { class: 'num mean-reward', text: fmt3(r.mean_reward) }),
    el('td', { class: 'num', text: Number(r.mean_turns).toFixed(1) }),
    el('td', { class: 'num', text: r.tokens_in }), el('td', { class: 'num', text: r.tokens_out }),
    el('td', { class: 'num', text: Number(r.mean_wall_s).toFixed(1) }),
    el('td', { class: 'num', text: r.errors }),
    el('td', { class: 'eval-links' }, r.family === 'all' ? [] : (byRow.get(r.family + '\u0000' + r.level) || []).map(link))));
  const cols = ['family', 'level', 'tasks', 'episodes', 'pass@1', 'pass@k', 'mean reward', 'mean turns',
    'tokens in', 'tokens out', 'mean wall s', 'stopped early', 'episodes'];
  return el('div', { class: 'eval-run', 'data-run': run.name }, head, el('p', { class: 'muted eval-config', text: about }),
    el('div', { class: 'table-wrap' }, el('table', { class: 'summary eval-table' },
      el('thead', {}, el('tr', {}, cols.map((h) => el('th', { text: h })))), el('tbody', {}, rows))));
}

/** A small inline SVG line of values (returns), with a zero line when it is in range. */
function sparkline(values) {
  const w = 120, h = 24, pad = 2;
  const s = svg('svg', { class: 'sparkline', width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: 'img' });
  if (!values.length) return s;
  const lo = Math.min(0, ...values), hi = Math.max(1e-9, ...values);
  const x = (i) => pad + (values.length === 1 ? (w - 2 * pad) / 2 : i * (w - 2 * pad) / (values.length - 1));
  const y = (v) => h - pad - (v - lo) * (h - 2 * pad) / (hi - lo || 1);
  if (lo < 0) s.append(svg('line', { class: 'zero', x1: 0, x2: w, y1: y(0), y2: y(0) }));
  s.append(svg('polyline', { points: values.map((v, i) => x(i).toFixed(1) + ',' + y(v).toFixed(1)).join(' ') }));
  const lastV = values[values.length - 1];
  s.append(svg('circle', { cx: x(values.length - 1), cy: y(lastV), r: 2 }));
  const title = svg('title', {});
  title.textContent = values.map(fmt3).join(' ');
  s.append(title);
  return s;
}

// ---------- episode page ----------

async function episodePage() {
  const id = decodeURIComponent(location.pathname.replace(/^\/view\//, '').replace(/\/$/, ''));
  const base = '/episodes/' + encodeURIComponent(id);
  const view = document.getElementById('view');
  const steps = [];
  let lastTurn = 0;
  let status;
  try {
    status = await getStatus(base);
  } catch (e) {
    showMessage(e.message);
    return;
  }
  document.title = 'mcpgym · ' + status.env + ' · ' + status.task;
  // The list route says whether this server plays episodes or shows recordings.
  let live = false;
  try {
    live = (await getJson('/episodes?limit=0')).source === 'live';
  } catch (_) { /* shown as a recording: nothing can be played */ }
  if (live) {
    try {
      const p = await getJson(base + '/prompt');
      if (p.prompt) {
        document.getElementById('prompt').textContent = p.prompt;
        document.getElementById('prompt-box').classList.remove('hidden');
      }
    } catch (_) { /* an environment without a prompt */ }
  }
  const options = status.options || {};
  const ctx = { id, base, live, options, steps, status, poll: null };
  const makers = { wordle: wordleView, jupyter: jupyterView, desktop: desktopView };
  const renderer = (makers[status.env] || genericView)(view, ctx);
  const rewards = rewardsTable();

  const renderHeader = () => {
    const s = ctx.status;
    const state = stateOf(s);
    document.getElementById('title').textContent = s.env + ' · ' + s.task;
    const badge = document.getElementById('state');
    badge.textContent = state + (live ? '' : ' (recorded)');
    badge.className = 'badge ' + state;
    const title = stateTitle(s);
    if (title) badge.title = title; else badge.removeAttribute('title');
    document.body.dataset.state = state;
    const known = new Set(['id', 'env', 'task', 'seed', 'turn', 'max_turns', 'return', 'reward_components',
      'done', 'truncated', 'aborted', 'abort_reason', 'ended', 'options', 'version', 'started', 'live', 'age_s']);
    const facts = [['env', s.env], ['task', s.task], ['seed', s.seed], ['turn', s.turn + '/' + s.max_turns],
      ['return', fmt3(s.return)], ['state', state], ['id', s.id]];
    if (s.aborted && s.abort_reason) facts.push(['abort_reason', s.abort_reason]);
    if (s.started) facts.push(['started', s.started]);
    if (Object.keys(options).length) facts.push(['options', JSON.stringify(options)]);
    for (const [k, v] of Object.entries(s)) if (!known.has(k)) facts.push([k, typeof v === 'string' ? v : JSON.stringify(v)]);
    document.getElementById('facts').replaceChildren(...facts.map(([k, v]) =>
      el('div', { class: 'fact' }, el('dt', { text: k }), el('dd', { 'data-field': k, text: v ?? '' }))));
    const comp = document.getElementById('components');
    const entries = Object.entries(s.reward_components || {});
    comp.replaceChildren(el('span', { class: 'running-return', text: 'return ' + fmt3(s.return) }),
      ...entries.map(([k, v]) => el('span', { class: 'component', 'data-name': k, text: k + ' ' + fmt3(v) })));
    if (renderer.status) renderer.status(s);
  };

  const addSteps = (text) => {
    const added = [];
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      let rec;
      try { rec = JSON.parse(line); } catch (_) { continue; }
      if (rec.record && rec.record !== 'step') continue;
      if (typeof rec.turn !== 'number' || rec.turn <= lastTurn) continue;
      lastTurn = rec.turn;
      steps.push(rec);
      added.push(rec);
    }
    for (const st of added) { rewards.add(st); renderer.add(st); }
    if (added.length && renderer.after) renderer.after();
  };

  const refresh = async () => {
    try {
      const res = await api(base + '/trajectory?after=' + lastTurn);
      addSteps(await res.text());
      if (live) ctx.status = await getStatus(base);
      showMessage('');
    } catch (e) {
      showMessage(e.message);
      if (e.status === 404) ctx.poll && ctx.poll.stop();
      return;
    }
    renderHeader();
    const finished = ctx.status.done || ctx.status.truncated || ctx.status.aborted;
    if (finished || !live) {
      // One last read catches steps written together with the end.
      if (finished && live && ctx.finalRead !== true) { ctx.finalRead = true; return; }
      ctx.poll.stop();
      document.getElementById('play-panel').classList.add('hidden');
    }
  };
  ctx.poll = poller(refresh, 1000);
  renderHeader();
  if (live && !(status.done || status.truncated || status.aborted)) setupPlay(ctx, renderer);
  ctx.poll.start();
}

/** The per-step reward table under the header: turn, tool, reward, components, running return. */
function rewardsTable() {
  const body = el('tbody', {});
  const box = el('details', { class: 'rewards', id: 'rewards' },
    el('summary', { text: 'Step rewards' }),
    el('table', {}, el('thead', {}, el('tr', {}, ['turn', 'tool', 'reward', 'components', 'running return'].map((h) => el('th', { text: h })))), body));
  document.getElementById('header').append(box);
  let running = 0;
  return {
    add(st) {
      running += Number(st.reward) || 0;
      body.append(el('tr', { class: 'step-reward' + (st.reward ? ' nonzero' : ''), 'data-turn': st.turn },
        el('td', { class: 'num', text: st.turn }), el('td', { text: st.tool }),
        el('td', { class: 'num', text: fmt3(st.reward) }),
        el('td', { text: componentsText(st.reward_components) }),
        el('td', { class: 'num', text: fmt3(running) })));
    },
  };
}

function stepFlags(st) {
  const out = [];
  if (st.is_error) out.push(el('span', { class: 'badge error', text: 'error' }));
  if (st.reward) out.push(el('span', { class: 'reward', text: 'reward ' + fmt3(st.reward) + (Object.keys(st.reward_components || {}).length ? ' (' + componentsText(st.reward_components) + ')' : '') }));
  if (st.cut_bytes) out.push(el('span', { class: 'muted', text: st.cut_bytes + ' bytes cut' }));
  if (st.done || st.truncated || st.aborted) out.push(el('span', { class: 'badge ' + stateOf(st), text: stateOf(st) }));
  if (typeof st.latency_ms === 'number') out.push(el('span', { class: 'muted', text: Math.round(st.latency_ms) + ' ms' }));
  return out;
}

// ----- wordle -----

function wordleView(view, ctx) {
  const board = el('div', { id: 'board', class: 'board' });
  const refused = el('ul', { id: 'refused', class: 'refused' });
  const other = el('ul', { id: 'other-steps', class: 'refused' });
  view.append(el('h2', { text: 'Board' }), board, el('h3', { text: 'Refused guesses' }), refused, other);
  let used = 0, total = 6;
  const pad = () => {
    board.querySelectorAll('.board-row.blank').forEach((r) => r.remove());
    for (let i = used; i < total; i++) {
      board.append(el('div', { class: 'board-row blank' }, Array.from({ length: 5 }, () => el('div', { class: 'slot' }))));
    }
  };
  pad();
  return {
    add(st) {
      const s = st.structured || {};
      if (st.tool === 'guess' && !st.is_error && Array.isArray(s.feedback)) {
        const word = String(s.guess || (st.arguments && st.arguments.word) || '').toUpperCase();
        const row = el('div', { class: 'board-row', 'data-turn': st.turn, 'data-guess': word });
        s.feedback.forEach((c, i) => {
          const color = ['green', 'yellow', 'gray'].includes(c) ? c : 'gray';
          const letter = word[i] || '';
          row.append(el('div', { class: 'tile ' + color, 'data-letter': letter, title: c, text: letter }));
        });
        board.querySelectorAll('.board-row.blank').forEach((r) => r.remove());
        board.append(row);
        used += 1;
        if (typeof s.guesses_left === 'number') total = used + s.guesses_left;
        pad();
      } else if (st.tool === 'guess') {
        refused.append(el('li', { class: 'refused-guess', 'data-turn': st.turn },
          el('strong', { text: String((st.arguments && st.arguments.word) || '').toUpperCase() }), ' ',
          el('span', { text: st.observation })));
      } else {
        other.append(el('li', { 'data-turn': st.turn }, el('code', { text: st.tool + ' ' + JSON.stringify(st.arguments || {}) }), ' → ', el('span', { text: st.observation })));
      }
    },
    status(s) {
      const box = document.getElementById('answer');
      if (s.answer) {
        box.textContent = 'Answer: ' + String(s.answer).toUpperCase();
        box.classList.remove('hidden');
      }
    },
  };
}

// ----- jupyter -----

function jupyterView(view, ctx) {
  const nb = el('div', { id: 'notebook', class: 'notebook' });
  view.append(el('h2', { text: 'Notebook' }), nb);
  return {
    add(st) {
      const a = st.arguments || {};
      const source = typeof a.code === 'string' ? a.code
        : typeof a.command === 'string' ? a.command
          : typeof a.answer === 'string' || typeof a.answer === 'number' ? String(a.answer)
            : Object.keys(a).length ? jsonText(a) : '';
      const s = st.structured || {};
      const cell = el('div', { class: 'cell' + (st.is_error ? ' is-error' : ''), 'data-turn': st.turn, 'data-tool': st.tool },
        el('div', { class: 'cell-head' },
          el('span', { class: 'prompt-no', text: s.execution_count ? '[' + s.execution_count + ']' : '[·]', title: 'turn ' + st.turn }),
          el('strong', { text: st.tool }), ...stepFlags(st)),
        source ? el('pre', { class: 'code' + (st.tool === 'execute_shell_command' ? ' shell' : '') , text: source }) : null);
      const out = el('div', { class: 'output' });
      let obs = String(st.observation || '');
      const err = s.error && typeof s.error === 'object' ? s.error : null;
      const ename = err ? (err.name || err.ename || 'Error') + ': ' + (err.value || err.evalue || '') : '';
      if (err) obs = obs.replace(err.traceback || '\u0000', '').replace(ename, '').trim();
      if (obs) out.append(el('pre', { class: 'observation', text: obs }));
      if (err) {
        out.append(el('div', { class: 'traceback' },
          el('div', { class: 'ename', text: ename }), el('pre', { text: err.traceback || '' })));
      }
      for (const img of st.images || []) out.append(screenshot(ctx.id, img, 'output-image'));
      cell.append(out);
      nb.append(cell);
    },
  };
}

// ----- desktop -----

/** What a desktop step did: kind, points (in the action space's units), text caption. */
function desktopAction(st) {
  let a = st.arguments || {};
  if (a.action && typeof a.action === 'object') a = a.action;
  const kind = typeof a.action === 'string' ? a.action : typeof a.type === 'string' && st.tool !== 'type' ? a.type : st.tool;
  const pt = (v) => Array.isArray(v) && v.length >= 2 ? [Number(v[0]), Number(v[1])]
    : v && typeof v === 'object' && 'x' in v ? [Number(v.x), Number(v.y)] : null;
  const points = [];
  if (pt(a.start_coordinate)) points.push(pt(a.start_coordinate));
  if (Array.isArray(a.path)) a.path.forEach((p) => pt(p) && points.push(pt(p)));
  if (pt(a.coordinate)) points.push(pt(a.coordinate));
  if (typeof a.x === 'number' && typeof a.y === 'number') points.push([a.x, a.y]);
  let caption = '';
  if (kind === 'type' && a.text !== undefined) caption = '⌨ ' + a.text;
  else if (['key', 'keypress', 'hold_key'].includes(kind)) {
    const keys = Array.isArray(a.keys) ? a.keys.join('+') : a.keys || a.text || '';
    caption = 'key ' + keys;
  }
  return { kind, points: points.filter((p) => p.every(Number.isFinite)), caption };
}

function desktopView(view, ctx) {
  const space = ctx.options.action_space || '';
  const relative = space === 'qwen3vl';
  const filmstrip = el('div', { id: 'filmstrip', class: 'filmstrip' });
  const frame = el('div', { class: 'player-frame' });
  const player = el('div', { id: 'player', class: 'player' }, frame);
  const btn = (id, text, title) => el('button', { id, type: 'button', text, title });
  const first = btn('first', '|◀ first', 'first step'), prev = btn('prev', '◀ prev', 'previous step (←)');
  const play = btn('play', '▶ play', 'play / pause'), next = btn('next', 'next ▶', 'next step (→)'), lastB = btn('last', 'last ▶|', 'last step');
  const slider = el('input', { id: 'slider', type: 'range', min: 0, max: 0, value: 0 });
  const counter = el('span', { id: 'step-counter', class: 'muted' });
  const details = el('div', { id: 'step-details', class: 'step-details' });
  view.append(el('div', { class: 'controls' }, first, prev, play, next, lastB, slider, counter), player, filmstrip, details);
  let sel = -1;
  let timer = null;
  let current = null; // { img, step }

  const natural = (img) => [img.naturalWidth || 1, img.naturalHeight || 1];

  const drawMarks = () => {
    if (!current || !current.img || !current.img.isConnected) return;
    frame.querySelectorAll('.click-marker, .drag-line, .typed-text').forEach((n) => n.remove());
    const { img, step } = current;
    const [nw, nh] = natural(img);
    const sx = img.clientWidth / (relative ? 1000 : nw), sy = img.clientHeight / (relative ? 1000 : nh);
    const act = desktopAction(step);
    if (act.points.length > 1) {
      const line = svg('svg', { class: 'drag-line', viewBox: `0 0 ${img.clientWidth} ${img.clientHeight}` });
      line.append(svg('polyline', { points: act.points.map(([x, y]) => (x * sx) + ',' + (y * sy)).join(' ') }));
      frame.append(line);
    }
    act.points.forEach(([x, y], i) => {
      const m = el('div', { class: 'click-marker' + (i < act.points.length - 1 ? ' start' : ''), title: act.kind + ' [' + x + ', ' + y + ']' });
      m.style.setProperty('left', (x * sx) + 'px');
      m.style.setProperty('top', (y * sy) + 'px');
      frame.append(m);
    });
    if (act.caption) frame.append(el('div', { class: 'typed-text', text: act.caption }));
  };

  const isLatest = () => sel === ctx.steps.length - 1;
  const canClick = () => ctx.live && ctx.playable && !space && isLatest();

  const show = (i) => {
    if (!ctx.steps.length) return;
    sel = Math.max(0, Math.min(ctx.steps.length - 1, i));
    const st = ctx.steps[sel];
    slider.value = String(sel);
    counter.textContent = 'step ' + (sel + 1) + ' of ' + ctx.steps.length + ' (turn ' + st.turn + ')';
    filmstrip.querySelectorAll('.thumb').forEach((t) => t.classList.toggle('selected', Number(t.dataset.index) === sel));
    const sthumb = filmstrip.querySelector('.thumb.selected');
    if (sthumb) sthumb.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    frame.replaceChildren();
    current = null;
    if (st.images && st.images.length) {
      const img = screenshot(ctx.id, st.images[0], 'player-image');
      current = { img, step: st };
      img.addEventListener('load', drawMarks);
      img.addEventListener('click', (e) => {
        if (!canClick()) return;
        const [nw, nh] = natural(img);
        const x = Math.round(e.offsetX * nw / img.clientWidth), y = Math.round(e.offsetY * nh / img.clientHeight);
        ctx.call('left_click', { coordinate: [x, y] });
      });
      frame.append(img);
      frame.classList.toggle('clickable', canClick());
    } else {
      frame.append(el('div', { class: 'no-image', text: 'no screenshot for this step' }));
    }
    const act = desktopAction(st);
    details.replaceChildren(...[
      el('div', { class: 'step-head' }, el('strong', { text: 'turn ' + st.turn + ' · ' + st.tool }), ...stepFlags(st)),
      el('pre', { class: 'arguments', text: jsonText(st.arguments || {}) }),
      act.caption ? el('div', { class: 'muted', text: act.caption }) : null,
      el('pre', { class: 'observation', text: st.observation || '' })].filter(Boolean));
  };

  const stopPlay = () => { if (timer) clearInterval(timer); timer = null; play.textContent = '▶ play'; };
  first.addEventListener('click', () => { stopPlay(); show(0); });
  prev.addEventListener('click', () => { stopPlay(); show(sel - 1); });
  next.addEventListener('click', () => { stopPlay(); show(sel + 1); });
  lastB.addEventListener('click', () => { stopPlay(); show(ctx.steps.length - 1); });
  slider.addEventListener('input', () => { stopPlay(); show(Number(slider.value)); });
  play.addEventListener('click', () => {
    if (timer) return stopPlay();
    if (isLatest()) show(0);
    play.textContent = '❚❚ pause';
    timer = setInterval(() => { if (isLatest()) stopPlay(); else show(sel + 1); }, 1000);
  });
  window.addEventListener('resize', drawMarks);
  document.addEventListener('keydown', (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement) return;
    if (e.key === 'ArrowLeft') { stopPlay(); show(sel - 1); }
    if (e.key === 'ArrowRight') { stopPlay(); show(sel + 1); }
  });

  return {
    add(st) {
      const index = ctx.steps.indexOf(st);
      const thumb = el('button', { type: 'button', class: 'thumb', 'data-index': index, 'data-turn': st.turn, title: 'turn ' + st.turn + ': ' + st.tool },
        st.images && st.images.length ? screenshot(ctx.id, st.images[0], 'thumb-image') : el('span', { class: 'thumb-text', text: st.tool }),
        el('span', { class: 'thumb-label', text: st.turn + ' ' + st.tool }));
      thumb.addEventListener('click', () => { stopPlay(); show(index); });
      filmstrip.append(thumb);
    },
    after() {
      const wasLatest = sel < 0 || sel === Number(slider.max);
      slider.max = String(Math.max(0, ctx.steps.length - 1));
      if (wasLatest && !timer) show(ctx.steps.length - 1);
      else show(sel);
    },
    refreshClickable() { frame.classList.toggle('clickable', canClick()); },
    space,
  };
}

// ----- generic -----

function genericView(view, ctx) {
  const list = el('ol', { id: 'steps', class: 'steps' });
  view.append(el('h2', { text: 'Steps' }), list);
  return {
    add(st) {
      list.append(el('li', { class: 'step' + (st.is_error ? ' is-error' : ''), 'data-turn': st.turn },
        el('div', { class: 'step-head' }, el('strong', { text: 'turn ' + st.turn + ' · ' + st.tool }), ...stepFlags(st)),
        el('pre', { class: 'arguments', text: jsonText(st.arguments || {}) }),
        el('pre', { class: 'observation', text: st.observation || '' }),
        st.structured ? el('details', {}, el('summary', { text: 'structured' }), el('pre', { text: jsonText(st.structured) })) : null,
        (st.images || []).map((img) => screenshot(ctx.id, img, 'output-image'))));
    },
  };
}

// ----- play it yourself -----

function setupPlay(ctx, renderer) {
  const panel = document.getElementById('play-panel');
  const controls = document.getElementById('play-controls');
  const status = document.getElementById('play-status');
  panel.classList.remove('hidden');
  ctx.playable = true;
  let busy = false;

  ctx.call = async (tool, args) => {
    if (busy) return;
    busy = true;
    panel.classList.add('busy');
    status.className = 'status';
    status.textContent = 'calling ' + tool + '…';
    try {
      const r = await postJson(ctx.base + '/call', { tool, arguments: args });
      const text = (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
      if (r.is_error) {
        status.className = 'status error';
        status.textContent = text || 'the tool refused the call';
      } else {
        status.textContent = tool + ' ok (turn ' + r.turn + ', reward ' + fmt3(r.reward) + ', return ' + fmt3(r.return) + ')' + (r.done ? ' · episode over' : '');
      }
    } catch (e) {
      status.className = 'status error';
      status.textContent = e.message;
    } finally {
      busy = false;
      panel.classList.remove('busy');
      ctx.poll.now();
    }
  };

  const row = (...children) => el('form', { class: 'play-row', autocomplete: 'off' }, ...children);
  const bind = (form, fn) => form.addEventListener('submit', (e) => { e.preventDefault(); fn(); });

  if (ctx.status.env === 'wordle') {
    const input = el('input', { id: 'guess-input', type: 'text', maxlength: 5, placeholder: 'five letters', autofocus: true });
    const f = row(input, el('button', { id: 'guess-button', type: 'submit', text: 'Guess' }));
    bind(f, () => { const w = input.value.trim(); if (w) { ctx.call('guess', { word: w }); input.value = ''; } });
    controls.append(f);
  } else if (ctx.status.env === 'jupyter') {
    const code = el('textarea', { id: 'code-input', rows: 6, placeholder: 'Python code (Ctrl+Enter runs)', spellcheck: 'false' });
    const f = row(code, el('button', { id: 'run-button', type: 'submit', text: 'Run cell' }));
    bind(f, () => { if (code.value.trim()) ctx.call('add_and_execute_code_cell', { code: code.value }); });
    code.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); f.requestSubmit(); } });
    controls.append(f);
  } else if (ctx.status.env === 'desktop') {
    const typeIn = el('input', { id: 'type-input', type: 'text', placeholder: 'text to type' });
    const keyIn = el('input', { id: 'key-input', type: 'text', placeholder: 'key, e.g. ctrl+s' });
    const f1 = row(typeIn, el('button', { id: 'type-button', type: 'submit', text: 'Type' }));
    const f2 = row(keyIn, el('button', { id: 'key-button', type: 'submit', text: 'Key' }));
    bind(f1, () => { if (typeIn.value) { ctx.call('type', { text: typeIn.value }); typeIn.value = ''; } });
    bind(f2, () => { if (keyIn.value.trim()) { ctx.call('key', { text: keyIn.value.trim() }); keyIn.value = ''; } });
    const shot = el('button', { id: 'screenshot-button', type: 'button', text: 'Screenshot' });
    shot.addEventListener('click', () => ctx.call('screenshot', {}));
    const note = renderer.space
      ? el('p', { class: 'note', text: 'Click-to-play is off: this episode uses the "' + renderer.space + '" action space.' })
      : el('p', { class: 'note', text: 'Click on the latest screenshot to left-click there.' });
    controls.append(note, f1, f2, el('div', { class: 'play-row' }, shot));
    if (renderer.refreshClickable) renderer.refreshClickable();
  } else {
    const select = el('select', { id: 'tool-select' });
    const args = el('textarea', { id: 'args-input', rows: 4, spellcheck: 'false', text: '{}' });
    const desc = el('p', { class: 'note' });
    const f = row(select, args, el('button', { id: 'call-button', type: 'submit', text: 'Call' }));
    controls.append(desc, f);
    let tools = [];
    const describe = () => {
      const t = tools.find((x) => x.name === select.value);
      desc.textContent = t ? t.description || '' : '';
      const props = (t && t.inputSchema && t.inputSchema.properties) || {};
      args.placeholder = JSON.stringify(Object.fromEntries(Object.keys(props).map((k) => [k, props[k].type || '…'])));
    };
    select.addEventListener('change', describe);
    getJson('/tools?env=' + encodeURIComponent(ctx.status.env)).then((r) => {
      tools = r.tools || [];
      select.replaceChildren(...tools.map((t) => el('option', { value: t.name, text: t.name })));
      describe();
    }).catch((e) => { status.className = 'status error'; status.textContent = e.message; });
    bind(f, () => {
      let parsed;
      try { parsed = args.value.trim() ? JSON.parse(args.value) : {}; } catch (e) {
        status.className = 'status error';
        status.textContent = 'The arguments are not JSON: ' + e.message;
        return;
      }
      ctx.call(select.value, parsed);
    });
  }
}

// ---------- dispatch ----------

function main() {
  const page = document.body.dataset.page;
  if (page === 'index') indexPage();
  else if (page === 'episode') episodePage();
}
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', main);
else main();
