import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { type CompactdProcess, spawnCompactd } from '../../../harness/compactd-process.js';
import { freePort } from '../../../harness/free-port.js';
import { TEST_REDIS_URL } from '../../../harness/service-urls.js';
import { createApiKey } from '../../../src/db/repos/api-keys.js';
import { conversationByExternalId } from '../../helpers/archive-seed.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.js';

/**
 * An export bigger than the API process may hold as one string: `compactd api` as a child
 * process with a 96 MB old space exports 160 messages of 1 MB each (160 MB of NDJSON). Exporting
 * a page joined into one string (the code before) dies there; streaming line by line, in
 * slices of bounded bytes, stays flat. The text repeats, so Postgres stores it compressed (small).
 */
const HEAP_MB = 96;
const MESSAGES = 160;
const MESSAGE_CHARS = 1_000_000;

let db: TestDatabase;
let api: CompactdProcess;
let url: string;
let key: string;

function rssKb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.replace(/\D+/g, '') ?? 0);
}

beforeAll(async () => {
  db = await createTestDatabase();
  key = (await createApiKey(db.db, { tenantName: 'export-heap' })).key;
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  api = spawnCompactd('api', {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    COMPACTD_QUEUE_PREFIX: `t${randomUUID().replaceAll('-', '').slice(0, 12)}`,
    HOST: '127.0.0.1',
    PORT: String(port),
    NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}`,
  });
  await api.ready;
  const created = await fetch(`${url}/v1/conversations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'huge' }),
  });
  expect(created.status).toBe(201);
  const conversation = await conversationByExternalId(db.db, 'huge');
  await db.db.execute(sql`
    insert into messages (conversation_id, seq, role, kind, content, tokens)
    select ${conversation.id}, g, case when g % 2 = 1 then 'user' else 'assistant' end, 'message',
           jsonb_build_array(jsonb_build_object('type', 'text', 'text', 'message ' || g || ' ' || repeat('abcdefgh', ${MESSAGE_CHARS / 8}))), 1000
      from generate_series(1, ${MESSAGES}) g`);
}, 120_000);

afterAll(async () => {
  await api?.kill('SIGTERM');
  await db?.drop();
});

it(`exports ${MESSAGES} MB through an API with a ${HEAP_MB} MB heap, every line whole, memory flat`, async () => {
  const baselineKb = rssKb(api.pid);
  let maxKb = baselineKb;
  const sampler = setInterval(() => {
    try {
      maxKb = Math.max(maxKb, rssKb(api.pid));
    } catch {
      // the process is gone: the assertions below say so
    }
  }, 50);
  const seqs: number[] = [];
  let bytes = 0;
  try {
    const res = await fetch(`${url}/v1/conversations/huge/export`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const decoder = new TextDecoder();
    let pending = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      const text = pending + decoder.decode(chunk, { stream: true });
      const cut = text.lastIndexOf('\n');
      pending = text.slice(cut + 1);
      if (cut < 0) continue;
      for (const raw of text.slice(0, cut).split('\n')) {
        const line = JSON.parse(raw) as { seq: number; content: Array<{ text: string }> };
        expect(line.content[0]!.text.startsWith(`message ${line.seq} `)).toBe(true);
        expect(line.content[0]!.text.length).toBe(`message ${line.seq} `.length + MESSAGE_CHARS);
        seqs.push(line.seq);
      }
    }
    expect(pending).toBe('');
  } finally {
    clearInterval(sampler);
  }
  expect(seqs).toEqual(Array.from({ length: MESSAGES }, (_, i) => i + 1));
  expect(bytes).toBeGreaterThan(MESSAGES * MESSAGE_CHARS);
  // still serving after the export
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  const growthMb = (maxKb - baselineKb) / 1024;
  console.log(
    `export of ${(bytes / 1e6).toFixed(0)} MB: API RSS ${(baselineKb / 1024).toFixed(0)} MB before, peak ${(maxKb / 1024).toFixed(0)} MB (+${growthMb.toFixed(0)} MB)`,
  );
  // a few 4 MB slices and their lines in flight, never the export (160 MB) or a page of it
  expect(growthMb).toBeLessThan(MESSAGES / 2);
}, 300_000);
