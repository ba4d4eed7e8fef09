import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { providerPairingViolations, toolPairingReport } from '../../../harness/transcripts.js';
import { extractLedger } from '../../../src/compaction/ledger/index.js';
import { isMetaTurn } from '../../../src/compaction/meta-turns.js';
import type { Block, NormalizedMessage } from '../../../src/compaction/types.js';
import { MISSING_RESULT_TEXT } from '../../../src/importers/claude-code-turns.js';
import { importTranscript } from '../../../src/importers/index.js';

/**
 * OpenHands runs, hand-made to the event format's documented shape (there is no real file in
 * the shared set): `openhands-codeact-output.json` is evaluation output of a CodeActAgent run
 * whose actions record the model's reply (`tool_call_metadata.model_response`), with `system`
 * and `recall` events, parallel calls, an editor error with its detail, an error answering no
 * call, and a final `finish` call no observation answers. `openhands-events.json` is an older
 * stream whose actions record only a tool call id and function name, or nothing.
 */
const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/transcripts');
const runText = readFileSync(path.join(fixtures, 'openhands-codeact-output.json'), 'utf8');
const run = JSON.parse(runText) as { instance_id: string; instruction: string; history: Event[] };
const legacyText = readFileSync(path.join(fixtures, 'openhands-events.json'), 'utf8');
const legacyEvents = JSON.parse(legacyText) as Event[];

type Event = Record<string, unknown> & { id: number };
interface RecordedCall {
  id: string;
  name: string;
  input: unknown;
}

function only(input: string) {
  const result = importTranscript(input);
  expect(result.format).toBe('openhands');
  expect(result.conversations).toHaveLength(1);
  const [c] = result.conversations;
  if (!c) throw new Error('no conversation');
  return c;
}

/** The model's replies as the events record them (one per response id), read independently of the importer. */
function recordedReplies(events: readonly Event[]): Array<{ text: string; calls: RecordedCall[] }> {
  const seen = new Set<string>();
  const replies: Array<{ text: string; calls: RecordedCall[] }> = [];
  for (const event of events) {
    const response = (
      event.tool_call_metadata as
        | {
            model_response?: {
              id: string;
              choices: Array<{
                message: { content: string | null; tool_calls: Array<{ id: string; function: { name: string; arguments: string } }> };
              }>;
            };
          }
        | undefined
    )?.model_response;
    if (typeof event.action !== 'string' || !response || seen.has(response.id)) continue;
    seen.add(response.id);
    const message = response.choices[0]!.message;
    replies.push({
      text: message.content ?? '',
      calls: message.tool_calls.map((c) => ({ id: c.id, name: c.function.name, input: JSON.parse(c.function.arguments) as unknown })),
    });
  }
  return replies;
}

/** Observations answering a recorded tool call id: what the model got back for it. */
function recordedResults(events: readonly Event[]): Map<string, { content: string; error: boolean }> {
  const results = new Map<string, { content: string; error: boolean }>();
  for (const event of events) {
    const id = (event.tool_call_metadata as { tool_call_id?: string } | undefined)?.tool_call_id;
    if (typeof event.observation !== 'string' || id === undefined) continue;
    // a command's exit code follows its output, as OpenHands shows it to the model
    const code = (event.extras as { metadata?: { exit_code?: number } } | undefined)?.metadata?.exit_code;
    const content =
      event.observation === 'run' && code !== undefined
        ? `${String(event.content)}\n[The command completed with exit code ${code}.]`
        : String(event.content);
    results.set(id, { content, error: event.observation === 'error' });
  }
  return results;
}

const calls = (messages: readonly NormalizedMessage[]) =>
  messages.flatMap((m) =>
    m.content.flatMap((b): RecordedCall[] => (b.type === 'tool_use' ? [{ id: b.id, name: b.name, input: b.input }] : [])),
  );
const results = (messages: readonly NormalizedMessage[]) =>
  messages.flatMap((m) => m.content.flatMap((b) => (b.type === 'tool_result' ? [b] : [])));
const texts = (m: NormalizedMessage | undefined) => (m?.content ?? []).flatMap((b: Block) => (b.type === 'text' ? [b.text] : []));

