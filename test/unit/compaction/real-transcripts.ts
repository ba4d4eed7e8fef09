import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

import { countTokens as gptCount } from 'gpt-tokenizer';

import { realTranscriptsDir } from '../../../src/app/cli/shared-data.js';
import type { LiveBatch } from '../../../src/compaction/plan-types.js';
import { renderMessageText, toolNamesOf } from '../../../src/compaction/render.js';
import type { Block, CountTokens, HistoryMessage, MessageKind, Role } from '../../../src/compaction/types.js';

/**
 * Minimal readers for the shared real transcripts (../shared/data/real-transcripts, see its
 * SOURCES.md), straight into HistoryMessage[] for the core's tests. The product's importers
 * live elsewhere; this only needs to be faithful enough to exercise the planner:
 * Claude Code JSONL (assistant lines sharing message.id merged, thinking/progress/system lines
 * dropped, tool results in user messages), mini-swe-agent (plain chat), τ-bench (OpenAI
 * tool_calls and role tool).
 */

export interface RealTranscript {
  name: string;
  source: 'claude-code' | 'mini-swe-agent' | 'tau-bench';
  messages: HistoryMessage[];
  previousSummaries: LiveBatch[];
}

export const TRANSCRIPTS_DIR = path.join(realTranscriptsDir(), 'raw');

const memo = new Map<string, number>();
/** gpt-tokenizer with a cache: the same texts are counted by many plans in these tests. */
export const realCountTokens: CountTokens = (text) => {
  const cached = memo.get(text);
  if (cached !== undefined) return cached;
  const tokens = gptCount(text);
  memo.set(text, tokens);
  return tokens;
};

interface Draft {
  role: Role;
  content: Block[];
  kind?: MessageKind;
}

function finish(drafts: readonly Draft[]): HistoryMessage[] {
  const names = toolNamesOf(
    drafts.map((d, i) => ({ seq: i, role: d.role, kind: 'message', content: d.content, tokens: 0, toolUseIds: [], toolResultIds: [] })),
  );
  return drafts.map((d, i) => {
    const message: HistoryMessage = {
      seq: i + 1,
      role: d.role,
      kind: d.kind ?? 'message',
      content: d.content,
      tokens: 0,
      toolUseIds: d.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])),
      toolResultIds: d.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])),
    };
    // per-message framing overhead of chat formats, roughly
    message.tokens = realCountTokens(renderMessageText(message, names)) + 4;
    return message;
  });
}

type RawBlock = Record<string, unknown> & { type?: string };

function claudeBlock(raw: RawBlock): Block | null {
  switch (raw.type) {
    case 'text':
      return { type: 'text', text: String(raw['text'] ?? '') };
    case 'tool_use':
      return { type: 'tool_use', id: String(raw['id']), name: String(raw['name']), input: raw['input'] ?? {} };
    case 'tool_result': {
      const content = raw['content'];
      const parts = Array.isArray(content)
        ? (content as RawBlock[]).map((p) =>
            p.type === 'image'
              ? { type: 'image' as const, source: (p['source'] ?? {}) as Record<string, unknown> }
              : { type: 'text' as const, text: String(p['text'] ?? '') },
          )
        : String(content ?? '');
      const block: Block = { type: 'tool_result', tool_use_id: String(raw['tool_use_id']), content: parts };
      if (raw['is_error'] === true) block.is_error = true;
      return block;
    }
    case 'image':
      return { type: 'image', source: (raw['source'] ?? {}) as Record<string, unknown> };
    default:
      return null; // thinking, redacted_thinking
  }
}

