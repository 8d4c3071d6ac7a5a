// The relay-mesh operator console: a small ES module over the gateway's public REST and SSE
// API, served by the gateway itself. Everything agents or people wrote is put into the page as
// text (never as HTML), so nothing an agent prints can run script here; the server's
// Content-Security-Policy allows no inline script either.

const API = '/api/v1';
const main = document.getElementById('main');
let me = null; // {role, workspace, keyId?}
let page = null; // the current page's cleanup (open streams)

// ---- helpers ------------------------------------------------------------------------------

/** An element: h('button', {onclick, class}, 'text', child…). Strings become text nodes. */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function csrf() {
  const c = document.cookie.split('; ').find((x) => x.startsWith('relay_csrf='));
  return c ? decodeURIComponent(c.slice('relay_csrf='.length)) : '';
}

class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code;
  }
}

/** A call to the gateway, signed in by the session cookie; state changes carry the CSRF token. */
async function call(method, path, body) {
  const headers = {};
  if (method !== 'GET') headers['X-CSRF-Token'] = csrf();
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path.startsWith('/console') ? path : API + path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (res.status === 401 && !path.startsWith('/console/signin')) {
    me = null;
    go('#/signin');
  }
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

function toast(text, bad = false) {
  const t = document.getElementById('toast');
  t.textContent = text;
  t.className = bad ? 'bad show' : 'show';
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => (t.className = ''), 4000);
}

const may = {
  operate: () => me && (me.role === 'operator' || me.role === 'admin'),
};

function time(ms) {
  return ms ? new Date(ms).toLocaleString() : '';
}

function go(hash) {
  if (location.hash !== hash) location.hash = hash;
  else render();
}

/**
 * Server-sent events read with fetch (the session cookie rides along; no key in a URL). After a
 * drop it reconnects with `Last-Event-ID` = the last seq it saw and skips anything at or below
 * it, so the page sees every event once, in order.
 */
class Stream {
  constructor(url, onEvent, onState = () => {}) {
    this.url = url;
    this.onEvent = onEvent;
    this.onState = onState;
    this.last = 0;
    /** Every seq received, in order (the tests compare it with the log). */
    this.seen = [];
    this.ctl = null;
    this.stopped = false;
  }

  start() {
    this.loop();
    return this;
  }

  stop() {
    this.stopped = true;
    this.ctl?.abort();
  }

  /** Cuts the connection as a network drop would (the console's tests use it). */
  drop() {
    this.ctl?.abort();
  }

  async loop() {
    let wait = 250;
    while (!this.stopped) {
      this.ctl = new AbortController();
      try {
        const headers = this.last ? { 'Last-Event-ID': String(this.last) } : {};
        const res = await fetch(this.url, { headers, signal: this.ctl.signal, credentials: 'same-origin' });
        if (res.status === 401) {
          go('#/signin');
          return;
        }
        if (!res.ok || !res.body) throw new Error(`stream: HTTP ${res.status}`);
        this.onState('live');
        wait = 250;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let cut;
          while ((cut = buf.indexOf('\n\n')) >= 0) {
            this.frame(buf.slice(0, cut));
            buf = buf.slice(cut + 2);
          }
        }
      } catch {
        // dropped: reconnect below
      }
      if (this.stopped) return;
      this.onState('reconnecting');
      await new Promise((r) => setTimeout(r, wait));
      wait = Math.min(wait * 2, 5000);
    }
  }

  frame(text) {
    let id = null;
    let data = '';
    for (const line of text.split('\n')) {
      if (line.startsWith('id:')) id = Number(line.slice(3).trim());
      else if (line.startsWith('data:')) data += line.slice(5).trim();
    }
    if (!data || id === null || id <= this.last) return;
    this.last = id;
    this.seen.push(id);
    try {
      this.onEvent(JSON.parse(data));
    } catch (e) {
      console.error('bad event', e);
    }
  }
}

// ---- pages --------------------------------------------------------------------------------

function signinPage() {
  const key = h('input', { id: 'key', type: 'password', autocomplete: 'off', required: true, 'aria-label': 'API key' });
  const error = h('p', { class: 'error', role: 'alert' });
  const form = h(
    'form',
    {
      class: 'card signin',
      onsubmit: async (e) => {
        e.preventDefault();
        error.textContent = '';
        try {
          me = await call('POST', '/console/signin', { key: key.value });
          key.value = '';
          showWho();
          go('#/sessions');
        } catch (err) {
          error.textContent = err.status === 401 ? 'That key is not valid.' : err.message;
        }
      },
    },
    h('h1', {}, 'Sign in'),
    h('label', { for: 'key' }, 'API key'),
    key,
    h('button', { type: 'submit' }, 'Sign in'),
    error,
    h('p', { class: 'muted' }, 'The key stays in an HttpOnly cookie of this site; sign out to forget it.'),
  );
  main.replaceChildren(form);
  key.focus();
}