describe('OpenHands runs with model responses: the history holds the model’s own calls', () => {
  const c = only(runText);

  it('each assistant message is one reply of the model: its text and exactly its tool calls (names, ids, arguments)', () => {
    const replies = recordedReplies(run.history);
    const assistant = c.messages.filter((m) => m.role === 'assistant');
    expect(assistant).toHaveLength(replies.length);
    assistant.forEach((message, i) => {
      const reply = replies[i]!;
      expect(calls([message])).toEqual(reply.calls);
      expect(texts(message).join('\n')).toBe(reply.text);
    });
    // the agent's tools, never OpenHands' action names
    expect(new Set(calls(c.messages).map((call) => call.name))).toEqual(new Set(['execute_bash', 'str_replace_editor', 'think', 'finish']));
    expect(JSON.stringify(c.messages)).not.toMatch(/impl_source|"start":0|confirmation_state/);
  });

  it('each observation is its call’s result, verbatim, in the message right after the reply, in call order', () => {
    const recorded = recordedResults(run.history);
    const imported = results(c.messages);
    expect(imported.map((r) => r.tool_use_id)).toEqual([...recorded.keys()]);
    for (const result of imported) {
      const expected = recorded.get(result.tool_use_id)!;
      expect(result.content).toBe(expected.content);
      expect(result.is_error === true).toBe(expected.error);
    }
    expect(providerPairingViolations(c.messages)).toEqual([]);
    // the two parallel views: one reply, both results in the one message after it
    const parallel = c.messages.findIndex((m) => calls([m]).length === 2 && calls([m])[0]?.id === 'toolu_01ViewProfile');
    expect(results([c.messages[parallel + 1]!]).map((r) => r.tool_use_id)).toEqual(['toolu_01ViewProfile', 'toolu_01ViewCli']);
  });

  it('a command’s recorded exit code reaches the state: the failing pytest run is an open error until the passing one', () => {
    const ledger = extractLedger(
      c.messages.map((m, i) => ({ ...m, seq: i + 1, tokens: 1, toolUseIds: [], toolResultIds: [], kind: 'message' as const })),
    );
    const pytest = ledger.commands.filter((command) => command.line.includes('pytest'));
    expect(pytest.map((command) => command.exitCode)).toContain(1);
    expect(pytest.some((command) => command.outcome === 'ok')).toBe(true);
  });

  it('keeps an editor error’s detail, flagged as an error', () => {
    const error = results(c.messages).find((r) => r.tool_use_id === 'toolu_01EditNoOld');
    expect(error).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_01EditNoOld',
      content: 'ERROR:\nParameter `old_str` is required for command: str_replace.',
      is_error: true,
    });
  });

  it('the task is the first user message, whole, and the only user request; environment events are no user turns', () => {
    const users = c.messages.filter((m) => m.role === 'user');
    expect(texts(users[0])).toEqual([run.instruction]);
    expect(run.instruction.length).toBeGreaterThan(5_000);
    expect(users.filter((m) => !isMetaTurn(m))).toHaveLength(1);
    // recall and state changes are dropped; the error answering no call stays, as a meta turn
    expect(JSON.stringify(c.messages)).not.toContain('Added workspace context');
    const orphanError = users.find((m) => texts(m)[0]?.startsWith("Parameter 'command' is expected"));
    expect(orphanError?.metadata).toMatchObject({ meta: true, observation: 'error' });
    expect(c.messages[0]).toMatchObject({ role: 'system' });
    expect(c.stats.droppedLines).toBe(4); // recall action, recall observation, two agent_state_changed
  });

  it('a run ending on a call no observation answers leaves that call pending in the last message', () => {
    const last = c.messages.at(-1)!;
    expect(last.role).toBe('assistant');
    expect(calls([last]).map((call) => call.name)).toEqual(['finish']);
    expect(toolPairingReport(c.messages)).toMatchObject({ unanswered: ['toolu_01Finish'], onlyFinalPending: true, orphanResults: [] });
    expect(c.stats).toMatchObject({ unmatchedToolUses: 1, synthesizedToolResults: 0, toolPairs: 9 });
  });

  it('a call whose observation is missing mid-run gets an error result, so the history stays valid', () => {
    const pytest = run.history.find(
      (e) =>
        (e.tool_call_metadata as { tool_call_id?: string } | undefined)?.tool_call_id === 'toolu_01Pytest1' &&
        typeof e.observation === 'string',
    )!;
    const cut = only(JSON.stringify({ ...run, history: run.history.filter((e) => e.id !== pytest.id) }));
    expect(results(cut.messages).find((r) => r.tool_use_id === 'toolu_01Pytest1')).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_01Pytest1',
      content: MISSING_RESULT_TEXT,
      is_error: true,
    });
    expect(cut.stats.synthesizedToolResults).toBe(1);
    expect(providerPairingViolations(cut.messages)).toEqual([]);
  });

  it('a history cut right after an action leaves that reply’s calls pending', () => {
    const index = run.history.findIndex(
      (e) => e.action === 'run' && (e.tool_call_metadata as { tool_call_id?: string }).tool_call_id === 'toolu_01Pytest2',
    );
    const cut = only(JSON.stringify(run.history.slice(0, index + 1)));
    expect(calls([cut.messages.at(-1)!]).map((call) => call.id)).toEqual(['toolu_01Pytest2']);
    expect(providerPairingViolations(cut.messages)).toEqual([]);
    expect(cut.stats.synthesizedToolResults).toBe(0);
  });

  it('records the model and the usage the response reports on each reply', () => {
    const first = c.messages.find((m) => m.role === 'assistant');
    expect(first?.metadata).toMatchObject({ model: 'litellm_proxy/claude-sonnet-4-20250514' });
    expect(first?.usage).toEqual({ inputTokens: 9120, outputTokens: 96 });
  });

  it('reads the same run as a JSON array, as JSON lines, and as [action, observation] pairs', () => {
    const expected = c.messages;
    expect(only(JSON.stringify(run.history)).messages).toEqual(expected);
    expect(only(run.history.map((e) => JSON.stringify(e)).join('\n')).messages).toEqual(expected);
    const paired: unknown[] = [];
    for (let i = 0; i < run.history.length; i++) {
      const event = run.history[i]!;
      const next = run.history[i + 1];
      if (typeof event.action === 'string' && next && next.cause === event.id) {
        paired.push([event, next]);
        i++;
      } else paired.push(event);
    }
    expect(only(JSON.stringify({ instance_id: run.instance_id, history: paired })).messages).toEqual(expected);
  });
});