/** Claude Code session JSONL: the full session, and the part after its compaction with the summary as clip-archive. */
export function readClaudeCode(file: string): Array<Omit<RealTranscript, 'name' | 'source'> & { view: string }> {
  const full: Draft[] = [];
  let after: Draft[] | null = null;
  let summary: string | null = null;
  let lastAssistant = null as { id: string; draft: Draft | null } | null;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim().length === 0) continue;
    const entry = JSON.parse(line) as Record<string, unknown>;
    if (entry['type'] === 'system' && entry['subtype'] === 'compact_boundary') after = [];
    if ((entry['type'] !== 'user' && entry['type'] !== 'assistant') || entry['isMeta'] === true) continue;
    const message = entry['message'] as { id?: string; role: string; content: string | RawBlock[] };
    const blocks =
      typeof message.content === 'string'
        ? [{ type: 'text', text: message.content } as Block]
        : message.content.map(claudeBlock).filter((b): b is Block => b !== null);
    if (entry['isCompactSummary'] === true) {
      summary = blocks.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
      after?.push({ role: 'system', content: [{ type: 'text', text: summary }], kind: 'clip_archive' });
      continue;
    }
    if (entry['type'] === 'assistant') {
      const id = message.id ?? '';
      if (lastAssistant?.id === id && lastAssistant.draft) {
        lastAssistant.draft.content.push(...blocks);
        continue;
      }
      if (blocks.length === 0) {
        lastAssistant = { id, draft: null };
        continue;
      }
      const draft: Draft = { role: 'assistant', content: blocks };
      lastAssistant = { id, draft };
      full.push(draft);
      after?.push(draft);
      continue;
    }
    lastAssistant = null;
    if (blocks.length === 0) continue;
    const draft: Draft = { role: 'user', content: blocks };
    full.push(draft);
    after?.push(draft);
  }
  const views = [{ view: 'full', messages: finish(full), previousSummaries: [] as LiveBatch[] }];
  if (after && after.length > 1 && summary !== null) {
    const messages = finish(after);
    const batch: LiveBatch = { id: 'claude-code-compaction', level: 0, summary, seqs: [], summaryTokens: realCountTokens(summary) };
    views.push({ view: 'after-compaction', messages, previousSummaries: [batch] });
  }
  return views;
}

export function readMiniSweAgent(file: string): HistoryMessage[] {
  const data = JSON.parse(readFileSync(file, 'utf8')) as { messages: Array<{ role: Role; content: string }> };
  return finish(data.messages.map((m) => ({ role: m.role, content: [{ type: 'text', text: m.content }] })));
}

interface OpenAIMessage {
  role: Role;
  content: string | null;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

function openAIDraft(m: OpenAIMessage): Draft {
  if (m.role === 'tool')
    return { role: 'tool', content: [{ type: 'tool_result', tool_use_id: m.tool_call_id ?? '', content: m.content ?? '' }] };
  const blocks: Block[] = m.content ? [{ type: 'text', text: m.content }] : [];
  for (const call of m.tool_calls ?? []) {
    let input: unknown;
    try {
      input = JSON.parse(call.function.arguments);
    } catch {
      input = { arguments: call.function.arguments };
    }
    blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input });
  }
  return { role: m.role, content: blocks.length > 0 ? blocks : [{ type: 'text', text: '' }] };
}

export function readTauBench(file: string): Array<{ name: string; messages: HistoryMessage[] }> {
  const data = JSON.parse(readFileSync(file, 'utf8')) as Array<{ task_id: number; trial: number; traj: OpenAIMessage[] }>;
  return data.map((entry) => ({ name: `task-${entry.task_id}-trial-${entry.trial}`, messages: finish(entry.traj.map(openAIDraft)) }));
}

function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) return filesUnder(full, suffix);
      return name.endsWith(suffix) ? [full] : [];
    });
}

let cache: RealTranscript[] | null = null;

/** Every real transcript of the shared set (throws when the set is missing: it must never be skipped). */
export function loadRealTranscripts(): RealTranscript[] {
  if (cache) return cache;
  const out: RealTranscript[] = [];
  for (const file of filesUnder(path.join(TRANSCRIPTS_DIR, 'spotter-claude-code'), '.jsonl')) {
    for (const view of readClaudeCode(file)) {
      out.push({
        name: `${path.relative(TRANSCRIPTS_DIR, file)} (${view.view})`,
        source: 'claude-code',
        messages: view.messages,
        previousSummaries: view.previousSummaries,
      });
    }
  }
  for (const file of filesUnder(path.join(TRANSCRIPTS_DIR, 'mini-swe-agent-gemini3pro-swebench'), '.traj.json')) {
    out.push({
      name: path.relative(TRANSCRIPTS_DIR, file),
      source: 'mini-swe-agent',
      messages: readMiniSweAgent(file),
      previousSummaries: [],
    });
  }
  for (const file of filesUnder(path.join(TRANSCRIPTS_DIR, 'tau-bench'), '.json')) {
    for (const conv of readTauBench(file)) {
      out.push({
        name: `${path.relative(TRANSCRIPTS_DIR, file)} ${conv.name}`,
        source: 'tau-bench',
        messages: conv.messages,
        previousSummaries: [],
      });
    }
  }
  cache = out;
  return out;
}