async function sessionsPage(params) {
  const status = params.get('status') || 'active';
  const q = params.get('q') || '';
  const filter = h(
    'select',
    {
      id: 'status',
      'aria-label': 'Status',
      onchange: (e) => go(`#/sessions?status=${e.target.value}&q=${encodeURIComponent(q)}`),
    },
    ...['active', 'closed', 'archived', 'all'].map((s) => h('option', { value: s, selected: s === status }, s)),
  );
  const search = h('input', { id: 'search', type: 'search', value: q, placeholder: 'Search messages', 'aria-label': 'Search' });
  const form = h(
    'form',
    {
      class: 'toolbar',
      onsubmit: (e) => {
        e.preventDefault();
        go(`#/sessions?status=${status}&q=${encodeURIComponent(search.value)}`);
      },
    },
    filter,
    search,
    h('button', { type: 'submit' }, 'Search'),
  );
  const counts = h('p', { class: 'counts muted', id: 'counts' });
  const list = h('table', { class: 'list', id: 'sessions' });
  main.replaceChildren(h('h1', {}, 'Sessions'), form, counts, list);
  const [c, page] = await Promise.all([
    call('GET', '/sessions/counts'),
    q ? call('GET', `/sessions/search?q=${encodeURIComponent(q)}&status=${status}`) : call('GET', `/sessions?status=${status}&limit=200`),
  ]);
  counts.textContent = `${c.active} active · ${c.closed} closed · ${c.archived} archived · ${c.all} in all`;
  list.replaceChildren(
    h('thead', {}, h('tr', {}, h('th', {}, 'Session'), h('th', {}, 'Status'), h('th', {}, 'Agents'), h('th', {}, 'Last activity'))),
    h(
      'tbody',
      {},
      page.sessions.map((s) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/sessions/${encodeURIComponent(s.sessionId)}` }, s.title || s.sessionId)),
          h('td', {}, h('span', { class: `pill ${s.status}` }, s.status)),
          h('td', {}, s.agents.map((a) => '@' + (a.handle || a.agentId)).join(' ')),
          h('td', {}, time(s.lastActivityAt)),
        ),
      ),
    ),
  );
  if (!page.sessions.length) list.append(h('caption', {}, 'No sessions.'));
}

/** One line of the timeline for an event; null for events it does not show. */
function describe(e, names = new Map()) {
  const p = e.payload || {};
  const who = names.get(e.agentId) || (e.agentName ? '@' + e.agentName : e.agentId ? e.agentId.slice(0, 8) : '');
  const t = e.type.replace(/^session\./, '');
  switch (t) {
    case 'user_message.sent':
      return ['message', `→ ${typeof p.content === 'string' ? p.content : JSON.stringify(p.content)}`];
    case 'message.received':
      return p.reason ? ['message', `${who} got a relay message (${p.reason})`] : null;
    case 'created':
      return ['status', 'session created'];
    case 'started':
      return ['status', `${who} started`];
    case 'closed':
    case 'archived':
    case 'resumed':
      return ['status', `session ${t}${p.reason ? ': ' + p.reason : ''}`];
    case 'delivery.created':
      return ['delivery', `delivery ${p.deliveryId?.slice(0, 8) ?? ''} created (${p.mode})`];
    case 'item.started':
    case 'item.completed':
    case 'file.operation':
      return null;
    case 'turn.started':
      return ['mark', `turn ${p.turnNumber} started`];
    case 'turn.completed':
      return ['mark', `turn ${p.turnNumber} ${p.success ? 'completed' : 'failed'}${p.error ? ': ' + p.error : ''}`];
    case 'tool.called':
      return ['tool', `${who} calls ${p.toolName || p.tool || 'a tool'} ${p.input ? JSON.stringify(p.input) : ''}`];
    case 'tool.completed':
      return ['tool', `${who} tool done ${p.output ? String(p.output).slice(0, 400) : ''}`];
    case 'command.started':
      return ['tool', `${who} $ ${p.command}`];
    case 'command.completed':
      return ['tool', `${who} command exited ${p.exitCode ?? ''}`];
    case 'file.changed':
      return ['file', `${who} ${p.kind || p.change || 'changed'} ${p.path}`];
    case 'permission.requested':
      return ['permission', `${who} asks to run ${p.tool}${p.command ? ': ' + p.command : ''} (${p.riskLevel} risk)`];
    case 'permission.resolved':
      return ['permission', `${p.tool} ${p.decision} by ${p.decidedBy}${p.reason ? ': ' + p.reason : ''}`];
    case 'question.requested':
      return ['permission', `${who} asks: ${p.question}`];
    case 'question.resolved':
      return ['permission', `answered: ${p.answer}`];
    case 'tokens.used':
    case 'usage.updated':
      return ['usage', `${who} tokens: ${p.inputTokens ?? 0} in, ${p.outputTokens ?? 0} out${p.model ? ' (' + p.model + ')' : ''}`];
    case 'delivery.accepted':
    case 'delivery.delivered':
    case 'delivery.deferred':
    case 'delivery.failed':
      return ['delivery', `delivery ${p.deliveryId?.slice(0, 8) ?? ''} ${t.split('.')[1]}${p.reason ? ': ' + p.reason : ''}`];
    case 'status.changed':
      return ['status', `${who} ${p.previousStatus ?? '…'} → ${p.status}`];
    case 'terminal.output':
      return ['output', `${who} ${p.text}`];
    case 'agent.added':
      return ['status', `${who || p.agentId} joined`];
    case 'agent.removed':
      return ['status', `${p.agentId} left`];
    case 'terminal.screen':
      return null;
    default:
      return ['other', `${t} ${JSON.stringify(p).slice(0, 300)}`];
  }
}

async function sessionPage(id) {
  const s = await call('GET', `/sessions/${encodeURIComponent(id)}`);
  const names = new Map(s.agents.map((a) => [a.agentId, '@' + (a.handle || a.agentId.slice(0, 8))]));
  const state = h('span', { class: 'muted', id: 'stream-state' }, 'connecting…');
  const timeline = h('ol', { class: 'timeline', id: 'timeline', 'aria-live': 'polite' });
  let turn = h('li', { class: 'turn' }, h('h3', {}, 'Before the first turn'), h('ol', {}));
  timeline.append(turn);
  const controls = [];
  if (may.operate()) {
    const text = h('input', { id: 'message', placeholder: 'Message to the agents', 'aria-label': 'Message', required: true });
    const mode = h(
      'select',
      { id: 'mode', 'aria-label': 'Delivery mode' },
      ...['immediate', 'next-message', 'next-tool-call', 'on-idle', 'manual'].map((m) => h('option', { value: m }, m)),
    );
    controls.push(
      h(
        'form',
        {
          class: 'toolbar',
          id: 'send',
          onsubmit: async (e) => {
            e.preventDefault();
            try {
              await call('POST', `/sessions/${encodeURIComponent(id)}/messages`, { message: text.value, mode: mode.value });
              text.value = '';
              toast('Sent.');
            } catch (err) {
              toast(err.message, true);
            }
          },
        },
        text,
        mode,
        h('button', { type: 'submit' }, 'Send'),
      ),
      h(
        'div',
        { class: 'toolbar' },
        h('button', { type: 'button', onclick: () => act('close') }, 'Close'),
        h('button', { type: 'button', onclick: () => act('archive') }, 'Archive'),
        h('button', { type: 'button', onclick: () => act('fork') }, 'Fork'),
      ),
    );
  }
  async function act(what) {
    try {
      const r = await call('POST', `/sessions/${encodeURIComponent(id)}/${what}`, {});
      toast(`${what}: done`);
      if (what === 'fork' && r?.sessionId) go(`#/sessions/${encodeURIComponent(r.sessionId)}`);
    } catch (err) {
      toast(err.message, true);
    }
  }
  main.replaceChildren(
    h('h1', {}, s.title || s.sessionId),
    h('p', { class: 'muted' }, `${s.status} · ${s.agents.map((a) => '@' + (a.handle || a.agentId)).join(' ')} · `, state),
    ...controls,
    timeline,
  );
  let pending = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    for (const e of pending) {
      const t = e.type.replace(/^session\./, '');
      if (t === 'turn.started') {
        turn = h('li', { class: 'turn' }, h('h3', {}, `Turn ${e.payload.turnNumber}`), h('ol', {}));
        timeline.append(turn);
      }
      if (e.type === 'session.agent.added' && e.payload?.agentId && !names.has(e.payload.agentId)) {
        names.set(e.payload.agentId, e.payload.agentId.slice(0, 8));
      }
      const line = describe(e, names);
      if (!line) continue;
      turn.lastChild.append(
        h('li', { class: `ev ${line[0]}`, dataset: { seq: e.seq, type: e.type } }, h('time', {}, new Date(e.ts).toLocaleTimeString()), ' ', line[1]),
      );
    }
    pending = [];
  };
  // Rendered a frame at a time: a burst of events is one layout, not hundreds.
  const stream = new Stream(`${API}/sessions/${encodeURIComponent(id)}/events/sse?offset=0`, (e) => {
    pending.push(e);
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(flush);
    }
  }, (st) => (state.textContent = st)).start();
  window.relayStream = stream;
  return () => stream.stop();
}

