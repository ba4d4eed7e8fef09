import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { providerPairingViolations } from '../../../harness/transcripts.js';
import type { NormalizedMessage } from '../../../src/compaction/types.js';
import { importTranscript } from '../../../src/importers/index.js';
import { block, jsonl, line } from './claude-code-lines.js';

/**
 * Claude Code writes each block of a reply on its own line and each tool result as its own
 * line when the tool finishes, so with parallel calls a result can land between the lines
 * of its reply, after lines of a later reply, or after a progress line. Whatever the order,
 * the import must give the messages the provider saw: prompt, reply, its results.
 */
interface Reply {
  prompt: boolean;
  text: boolean;
  calls: number;
  progress: boolean;
}

const replyArb = fc.record({ prompt: fc.boolean(), text: fc.boolean(), calls: fc.integer({ min: 0, max: 4 }), progress: fc.boolean() });

/** The lines as written in order without delays, with where each result may first appear. */
function linesOf(replies: Reply[]): { ordered: unknown[]; results: Array<{ line: unknown; after: number }> } {
  const ordered: unknown[] = [];
  const results: Array<{ line: unknown; after: number }> = [];
  replies.forEach((reply, r) => {
    if (reply.prompt || r === 0) ordered.push(line.user(`prompt ${r}`));
    if (reply.text || reply.calls === 0) ordered.push(line.assistant(`msg_${r}`, block.text(`reply ${r}`)));
    for (let c = 0; c < reply.calls; c++) {
      ordered.push(line.assistant(`msg_${r}`, block.toolUse(`tu_${r}_${c}`, 'Bash', { command: `cmd ${r} ${c}` })));
      if (reply.progress) ordered.push(line.progress());
      results.push({ line: line.result(`tu_${r}_${c}`, `out ${r} ${c}`), after: ordered.length });
    }
  });
  return { ordered, results };
}

/** Places each result at some point after its call (delays and tie-breaks drawn by fast-check). */
function interleave(ordered: unknown[], results: Array<{ line: unknown; after: number }>, draws: Array<[number, number]>): unknown[] {
  const placed = results.map((result, i) => {
    const [delay, tie] = draws[i] ?? [0, 0];
    return { line: result.line, at: result.after + (delay % (ordered.length - result.after + 1)), tie };
  });
  placed.sort((a, b) => a.at - b.at || a.tie - b.tie);
  const out: unknown[] = [];
  let next = 0;
  ordered.forEach((entry, index) => {
    while (placed[next] !== undefined && (placed[next]?.at ?? 0) <= index) out.push(placed[next++]?.line);
    out.push(entry);
  });
  while (next < placed.length) out.push(placed[next++]?.line);
  return out;
}

/** What the provider saw, written as one summary string per message. */
function expectedMessages(replies: Reply[]): string[] {
  return replies.flatMap((reply, r) => {
    const out: string[] = [];
    if (reply.prompt || r === 0) out.push(`user: prompt ${r}`);
    const calls = Array.from({ length: reply.calls }, (_, c) => c);
    const parts = [...(reply.text || reply.calls === 0 ? [`reply ${r}`] : []), ...calls.map((c) => `call tu_${r}_${c}`)];
    out.push(`assistant: ${parts.join(' | ')}`);
    if (reply.calls > 0) out.push(`user: ${calls.map((c) => `result tu_${r}_${c}=out ${r} ${c}`).join(' | ')}`);
    return out;
  });
}

function summary(message: NormalizedMessage): string {
  const parts = message.content.map((b) => {
    if (b.type === 'text') return b.text;
    if (b.type === 'tool_use') return `call ${b.id}`;
    if (b.type === 'tool_result')
      return `result ${b.tool_use_id}=${typeof b.content === 'string' ? b.content : b.content.map((p) => (p.type === 'text' ? p.text : '')).join('')}`;
    return b.type;
  });
  return `${message.role === 'assistant' ? 'assistant' : 'user'}: ${parts.join(' | ')}`;
}

const sessionArb = fc.array(replyArb, { minLength: 1, maxLength: 6 }).chain((replies) => {
  const total = replies.reduce((n, r) => n + r.calls, 0);
  const draws = fc.array(fc.tuple(fc.nat({ max: 40 }), fc.nat({ max: 1000 })), { minLength: total, maxLength: total });
  return fc.tuple(fc.constant(replies), draws);
});

describe('Claude Code import of interleaved parallel calls (property)', () => {
  it('rebuilds prompt, reply, results whatever the order results were written in', () => {
    fc.assert(
      fc.property(sessionArb, ([replies, draws]) => {
        const { ordered, results } = linesOf(replies);
        const text = jsonl(interleave(ordered, results, draws));
        const [conversation] = importTranscript(text, { format: 'claude-code' }).conversations;
        if (!conversation) throw new Error('no conversation');
        expect(conversation.messages.map(summary)).toEqual(expectedMessages(replies));
        expect(providerPairingViolations(conversation.messages)).toEqual([]);
        expect(conversation.stats).toMatchObject({
          toolPairs: results.length,
          unmatchedToolUses: 0,
          orphanedToolResults: 0,
          duplicateToolResults: 0,
          synthesizedToolResults: 0,
        });
      }),
      { numRuns: 300 },
    );
  });

  it('the pairing check itself flags a result that does not follow its call', () => {
    const lines = [line.user('go'), line.assistant('msg_A', block.toolUse('tu_1', 'Bash')), line.user('wait'), line.result('tu_1', 'late')];
    const messages: NormalizedMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'tu_1', name: 'Bash', input: {} }] },
      { role: 'user', content: [{ type: 'text', text: 'wait' }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: 'late' }] },
    ];
    expect(providerPairingViolations(messages)).toEqual([
      'message 1: calls tu_1 not answered in the next message',
      'message 3: result for tu_1 does not follow its call',
    ]);
    // The importer puts that result back after its call.
    const [conversation] = importTranscript(jsonl(lines), { format: 'claude-code' }).conversations;
    expect(providerPairingViolations(conversation?.messages ?? [])).toEqual([]);
  });
});