describe('OpenHands streams without model responses', () => {
  const c = only(legacyText);

  it('names a call after the recorded function name, else the action; takes the arguments from the event', () => {
    expect(
      c.messages.map((m) => `${m.role}:${m.content.map((b) => (b.type === 'tool_use' ? `tool_use(${b.name})` : b.type)).join('+')}`),
    ).toEqual([
      'system:text',
      'user:text',
      'assistant:text+tool_use(execute_bash)',
      'tool:tool_result',
      'assistant:tool_use(str_replace_editor)',
      'tool:tool_result',
      'assistant:text+tool_use(edit)',
      'tool:tool_result',
      'assistant:tool_use(str_replace_editor)',
      'tool:tool_result',
      'assistant:text',
      'user:text',
      'assistant:tool_use(finish)',
    ]);
    expect(c.messages[2]?.content[1]).toEqual({
      type: 'tool_use',
      id: 'toolu_01OhRun3Xc8',
      name: 'execute_bash',
      input: {
        command: 'grep -rn "\\[\'region\'\\]" /workspace/tool',
        is_input: false,
        blocking: false,
        hidden: false,
        confirmation_state: 'confirmed',
      },
    });
    expect(c.messages[6]?.content[1]).toMatchObject({ type: 'tool_use', id: 'openhands-7', name: 'edit' });
    expect(c.messages[7]?.content[0]).toMatchObject({
      type: 'tool_result',
      tool_use_id: 'openhands-7',
      is_error: true,
      content: expect.stringContaining('did not appear verbatim') as unknown,
    });
    expect(c.stats).toMatchObject({ messages: 13, toolPairs: 4, unmatchedToolUses: 1, droppedLines: 2, orphanedToolResults: 0 });
  });

  it('reads evaluation output with instance ids', () => {
    const output = [
      JSON.stringify({ instance_id: 'acme__tool-1', history: legacyEvents }),
      JSON.stringify({ instance_id: 'acme__tool-2', history: legacyEvents.slice(0, 7) }),
    ].join('\n');
    const result = importTranscript(output);
    expect(result.conversations.map((conv) => [conv.id, conv.stats.toolPairs])).toEqual([
      ['acme__tool-1', 4],
      ['acme__tool-2', 2],
    ]);
  });

  it('keeps an observation of an action it never saw as a meta user turn, not an orphaned result nor a request', () => {
    const partial = legacyEvents.filter((e) => e.id !== 3);
    const conv = only(JSON.stringify(partial));
    expect(toolPairingReport(conv.messages).orphanResults).toEqual([]);
    expect(conv.messages[2]).toMatchObject({
      role: 'user',
      content: [{ type: 'text', text: expect.stringContaining('config.py:27') as unknown }],
      metadata: { meta: true },
    });
  });

  it('an action without recorded call that only a state change answers is the agent’s text, not a call', () => {
    const events = [
      ...legacyEvents.slice(0, 2),
      { id: 50, source: 'agent', action: 'think', args: { thought: 'The fallback belongs in load().' } },
      { id: 51, source: 'agent', cause: 50, observation: 'null', content: '', extras: {} },
    ];
    const conv = only(JSON.stringify(events));
    expect(conv.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'The fallback belongs in load().' }] });
    expect(conv.stats).toMatchObject({ unmatchedToolUses: 0, synthesizedToolResults: 0 });
  });
});