async function inboxPage() {
  const list = h('div', { id: 'inbox' });
  main.replaceChildren(h('h1', {}, 'Inbox'), list);
  // Loads overlap (a stream event during a load): only the latest one's answer is shown.
  let generation = 0;
  const load = async () => {
    const mine = ++generation;
    const [perms, questions] = await Promise.all([call('GET', '/permissions?status=pending'), call('GET', '/questions?status=pending')]);
    if (mine !== generation) return;
    const items = [
      ...perms.permissions.map((p) => ({ kind: 'permission', at: p.requestedAt, p })),
      ...questions.questions.map((q) => ({ kind: 'question', at: q.askedAt, q })),
    ].sort((a, b) => b.at - a.at);
    setCount(items.length);
    list.replaceChildren(...(items.length ? items.map(card) : [h('p', { class: 'muted', id: 'inbox-empty' }, 'Nothing waits for you.')]));
    for (const it of items) if (it.kind === 'permission') context(it.p);
  };
  const contexts = new Map();
  const context = async (p) => {
    const pre = contexts.get(p.requestId);
    if (!pre) return;
    try {
      const out = await call('GET', `/agents/${encodeURIComponent(p.agentId)}/output?limit=12`);
      pre.textContent = out.rows.map((r) => r.text).join('\n');
    } catch {
      pre.textContent = '';
    }
  };
  const card = (it) => {
    if (it.kind === 'permission') {
      const p = it.p;
      const reason = h('input', { placeholder: 'Reason (optional)', 'aria-label': 'Reason' });
      const decide = (how) => async () => {
        try {
          await call('POST', `/agents/${encodeURIComponent(p.agentId)}/permissions/${encodeURIComponent(p.requestId)}/${how}`, reason.value ? { reason: reason.value } : {});
          toast(`${how === 'approve' ? 'Approved' : 'Denied'}.`);
          load();
        } catch (err) {
          toast(err.message, true);
        }
      };
      const pre = h('pre', { class: 'output', 'aria-label': 'Recent output' });
      contexts.set(p.requestId, pre);
      return h(
        'article',
        { class: `card risk-${p.riskLevel}`, dataset: { request: p.requestId } },
        h('h2', {}, `${p.tool}: `, h('code', {}, p.command || p.filePath || p.description || '')),
        h('p', { class: 'muted' }, `${p.riskLevel} risk · agent ${p.agentId} · session `, h('a', { href: `#/sessions/${encodeURIComponent(p.sessionId)}` }, p.sessionId), ` · ${time(p.requestedAt)}`),
        p.description ? h('p', {}, p.description) : null,
        pre,
        may.operate()
          ? h('div', { class: 'toolbar' }, reason, h('button', { type: 'button', class: 'approve', onclick: decide('approve') }, 'Approve'), h('button', { type: 'button', class: 'deny', onclick: decide('deny') }, 'Deny'))
          : null,
      );
    }
    const q = it.q;
    const answer = h('input', { placeholder: 'Your answer', 'aria-label': 'Answer', list: `opts-${q.questionId}` });
    return h(
      'article',
      { class: 'card question', dataset: { question: q.questionId } },
      h('h2', {}, q.question),
      h('p', { class: 'muted' }, `agent ${q.agentId} · ${time(q.askedAt)}`),
      h('datalist', { id: `opts-${q.questionId}` }, ...(q.options || []).map((o) => h('option', { value: o }))),
      may.operate()
        ? h(
            'form',
            {
              class: 'toolbar',
              onsubmit: async (e) => {
                e.preventDefault();
                try {
                  await call('POST', `/agents/${encodeURIComponent(q.agentId)}/questions/${encodeURIComponent(q.questionId)}/answer`, { answer: answer.value });
                  toast('Answered.');
                  load();
                } catch (err) {
                  toast(err.message, true);
                }
              },
            },
            answer,
            h('button', { type: 'submit' }, 'Answer'),
          )
        : null,
    );
  };
  await load();
  // Another operator's decision (or a new request) reloads the list. A live stream starts at
  // the moment it connects, so the list is loaded again then: a request made between the first
  // load and the connection (or during a reconnect) is not missed.
  const types = 'permission.requested,permission.resolved,question.requested,question.resolved';
  const reload = () => load().catch(() => {});
  const stream = new Stream(`${API}/events/sse?types=${types}`, reload, (st) => st === 'live' && reload()).start();
  return () => stream.stop();
}

