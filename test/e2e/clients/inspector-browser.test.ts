import { mkdirSync } from 'node:fs';
import path from 'node:path';

import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CONTENT_SECURITY_POLICY } from '../../../src/api/inspect/security.js';
import { activeMessages } from '../../helpers/conversation.js';
import {
  ADMIN_TOKEN,
  CONVERSATION_ID,
  HOSTILE_TEXTS,
  type InspectorScenario,
  startInspectorScenario,
} from '../../helpers/inspector-scenario.js';

/** Set by scripts/inspector-screenshots.ts: where this run writes the README's screenshots. */
const SCREENSHOT_DIR = process.env['INSPECTOR_SCREENSHOTS'];

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let scenario: InspectorScenario;
let browser: Browser;
let context: BrowserContext;
/** console errors and uncaught page errors of every page the tests opened */
const problems: string[] = [];

beforeAll(async () => {
  scenario = await startInspectorScenario();
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  // the tenant key as the Basic-auth password: what a person types into the browser's prompt
  context = await browser.newContext({
    httpCredentials: { username: 'tenant', password: scenario.stack.key },
    viewport: { width: 1280, height: 900 },
  });
});
afterAll(async () => {
  await browser?.close();
  await scenario?.close();
});

async function open(url: string): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`${url}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`${url}: ${error.message}`));
  const response = await page.goto(scenario.baseUrl + url);
  expect(response?.status(), url).toBe(200);
  return page;
}

async function screenshot(page: Page, name: string) {
  if (!SCREENSHOT_DIR) return;
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `inspector-${name}.png`), fullPage: false });
}

/** The originals the first compaction archived, through the JSON API. */
async function activeArchive(s: InspectorScenario): Promise<Array<{ seq: number; content: Array<Record<string, unknown>> }>> {
  const headers = { authorization: `Bearer ${s.stack.key}` };
  const job = (await (await fetch(`${s.baseUrl}/v1/jobs/${s.jobId}`, { headers })).json()) as { result: { batchIds: string[] } };
  const out = [];
  for (const id of job.result.batchIds) {
    const page = (await (await fetch(`${s.baseUrl}/v1/batches/${id}/messages?limit=1000`, { headers })).json()) as {
      messages: Array<{ seq: number; content: Array<Record<string, unknown>> }>;
    };
    out.push(...page.messages);
  }
  return out;
}

const conversationUrl = `/inspect/conversations/${CONVERSATION_ID}`;

describe('the inspector in a real browser', () => {
  it('answers 401 with a Basic challenge without credentials, and serves every page with a strict CSP', async () => {
    const bare = await fetch(`${scenario.baseUrl}/inspect`);
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toMatch(/^Basic realm="compactd"/);
    const wrong = await fetch(`${scenario.baseUrl}/inspect`, {
      headers: { authorization: `Basic ${Buffer.from('x:not-a-key').toString('base64')}` },
    });
    expect(wrong.status).toBe(401);
    const bearer = await fetch(`${scenario.baseUrl}/inspect`, { headers: { authorization: `Bearer ${scenario.stack.key}` } });
    expect(bearer.status).toBe(200);
    expect(bearer.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    const body = await bearer.text();
    // no key or token is ever written into a page
    expect(body).not.toContain(scenario.stack.key);
  });

  it('lists the conversation with its tokens against the window, compactions and last job', async () => {
    const page = await open('/inspect');
    await screenshot(page, 'conversations');
    const row = page.locator('tr', { has: page.getByRole('link', { name: CONVERSATION_ID, exact: true }) });
    await expect(row.count()).resolves.toBe(1);
    const text = await row.innerText();
    expect(text).toMatch(/completed/);
    expect(text).toMatch(/[\d,]+ \/ 128,000/);
    // the other tenant's conversation is not listed
    expect(await page.content()).not.toContain(scenario.otherConversationId);
    await page.getByLabel('Conversation id contains').fill('no-such-conversation');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=no-such-conversation/);
    expect(await page.locator('tbody').innerText()).toContain('No conversation matches');
    await page.close();
  });

  it('the job page shows its LLM calls side by side on the timeline, with tokens, and what the context no longer holds', async () => {
    const page = await open(`/inspect/jobs/${scenario.jobId}`);
    const bars = await page
      .locator('svg.timeline g.bar')
      .evaluateAll((nodes) =>
        nodes.map((node) => ({ start: Number(node.getAttribute('data-start')), end: Number(node.getAttribute('data-end')) })),
      );
    expect(bars.length).toBeGreaterThanOrEqual(2);
    // side by side: some two calls were in flight at the same moment
    const overlapping = bars.some((a, i) => bars.some((b, j) => i !== j && a.start < b.end && b.start < a.end));
    expect(overlapping, JSON.stringify(bars)).toBe(true);
    const calls = await page.locator('table.calls tbody tr').allInnerTexts();
    expect(calls).toHaveLength(bars.length);
    expect(calls[0]).toMatch(/claude-haiku-4-5/);
    const marks = await page.locator('svg.timeline .mark text').evaluateAll((nodes) => nodes.map((node) => node.textContent));
    expect(marks).toEqual(expect.arrayContaining(['plan', 'commit']));
    const figures = await page.locator('dl.figures').first().innerText();
    expect(figures).toMatch(/Tokens before\s+[\d,]+/);
    expect(await page.locator('ul.forgotten li').count()).toBeGreaterThan(0);
    await screenshot(page, 'job');
    await page.close();
  });

  it('the conversation page folds the archived stretch into its batch, which expands to its originals', async () => {
    const page = await open(conversationUrl);
    await screenshot(page, 'conversation');
    // the compaction, and the consolidation it caused when there was one, each a marked drop
    expect(await page.locator('svg.gauge .compaction-mark').count()).toBeGreaterThanOrEqual(1);
    const clip = await page.locator('pre.clip-archive').first().innerText();
    expect(clip.length).toBeGreaterThan(100);
    const fold = page.locator('li.batch-fold details').first();
    await expect(fold.locator('.originals-slot li.msg').count()).resolves.toBe(0);
    await fold.locator('summary').focus();
    await page.keyboard.press('Enter'); // keyboard-usable
    await fold.locator('.originals-slot li.msg').first().waitFor();
    expect(await fold.locator('.originals-slot li.msg').count()).toBeGreaterThan(1);
    // the first original of the conversation is the hostile one: as text
    expect(await fold.locator('.originals-slot li.msg').first().innerText()).toContain(HOSTILE_TEXTS[0]);
    // the batch tree: every level-0 batch, under the consolidation that absorbed it when there is one
    expect(await page.locator('ul.tree li').count()).toBeGreaterThanOrEqual(2);
    expect(await page.locator('#ledger-h').count()).toBe(1);
    await page.close();
  });

  it('messages holding <script> and <img onerror> render as text and run nothing', async () => {
    const page = await open(conversationUrl);
    const history = await page.locator('ol.history').innerText();
    expect(history).toContain(HOSTILE_TEXTS[0]);
    expect(history).toContain(HOSTILE_TEXTS[1]);
    expect(await page.locator('ol.history img, ol.history script').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __inspectorPwned?: string }).__inspectorPwned)).toBeUndefined();
    await page.close();
  });

  it('recall finds an archived path and its hit opens the batch at that original', async () => {
    // a file path one of the archived tool calls named
    const archived = (await activeArchive(scenario)).flatMap((m) => m.content);
    const path = archived
      .map((b) => (b['type'] === 'tool_use' ? (b['input'] as Record<string, unknown>)['file_path'] : undefined))
      .find((p) => typeof p === 'string') as string | undefined;
    expect(path, 'the compaction archived a tool call on a file').toBeTruthy();
    const page = await open(conversationUrl);
    await page.getByLabel('Path, command, error line, id or words').fill(path as string);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=/);
    const hit = page.locator('ol.hits li.hit a').first();
    expect(await page.locator('ol.hits').innerText()).toContain(path);
    const seq = Number(/#(\d+)/.exec(await hit.innerText())?.[1]);
    await hit.click();
    await page.waitForURL(new RegExp(`#seq-${seq}$`));
    const target = page.locator(`li.batch-fold details[open] li#seq-${seq}`);
    expect(await target.count()).toBe(1);
    expect(await target.innerText()).toContain(`#${seq}`);
    await page.close();
  });

  it('another tenant cannot see the conversation, its job or its batches (404); the admin token sees every tenant', async () => {
    const other = { authorization: `Bearer ${scenario.otherKey}` };
    expect((await fetch(scenario.baseUrl + conversationUrl, { headers: other })).status).toBe(404);
    expect((await fetch(`${scenario.baseUrl}/inspect/jobs/${scenario.jobId}`, { headers: other })).status).toBe(404);
    const list = await (await fetch(`${scenario.baseUrl}/inspect`, { headers: other })).text();
    expect(list).toContain(scenario.otherConversationId);
    expect(list).not.toContain(CONVERSATION_ID);
    const admin = await (await fetch(`${scenario.baseUrl}/inspect`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    expect(admin).toContain(CONVERSATION_ID);
    expect(admin).toContain(scenario.otherConversationId);
    // an action posted from another origin is refused
    const forged = await fetch(`${scenario.baseUrl}/inspect/jobs/${scenario.jobId}/revert`, {
      method: 'POST',
      headers: { authorization: `Bearer ${scenario.stack.key}`, origin: 'https://evil.example' },
    });
    expect(forged.status).toBe(403);
  });

  it('revert, after its confirmation, restores the history', async () => {
    const before = await activeMessages(scenario.stack, CONVERSATION_ID);
    expect(before.some((m) => m.kind === 'clip_archive')).toBe(true);
    const page = await open(conversationUrl);
    await page.getByRole('link', { name: 'Revert the latest compaction…' }).click();
    await page.waitForURL(/\/revert$/);
    expect(await page.locator('h1').innerText()).toContain('Revert compaction');
    await page.getByRole('button', { name: 'Confirm: revert' }).click();
    await page.waitForURL(/notice=reverted/);
    expect(await page.locator('.notice').innerText()).toContain('reverted');
    const after = await activeMessages(scenario.stack, CONVERSATION_ID);
    expect(after.some((m) => m.kind === 'clip_archive')).toBe(false);
    expect(after.length).toBeGreaterThan(before.length);
    expect(await page.locator('li.batch-fold').count()).toBe(0);
    await page.close();
  });

  it('compact now, after its confirmation, shows the job live until it completes', async () => {
    const page = await open(conversationUrl);
    await page.getByRole('link', { name: 'Compact now…' }).click();
    await page.getByLabel('Strategy').selectOption('summarize');
    await page.getByRole('button', { name: 'Confirm: compact now' }).click();
    await page.waitForURL(/\/inspect\/jobs\/[0-9a-f-]{36}$/);
    // the page polls its live part: the job is shown completed without a reload
    await page.locator('#job-live[data-active="0"]').waitFor({ timeout: 60_000 });
    expect(await page.locator('#job-live').innerText()).toMatch(/^completed/);
    expect(await page.locator('svg.timeline g.bar').count()).toBeGreaterThanOrEqual(2);
    await page.close();
  });

  it('logged no console error on any page', () => {
    expect(problems).toEqual([]);
  });
});
