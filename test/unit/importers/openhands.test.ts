import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importTranscript } from '../../../src/importers/index.js';
import { toolPairingReport } from '../../helpers/transcripts.js';

// Hand-made, shaped like OpenHands' public event format (there is no real file in the shared set).
const fixture = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/transcripts/openhands-events.json');
const text = readFileSync(fixture, 'utf8');
const events = JSON.parse(text) as Array<Record<string, unknown>>;

function only(input: string, options: Parameters<typeof importTranscript>[1] = {}) {
  const result = importTranscript(input, options);
  expect(result.format).toBe('openhands');
  expect(result.conversations).toHaveLength(1);
  const [c] = result.conversations;
  if (!c) throw new Error('no conversation');
  return c;
}

describe('OpenHands event streams', () => {
  it('maps observed actions to tool pairs named after the action, messages to text', () => {
    const c = only(text);
    expect(c.messages.map((m) => `${m.role}:${m.content.map((b) => (b.type === 'tool_use' ? `tool_use(${b.name})` : b.type)).join('+')}`)).toEqual([
      'system:text',
      'user:text',
      'assistant:text+tool_use(run)',
      'tool:tool_result',
      'assistant:tool_use(read)',
      'tool:tool_result',
      'assistant:text+tool_use(edit)',
      'tool:tool_result',
      'assistant:tool_use(edit)',
      'tool:tool_result',
      'assistant:text',
      'user:text',
      'assistant:text',
    ]);
    // two agent_state_changed observations carry nothing the model read
    expect(c.stats).toMatchObject({ messages: 13, toolPairs: 4, unmatchedToolUses: 0, droppedLines: 2, orphanedToolResults: 0 });
    expect(toolPairingReport(c.messages)).toMatchObject({ orphanResults: [], unanswered: [], duplicateUses: [] });
  });

  it('uses the model’s tool call id when recorded, the event id otherwise, and flags error observations', () => {
    const c = only(text);
    expect(c.messages[2]?.content).toEqual([
      { type: 'text', text: 'Let me find where the region key is read.' },
      {
        type: 'tool_use',
        id: 'toolu_01OhRun3Xc8',
        name: 'run',
        input: { command: 'grep -rn "\\[\'region\'\\]" /workspace/tool', is_input: false, blocking: false, hidden: false, confirmation_state: 'confirmed' },
      },
    ]);
    expect(c.messages[3]?.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_01OhRun3Xc8', content: expect.stringContaining('config.py:27') as unknown });
    expect(c.messages[6]?.content[1]).toMatchObject({ type: 'tool_use', id: 'openhands-7' });
    expect(c.messages[7]?.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'openhands-7', is_error: true });
    // finish has no observation: its final thought is the agent's last word
    expect(c.messages[12]?.content).toEqual([{ type: 'text', text: 'Done: config.py falls back to DEFAULT_REGION.' }]);
  });

  it('reads JSON lines of events, and evaluation output with instance ids', () => {
    const lines = events.map((e) => JSON.stringify(e)).join('\n');
    expect(only(lines).stats).toMatchObject({ messages: 13, toolPairs: 4 });
    const output = [
      JSON.stringify({ instance_id: 'acme__tool-1', history: events }),
      JSON.stringify({ instance_id: 'acme__tool-2', history: events.slice(0, 7) }),
    ].join('\n');
    const result = importTranscript(output);
    expect(result.conversations.map((c) => [c.id, c.stats.toolPairs])).toEqual([
      ['acme__tool-1', 4],
      ['acme__tool-2', 2],
    ]);
  });

  it('turns an observation of an action it never saw into user text, not an orphaned result', () => {
    const partial = events.filter((e) => e.id !== 3);
    const c = only(JSON.stringify(partial));
    expect(toolPairingReport(c.messages).orphanResults).toEqual([]);
    expect(c.messages[2]).toMatchObject({ role: 'user', content: [{ type: 'text', text: expect.stringContaining('config.py:27') as unknown }] });
  });
});