async function agentsPage() {
  const list = await call('GET', '/agents');
  const table = h(
    'table',
    { class: 'list', id: 'agents' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Agent'), h('th', {}, 'Status'), h('th', {}, 'CLI'), h('th', {}, 'Session'), h('th', {}, 'Can'))),
    h(
      'tbody',
      {},
      list.agents.map((a) =>
        h(
          'tr',
          {},
          h('td', {}, h('a', { href: `#/agents/${encodeURIComponent(a.agentId)}` }, '@' + (a.handle || a.agentId))),
          h('td', {}, h('span', { class: `pill ${a.status}` }, a.status)),
          h('td', {}, a.adapterName || ''),
          h('td', {}, h('a', { href: `#/sessions/${encodeURIComponent(a.sessionId)}` }, a.sessionId.slice(0, 8))),
          h('td', {}, capabilitiesText(a.capabilities)),
        ),
      ),
    ),
  );
  main.replaceChildren(h('h1', {}, 'Agents'), table);
  if (!list.agents.length) table.append(h('caption', {}, 'No live agents.'));
}

function capabilitiesText(c) {
  if (!c) return '';
  const can = [];
  if (c.messaging?.receive) can.push('receive');
  if (c.messaging?.send) can.push('send');
  if (c.actions?.invoke) can.push('invoke');
  if (c.actions?.expose) can.push('expose');
  return `${can.join(', ')} · modes: ${(c.delivery?.modes || []).join(', ')}`;
}

async function agentPage(id) {
  const a = await call('GET', `/agents/${encodeURIComponent(id)}`);
  const { Terminal } = await import('/console/vendor/xterm.mjs');
  const status = h('span', { class: `pill ${a.status}`, id: 'agent-status' }, a.status);
  const screen = h('div', { class: 'terminal', id: 'terminal', role: 'region', 'aria-label': 'Terminal' });
  const deliveries = h('table', { class: 'list', id: 'deliveries' });
  const controls = [];
  const act = async (what, body = {}) => {
    try {
      await call('POST', `/agents/${encodeURIComponent(a.agentId)}/${what}`, body);
      toast(`${what}: done`);
      loadDeliveries();
    } catch (err) {
      toast(err.message, true);
    }
  };
  if (may.operate()) {
    const keys = h('input', { id: 'keys', placeholder: 'Type into the terminal', 'aria-label': 'Terminal input', autocomplete: 'off' });
    const enter = h('input', { id: 'enter', type: 'checkbox', checked: true });
    controls.push(
      h(
        'form',
        {
          class: 'toolbar',
          id: 'input',
          onsubmit: (e) => {
            e.preventDefault();
            act('input', { data: keys.value + (enter.checked ? '\r' : '') });
            keys.value = '';
          },
        },
        keys,
        h('label', {}, enter, ' Enter'),
        h('button', { type: 'submit' }, 'Send keys'),
      ),
      h(
        'div',
        { class: 'toolbar' },
        ...['pause', 'resume', 'flush', 'stop'].map((w) => h('button', { type: 'button', class: w === 'stop' ? 'deny' : '', onclick: () => act(w) }, w[0].toUpperCase() + w.slice(1))),
      ),
    );
  }
  main.replaceChildren(
    h('h1', {}, '@' + (a.handle || a.agentId), ' ', status),
    h('p', { class: 'muted' }, `${a.adapterName || ''} · session `, h('a', { href: `#/sessions/${encodeURIComponent(a.sessionId)}` }, a.sessionId), ` · ${capabilitiesText(a.capabilities)}`),
    ...controls,
    screen,
    h('h2', {}, 'Deliveries'),
    deliveries,
  );
  const term = new Terminal({ rows: 30, cols: 100, disableStdin: true, convertEol: true, scrollback: 0, fontSize: 13 });
  term.open(screen);
  let latest = null;
  let scheduled = false;
  const paint = () => {
    scheduled = false;
    if (latest === null) return;
    term.reset();
    term.write(latest);
    latest = null;
  };
  const stream = new Stream(`${API}/agents/${encodeURIComponent(a.agentId)}/events/sse?offset=0&types=terminal.screen,status.changed`, (e) => {
    if (e.type === 'status.changed') {
      status.textContent = e.payload.status;
      status.className = `pill ${e.payload.status}`;
      return;
    }
    // Each screen is the whole terminal: only the newest of a frame is drawn.
    latest = e.payload.text;
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(paint);
    }
  }).start();
  window.relayStream = stream;
  async function loadDeliveries() {
    const d = await call('GET', `/deliveries?agentId=${encodeURIComponent(a.agentId)}&limit=50`);
    deliveries.replaceChildren(
      h('thead', {}, h('tr', {}, h('th', {}, 'Delivery'), h('th', {}, 'Mode'), h('th', {}, 'Status'), h('th', {}, 'Attempts'), h('th', {}, 'Updated'), h('th', {}, ''))),
      h(
        'tbody',
        {},
        d.deliveries.map((x) =>
          h(
            'tr',
            { dataset: { delivery: x.deliveryId } },
            h('td', {}, x.deliveryId.slice(0, 8)),
            h('td', {}, x.mode),
            h('td', {}, h('span', { class: `pill ${x.status}` }, x.status), x.reason ? ` ${x.reason}` : ''),
            h('td', {}, String(x.attempts)),
            h('td', {}, time(x.updatedAt)),
            h(
              'td',
              {},
              may.operate() && x.status === 'failed' ? h('button', { type: 'button', onclick: () => deliveryAct(x.deliveryId, 'retry') }, 'Retry') : null,
              may.operate() && ['pending', 'deferred', 'accepted'].includes(x.status) ? h('button', { type: 'button', class: 'deny', onclick: () => deliveryAct(x.deliveryId, 'cancel') }, 'Cancel') : null,
            ),
          ),
        ),
      ),
    );
  }
  async function deliveryAct(deliveryId, what) {
    try {
      await call('POST', `/deliveries/${encodeURIComponent(deliveryId)}/${what}`, {});
      loadDeliveries();
    } catch (err) {
      toast(err.message, true);
    }
  }
  await loadDeliveries();
  const refresh = setInterval(() => loadDeliveries().catch(() => {}), 3000);
  return () => {
    stream.stop();
    clearInterval(refresh);
    term.dispose();
  };
}

