import { readFileSync } from 'node:fs';
import path from 'node:path';

import { realTranscriptsDir } from '../../src/app/cli/shared-data.js';
import type { NormalizedMessage } from '../../src/compaction/types.js';
import { importTranscript } from '../../src/importers/index.js';

/** Conversations the bench feeds the service: the real long sessions and a deterministic synthetic agent. */

/** The shared transcripts, found by the project's one resolver (COMPACTD_SHARED_DATA, else ../shared/data). */
export const REAL_TRANSCRIPTS_RAW = path.join(realTranscriptsDir(), 'raw');

/** The four long Claude Code sessions of the shared set (each holds one real compaction upstream). */
export const LONG_SESSIONS = [
  '258c7280-ae70-4798-800f-63464d01a85d',
  '4d5611e5-241a-462a-8d15-5122611a9569',
  '8463c716-a2ea-4c14-9efa-87158ebd9f20',
  'ae4a77f8-aedd-4bc1-888f-c94edc91af04',
] as const;

export function loadSession(id: string): NormalizedMessage[] {
  const file = path.join(REAL_TRANSCRIPTS_RAW, 'spotter-claude-code', `${id}.jsonl`);
  const imported = importTranscript(readFileSync(file, 'utf8'), { fileName: path.basename(file) });
  const conversation = imported.conversations[0];
  if (!conversation) throw new Error(`${file}: no conversation imported`);
  return conversation.messages;
}

/** A deterministic PRNG (mulberry32), so every run sends the same bytes. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Message sizes: `chat` averages ~400 bytes (short turns and tool outputs), `agent` ~1 KB
 * (the ingest scenario's unit, closer to a coding agent's tool output).
 */
export type MessageMix = 'chat' | 'agent';

const WORDS = [
  'parser',
  'cache',
  'session',
  'queue',
  'index',
  'router',
  'schema',
  'worker',
  'token',
  'budget',
  'retry',
  'lock',
  'batch',
  'export',
];
const TOOLS = ['run_tests', 'read_file', 'bash', 'grep'];

/**
 * `count` messages of a coding agent at work, in units of four (user request, tool call,
 * tool result, assistant report): valid tool pairing, unique tool ids per `tag`.
 */
export function syntheticMessages(
  count: number,
  options: { mix: MessageMix; seed?: number; tag?: string; offset?: number },
): NormalizedMessage[] {
  const random = prng(options.seed ?? 1);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const outputLines = options.mix === 'agent' ? 66 : 18;
  const tag = options.tag ?? 's';
  const out: NormalizedMessage[] = [];
  for (let unit = options.offset ?? 0; out.length < count; unit += 1) {
    const word = pick(WORDS);
    const file = `src/${word}/${pick(WORDS)}-${unit % 97}.ts`;
    const tool = pick(TOOLS);
    const id = `toolu_${tag}_${unit}`;
    const lines = Array.from(
      { length: outputLines },
      (_, k) => `  ${k % 7 === 6 ? 'not ok' : 'ok'} ${k + 1} ${file} > ${word} case ${k + 1} (${Math.floor(random() * 90) + 3} ms)`,
    );
    const unitMessages: NormalizedMessage[] = [
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: `Step ${unit}: the ${word} in ${file} must keep its ${pick(WORDS)} bounded; fix the failing case and tell me what changed?`,
          },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id, name: tool, input: { path: file, args: ['--reporter', 'tap'] } }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: id,
            content: `${lines.join('\n')}\nError: expected ${word} size <= ${(unit % 50) + 10} but got ${(unit % 50) + 12}`,
          },
        ],
      },
      {
        role: 'assistant',
        content: [
          {
            type: 'text',
            text: `Fixed ${file}: the ${word} ${pick(WORDS)} now evicts before insert; decided to keep the limit at ${(unit % 50) + 10}. Next: rerun ${tool}.`,
          },
        ],
      },
    ];
    out.push(...unitMessages.slice(0, count - out.length));
  }
  return out;
}

export function jsonBytes(messages: readonly unknown[]): number {
  return messages.reduce<number>((sum, m) => sum + Buffer.byteLength(JSON.stringify(m)), 0);
}
