// The console in a real browser: Debian's chromium driven by playwright-core, against the mesh
// that services/gateway/tests/console.rs starts (fake agents behind the gateway). Each step
// waits on what the page shows, never on a fixed sleep.
//
// env: BASE (gateway URL), ADMIN (admin token, for the setup calls), OPERATOR_KEY, VIEWER_KEY,
//      PLAYWRIGHT (the playwright-core install dir), CHROMIUM (the browser binary)

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const { BASE, ADMIN, OPERATOR_KEY, VIEWER_KEY, PLAYWRIGHT, CHROMIUM, SCREENSHOTS } = process.env;
const require = createRequire(`${PLAYWRIGHT}/`);
const { chromium } = require('playwright-core');
const WAIT = 20_000;

function step(name) {
  console.log(`step: ${name}`);
}

/** With SCREENSHOTS set (a directory), keeps a picture of the page for the README. */
async function picture(page, name) {
  if (SCREENSHOTS) await page.screenshot({ path: `${SCREENSHOTS}/${name}.png` });
}

async function rest(method, path, body) {
  const res = await fetch(BASE + '/api/v1' + path, {
    method,
    headers: { Authorization: `Bearer ${ADMIN}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return data;
}

async function until(what, fn) {
  const deadline = Date.now() + WAIT;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`not met in ${WAIT} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const say = (session, message, mode = 'immediate') => rest('POST', `/sessions/${session}/messages`, { message, mode });

const pages = [];

async function signIn(browser, key) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  // Failed loads (the 401 before signing in) are the page working as meant; script errors are not.
  page.on('console', (m) => m.type() === 'error' && !m.text().startsWith('Failed to load resource') && problems.push(m.text()));
  page.problems = problems;
  pages.push(page);
  await page.goto(BASE + '/');
  await page.locator('#key').waitFor({ timeout: WAIT });
  await page.fill('#key', key);
  await page.click('form.signin button[type=submit]');
  await page.locator('#sessions').waitFor({ timeout: WAIT });
  return page;
}

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
try {
  step('a spawned agent to watch');
  const spawned = await rest('POST', '/sessions', { cli: 'claude', agent: 'worker', task: 'hello there', title: 'console e2e' });
  const session = spawned.sessionId;
  const agent = spawned.agentId;
  await until('the agent took its task', async () => {
    const o = await rest('GET', `/agents/${agent}/output?limit=50`);
    return o.rows.some((r) => r.text.includes('Received: hello there'));
  });

  step('sign in and see the session in the list');
  const a = await signIn(browser, OPERATOR_KEY);
  const cookies = await a.context().cookies();
  const keyCookie = cookies.find((c) => c.name === 'relay_key');
  assert.ok(keyCookie?.httpOnly, 'the key cookie is HttpOnly');
  assert.equal(keyCookie.sameSite, 'Strict');
  assert.ok(!(await a.evaluate(() => document.cookie)).includes('relay_key'), 'script cannot read the key');
  await a.fill('#search', 'hello');
  await a.click('form.toolbar button[type=submit]');
  await until('the search found it', async () => (await a.textContent('#sessions')).includes('console e2e'));
  assert.match(await a.textContent('#counts'), /1 active/);
  await a.goto(BASE + '/#/sessions');
  await a.locator('#sessions a').first().waitFor({ timeout: WAIT });
  await picture(a, 'sessions');
  await a.getByRole('link', { name: 'console e2e' }).click();
  await a.locator('#timeline').waitFor({ timeout: WAIT });
  await a.locator('#timeline').waitFor({ timeout: WAIT });
  await until('the stream is live', async () => (await a.textContent('#stream-state')) === 'live');

  step('a tool call and token usage appear live');
  await say(session, 'tool Grep relay-mesh');
  await say(session, 'tokens 1200 340');
  await a.locator('.ev.tool', { hasText: 'Grep' }).first().waitFor({ timeout: WAIT });
  await a.locator('.ev.usage', { hasText: '1200 in' }).first().waitFor({ timeout: WAIT });

  step('a message sent on-idle from the page shows its receipts');
  await a.fill('#message', 'hello from the console');
  await a.selectOption('#mode', 'on-idle');
  await a.click('#send button[type=submit]');
  await a.locator('.ev.delivery', { hasText: 'delivered' }).first().waitFor({ timeout: WAIT });

  step('agent output is text, never markup');
  await say(session, 'say <script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">');
  await a.locator('.ev.output', { hasText: '<script>window.__pwned=1</script>' }).first().waitFor({ timeout: WAIT });
  assert.equal(await a.evaluate(() => window.__pwned), undefined, 'nothing the agent printed ran');
  assert.equal(await a.locator('#timeline img').count(), 0, 'no element was made from agent output');

  step('the stream is cut and resumes with no gap and no repeat');
  await a.evaluate(() => window.relayStream.drop());
  await say(session, 'tool Read after-the-cut.txt');
  await a.locator('.ev.tool', { hasText: 'after-the-cut.txt' }).first().waitFor({ timeout: WAIT });
  const shown = await a.$$eval('.ev', (els) => els.map((e) => Number(e.dataset.seq)));
  assert.equal(new Set(shown).size, shown.length, 'no event twice');
  assert.deepEqual(shown, [...shown].sort((x, y) => x - y), 'in order');
  await picture(a, 'session');
  const seen = await a.evaluate(() => window.relayStream.seen);
  const log = await rest('GET', `/events?sessionId=${session}&limit=1000`);
  const expected = log.events.map((e) => e.seq).filter((s) => s <= seen[seen.length - 1]);
  assert.deepEqual(seen, expected, 'the page got every event of the session once, in order');

  step('a permission prompt reaches the inbox; approved on one page, gone on the other');
  const b = await signIn(browser, OPERATOR_KEY);
  await b.goto(BASE + '/#/inbox');
  await a.goto(BASE + '/#/inbox');
  await say(session, 'ask-permission Bash rm -rf build');
  const card = a.locator('article.card', { hasText: 'rm -rf build' });
  await card.waitFor({ timeout: WAIT });
  await b.locator('article.card', { hasText: 'rm -rf build' }).waitFor({ timeout: WAIT });
  await until('the title counts it', async () => (await a.title()).startsWith('(1)'));
  await until('the context shows', async () => (await card.locator('pre.output').textContent()).length > 0);
  await picture(a, 'inbox');
  await card.locator('button.approve').click();
  await b.locator('article.card', { hasText: 'rm -rf build' }).waitFor({ state: 'detached', timeout: WAIT });
  const out = await until('the agent took the approval', async () => {
    const o = await rest('GET', `/agents/${agent}/output?limit=50`);
    return o.rows.some((r) => r.text.includes('Permission granted: Bash rm -rf build')) && o;
  });
  assert.ok(out);

  step("the agent's terminal shows the approval, and takes keys typed on the page");
  await b.goto(BASE + '/#/agents');
  await b.locator('#agents a', { hasText: '@worker' }).waitFor({ timeout: WAIT });
  await picture(b, 'agents');
  await b.locator('#agents a', { hasText: '@worker' }).click();
  const rows = b.locator('#terminal .xterm-rows');
  await until('the terminal shows the grant', async () => (await rows.textContent()).includes('Permission granted: Bash rm -rf build'));
  await b.fill('#keys', 'tool Write notes.md');
  await b.click('#input button[type=submit]');
  await until('the terminal shows the typed command run', async () => (await rows.textContent()).includes('Write(notes.md)'));
  await until('the deliveries are listed', async () => (await b.locator('#deliveries tbody tr').count()) > 0);
  await picture(b, 'agent');

  step('a question is answered from the page');
  await say(session, 'ask Which color? red/blue');
  const q = a.locator('article.question', { hasText: 'Which color' });
  await q.waitFor({ timeout: WAIT });
  await q.locator('input').fill('blue');
  await q.locator('button[type=submit]').click();
  await until('the agent got the answer', async () => {
    const o = await rest('GET', `/agents/${agent}/output?limit=50`);
    return o.rows.some((r) => r.text.toLowerCase().includes('blue'));
  });

  step('a viewer sees no approve button, and the API refuses it anyway');
  await say(session, 'ask-permission Bash rm -rf dist');
  const v = await signIn(browser, VIEWER_KEY);
  await v.goto(BASE + '/#/inbox');
  const vcard = v.locator('article.card', { hasText: 'rm -rf dist' });
  await vcard.waitFor({ timeout: WAIT });
  assert.equal(await vcard.locator('button.approve').count(), 0, 'no approve button for a viewer');
  const pending = await rest('GET', '/permissions?status=pending');
  const req = pending.permissions.find((p) => (p.command || '').includes('rm -rf dist'));
  const status = await v.evaluate(async ([agentId, requestId]) => {
    const csrf = document.cookie.split('; ').find((c) => c.startsWith('relay_csrf=')).slice(11);
    const r = await fetch(`/api/v1/agents/${agentId}/permissions/${requestId}/approve`, {
      method: 'POST',
      headers: { 'X-CSRF-Token': csrf, 'Content-Type': 'application/json' },
      body: '{}',
    });
    return r.status;
  }, [req.agentId, req.requestId]);
  assert.equal(status, 403, 'the API refuses a viewer');

  step('a change with the cookie but without the CSRF token is refused');
  const noCsrf = await a.evaluate(async (id) => (await fetch(`/api/v1/sessions/${id}/messages`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ message: 'sneaky' }),
  })).status, session);
  assert.equal(noCsrf, 403);

  step('channels: a message and its thread reply show live');
  await rest('POST', '/channels', { name: 'ops' });
  await rest('POST', '/channels/ops/join', { agent: '@worker' });
  await a.goto(BASE + '/#/channels');
  await a.locator('#feed').waitFor({ state: 'attached', timeout: WAIT });
  const root = await rest('POST', '/messages', { to: '#ops', text: 'deploy at noon?' });
  await rest('POST', '/messages', { threadId: root.messageId, text: 'noon works' });
  const thread = a.locator('#feed > li', { hasText: 'deploy at noon?' });
  await thread.waitFor({ timeout: WAIT });
  await thread.locator('ol.replies li', { hasText: 'noon works' }).waitFor({ timeout: WAIT });
  await picture(a, 'channels');

  step("the costs charts show the run's tokens, the budget's share and the context window");
  await a.goto(BASE + '/#/costs');
  await until('the total counts the tokens', async () => {
    if ((await a.textContent('#cost-total').catch(() => '')).includes('1,540 tokens')) return true;
    await a.reload();
    return false;
  });
  const byAgent = await a.getAttribute('#chart-agent', 'aria-label');
  assert.ok(byAgent.includes(`${agent} 1540 tokens`), byAgent);
  // 1,200 in and 340 out at Sonnet's $3 and $15 per million: $0.0087 of a one-cent budget.
  const budget = a.locator(`#budgets tr[data-key="${session}"]`);
  assert.match(await budget.textContent(), /a-cent-a-session.*\$0\.0087.*87%/);
  assert.equal(await budget.locator('[role=meter]').getAttribute('aria-valuenow'), '87');
  const window = a.locator(`#context-windows tr[data-session="${session}"]`);
  assert.match(await window.textContent(), /of 200,000/);
  assert.ok(!/\b(null|undefined)\b/.test(await a.textContent('main')), 'no missing value is printed');
  await picture(a, 'costs');

  step("a session page's controls are reachable with the keyboard alone");
  await a.goto(BASE + `/#/sessions/${session}`);
  await a.locator('#timeline .ev').first().waitFor({ timeout: WAIT });
  await a.evaluate(() => document.activeElement?.blur());
  const reached = [];
  for (let i = 0; i < 25; i++) {
    await a.keyboard.press('Tab');
    reached.push(await a.evaluate(() => {
      const el = document.activeElement;
      return el.id || el.getAttribute('aria-label') || el.textContent.trim();
    }));
  }
  for (const control of ['Sessions', 'Inbox', 'message', 'mode', 'Send', 'Close', 'Archive', 'Fork']) {
    assert.ok(reached.some((r) => r.startsWith(control)), `${control} is not reached with Tab: ${reached}`);
  }

  step('every page fits a phone-width screen');
  await a.setViewportSize({ width: 390, height: 844 });
  for (const [hash, ready] of [['#/sessions', '#sessions'], [`#/sessions/${session}`, '#timeline .ev'], ['#/inbox', '#inbox'],
    ['#/agents', '#agents'], [`#/agents/${agent}`, '#terminal'], ['#/channels', '#feed'], ['#/costs', '#budgets']]) {
    await a.goto(BASE + '/' + hash);
    await a.locator(ready).first().waitFor({ state: 'attached', timeout: WAIT });
    const [scroll, width] = await a.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    assert.ok(scroll <= width, `${hash} is ${scroll}px wide on a ${width}px screen`);
    if (hash.startsWith('#/sessions/')) await picture(a, 'phone');
  }

  for (const p of [a, b, v]) assert.deepEqual(p.problems, [], 'no script errors in the page');
  console.log('console e2e: all steps passed');
} catch (e) {
  // What the pages showed when it failed.
  for (const p of pages) console.log(`--- ${p.url()}\n${await p.textContent('main').catch(() => '?')}\nerrors: ${p.problems}`);
  throw e;
} finally {
  await browser.close();
}