/** Channels, DMs and threads as they are exchanged, then the actions and proposals in play. */
async function channelsPage(params) {
  const only = params.get('c') || '';
  const [channels, actions, proposals] = await Promise.all([
    call('GET', '/channels'),
    call('GET', '/actions'),
    call('GET', '/consensus?status=open'),
  ]);
  const pick = h(
    'select',
    { id: 'conversation', 'aria-label': 'Conversation', onchange: (e) => go(`#/channels?c=${encodeURIComponent(e.target.value)}`) },
    h('option', { value: '' }, 'every conversation'),
    ...channels.channels.map((c) => h('option', { value: `#${c.name}`, selected: only === `#${c.name}` }, `#${c.name} (${c.members})`)),
  );
  const feed = h('ol', { class: 'timeline', id: 'feed', 'aria-live': 'polite' });
  const roots = new Map();
  main.replaceChildren(
    h('h1', {}, 'Channels'),
    h('div', { class: 'toolbar' }, pick),
    feed,
    h('h2', {}, 'Actions'),
    h(
      'table',
      { class: 'list', id: 'actions' },
      h('tbody', {}, actions.actions.map((a) => h('tr', {}, h('td', {}, '@' + (a.handle || a.agentId)), h('td', {}, a.name), h('td', {}, a.description || ''), h('td', {}, a.availableTo.join(', '))))),
    ),
    h('h2', {}, 'Open proposals'),
    h(
      'div',
      { id: 'proposals' },
      proposals.proposals.map((p) =>
        h('article', { class: 'card' }, h('h2', {}, p.question), h('p', { class: 'muted' }, `${p.proposer} → ${p.to} · quorum ${p.quorum} of ${p.voters.length}`), h('p', {}, Object.entries(p.tally).map(([o, n]) => `${o}: ${n}`).join(' · '))),
      ),
    ),
  );
  const stream = new Stream(`${API}/events/sse?types=message.exchanged&offset=0`, (e) => {
    const m = e.payload;
    if (only && m.conversation !== only) return;
    const line = h('li', { class: 'ev message', dataset: { message: m.messageId } }, h('time', {}, new Date(e.ts).toLocaleTimeString()), ' ', h('strong', {}, m.from), ` → ${m.to}: `, m.body, m.failed?.length ? h('span', { class: 'error' }, ` (failed for ${m.failed.join(', ')})`) : null);
    const root = m.thread && roots.get(m.thread);
    if (root) {
      root.lastChild.append(line);
      return;
    }
    const item = h('li', { class: 'turn' }, line, h('ol', { class: 'replies' }));
    roots.set(m.messageId, item);
    feed.append(item);
  }).start();
  return () => stream.stop();
}

/** A horizontal bar chart (SVG): one labelled bar per [label, value]. */
function bars(rows, unit, id) {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  const max = Math.max(1, ...rows.map((r) => r[1]));
  const height = 24 * rows.length + 4;
  svg.setAttribute('viewBox', `0 0 600 ${height}`);
  svg.setAttribute('class', 'chart');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', `${id}: ${rows.map((r) => `${r[0]} ${r[1]} ${unit}`).join(', ')}`);
  svg.id = id;
  rows.forEach(([label, value], i) => {
    const y = 4 + i * 24;
    const text = document.createElementNS(ns, 'text');
    text.setAttribute('x', '0');
    text.setAttribute('y', String(y + 14));
    text.textContent = label.length > 24 ? label.slice(0, 23) + '…' : label;
    const bar = document.createElementNS(ns, 'rect');
    bar.setAttribute('x', '200');
    bar.setAttribute('y', String(y));
    bar.setAttribute('height', '18');
    bar.setAttribute('width', String(Math.max(1, (value / max) * 300)));
    const n = document.createElementNS(ns, 'text');
    n.setAttribute('x', String(206 + (value / max) * 300));
    n.setAttribute('y', String(y + 14));
    n.textContent = `${value.toLocaleString('en-US')} ${unit}`;
    svg.append(text, bar, n);
  });
  return svg;
}

async function costsPage(params) {
  const hours = Number(params.get('hours') || 24);
  const until = Date.now();
  const since = until - hours * 3600_000;
  const range = h(
    'select',
    { id: 'range', 'aria-label': 'Period', onchange: (e) => go(`#/costs?hours=${e.target.value}`) },
    ...[[1, 'last hour'], [24, 'last day'], [168, 'last week']].map(([v, l]) => h('option', { value: v, selected: v === hours }, l)),
  );
  main.replaceChildren(h('h1', {}, 'Costs'), h('div', { class: 'toolbar' }, range), h('p', { class: 'muted' }, 'Loading…'));
  const steps = 12;
  const width = (until - since) / steps;
  const [report, ...buckets] = await Promise.all([
    call('GET', `/costs?since=${Math.floor(since)}&until=${until}`),
    ...Array.from({ length: steps }, (_, i) => call('GET', `/costs?since=${Math.floor(since + i * width)}&until=${Math.floor(since + (i + 1) * width)}`)),
  ]);
  const sessions = Object.entries(report.bySession).sort((a, b) => b[1].totalTokens - a[1].totalTokens).slice(0, 10).map(([id]) => id);
  const [budgets, windows] = await Promise.all([
    call('GET', '/costs/budgets'),
    Promise.all(sessions.map((id) => call('GET', `/sessions/${encodeURIComponent(id)}/context-window`).then((r) => [id, r.state]))),
  ]);
  const t = report.total;
  const sorted = (m) => Object.entries(m).map(([k, v]) => [k, v.totalTokens]).sort((a, b) => b[1] - a[1]).slice(0, 10);
  const fmt = (ms) => new Date(ms).toLocaleString([], hours > 24 ? { month: 'short', day: 'numeric', hour: '2-digit' } : { hour: '2-digit', minute: '2-digit' });
  main.replaceChildren(
    h('h1', {}, 'Costs'),
    h('div', { class: 'toolbar' }, range),
    h('p', { id: 'cost-total' }, `${t.totalTokens.toLocaleString('en-US')} tokens (${t.inputTokens.toLocaleString('en-US')} in, ${t.outputTokens.toLocaleString('en-US')} out) · $${t.estimatedCostUsd.toFixed(4)} estimated`),
    ...(report.unpricedModels?.length ? [h('p', { class: 'muted' }, `No price for: ${report.unpricedModels.join(', ')}`)] : []),
    h('h2', {}, 'Tokens over time'),
    bars(buckets.map((b, i) => [fmt(since + i * width), b.total.totalTokens]), 'tokens', 'chart-time'),
    h('h2', {}, 'By model'),
    bars(sorted(report.byModel), 'tokens', 'chart-model'),
    h('h2', {}, 'By agent'),
    bars(sorted(report.byAgent), 'tokens', 'chart-agent'),
    h('h2', {}, 'By session'),
    bars(sorted(report.bySession), 'tokens', 'chart-session'),
    h('h2', {}, 'Budgets'),
    budgetsTable(budgets.budgets),
    h('h2', {}, 'Context windows'),
    contextTable(windows),
  );
}

/** A share of a limit as a bar people and screen readers can read. */
function gauge(fraction, label, level) {
  const pct = Math.round(fraction * 100);
  return h('span', { class: `gauge ${level}`, role: 'meter', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': Math.min(pct, 100), 'aria-label': label },
    h('span', { style: `width:${Math.min(pct, 100)}%` }), h('b', {}, `${pct}%`));
}

function budgetsTable(budgets) {
  if (!budgets.length) return h('p', { class: 'muted', id: 'budgets' }, 'No budgets are configured ([[costs.budgets]] in the cost aggregator’s configuration).');
  const rows = budgets.flatMap((b) => {
    const limit = `$${b.limitUsd.toFixed(2)} per ${b.id ? `${b.scope} ${b.id}` : b.scope}${b.pause ? ', pauses' : ''}`;
    if (!b.spending.length) return [h('tr', {}, h('td', {}, b.name), h('td', {}, limit), h('td', { class: 'muted' }, 'no spend yet'), h('td', {}), h('td', {}))];
    return b.spending.map((s) => {
      const level = s.exceededAt ? 'critical' : s.fraction >= 0.75 ? 'warn' : 'ok';
      return h('tr', { dataset: { budget: b.name, key: s.key } },
        h('td', {}, b.name), h('td', {}, limit), h('td', {}, h('code', {}, s.key)),
        h('td', {}, `$${s.spentUsd.toFixed(4)}`),
        h('td', {}, gauge(s.fraction, `${b.name} for ${s.key}`, level), s.exceededAt ? h('span', { class: 'error' }, ` crossed ${time(s.exceededAt)}`) : null));
    });
  });
  return h('table', { class: 'list', id: 'budgets' },
    h('thead', {}, h('tr', {}, ...['Budget', 'Limit', 'Spender', 'Spent', 'Used'].map((c) => h('th', { scope: 'col' }, c)))), h('tbody', {}, ...rows));
}

function contextTable(windows) {
  if (!windows.length) return h('p', { class: 'muted', id: 'context-windows' }, 'No session has reported usage in this period.');
  return h('table', { class: 'list', id: 'context-windows' },
    h('thead', {}, h('tr', {}, ...['Session', 'Tokens in context', 'Fill'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...windows.map(([id, st]) => h('tr', { dataset: { session: id } },
      h('td', {}, h('a', { href: `#/sessions/${encodeURIComponent(id)}` }, id)),
      h('td', {}, st ? `${st.currentTokens.toLocaleString('en-US')} of ${st.maxTokens.toLocaleString('en-US')}` : 'unknown'),
      h('td', {}, st ? gauge(st.percentage / 100, `context window of ${id}`, st.level) : '')))));
}

function setCount(n) {
  document.getElementById('inbox-count').textContent = n ? String(n) : '';
  document.title = n ? `(${n}) relay-mesh` : 'relay-mesh';
}

// ---- shell --------------------------------------------------------------------------------

function showWho() {
  const who = document.getElementById('who');
  who.textContent = me ? `${me.role} · ${me.workspace}` : '';
  document.getElementById('signout').hidden = !me;
}

async function render() {
  if (page) {
    page();
    page = null;
  }
  const [path, query] = location.hash.slice(1).split('?');
  const params = new URLSearchParams(query || '');
  const parts = (path || '/sessions').split('/').filter(Boolean);
  for (const a of document.querySelectorAll('nav a')) a.toggleAttribute('aria-current', a.dataset.page === parts[0]);
  if (!me && parts[0] !== 'signin') {
    try {
      me = await call('GET', '/console/me');
      showWho();
    } catch {
      return;
    }
  }
  try {
    if (parts[0] === 'signin') return signinPage();
    if (parts[0] === 'inbox') page = await inboxPage();
    else if (parts[0] === 'agents' && parts[1]) page = await agentPage(decodeURIComponent(parts[1]));
    else if (parts[0] === 'agents') await agentsPage();
    else if (parts[0] === 'costs') await costsPage(params);
    else if (parts[0] === 'channels') page = await channelsPage(params);
    else if (parts[0] === 'sessions' && parts[1]) page = await sessionPage(decodeURIComponent(parts[1]));
    else await sessionsPage(params);
  } catch (err) {
    if (err.status !== 401) main.replaceChildren(h('p', { class: 'error', role: 'alert' }, err.message));
  }
}

document.getElementById('signout').addEventListener('click', async () => {
  await call('POST', '/console/signout', {}).catch(() => {});
  me = null;
  showWho();
  go('#/signin');
});
window.addEventListener('hashchange', render);
render();
// The pending count stays current on every page.
setInterval(async () => {
  if (!me) return;
  try {
    const [p, q] = await Promise.all([call('GET', '/permissions?status=pending'), call('GET', '/questions?status=pending')]);
    setCount(p.permissions.length + q.questions.length);
  } catch {
    // signed out or offline: the next tick tries again
  }
}, 5000);
