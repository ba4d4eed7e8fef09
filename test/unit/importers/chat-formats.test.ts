import { describe, expect, it } from 'vitest';

import { detectTranscriptFormat, importTranscript, type TranscriptFormat, TranscriptImportError } from '../../../src/importers/index.js';

const json = (value: unknown) => JSON.stringify(value, null, 2);

function only(text: string, options: Parameters<typeof importTranscript>[1] = {}) {
  const { conversations } = importTranscript(text, options);
  expect(conversations).toHaveLength(1);
  const [c] = conversations;
  if (!c) throw new Error('no conversation');
  return c;
}

function caught(fn: () => unknown): TranscriptImportError {
  try {
    fn();
  } catch (err) {
    if (err instanceof TranscriptImportError) return err;
    throw err;
  }
  throw new Error('expected a TranscriptImportError');
}

const openAIChat = [
  { role: 'system', content: 'You are a travel agent.' },
  { role: 'user', content: 'Book JFK to SEA on May 20.' },
  {
    role: 'assistant',
    content: null,
    refusal: null,
    function_call: null,
    annotations: [],
    tool_calls: [
      { id: 'call_1', type: 'function', index: 0, function: { name: 'search_flights', arguments: '{"from":"JFK","to":"SEA"}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_1', name: 'search_flights', content: '[{"flight":"HAT069"}]' },
  { role: 'assistant', content: 'HAT069 is available.' },
];

describe('OpenAI chat JSON', () => {
  it('maps tool_calls and tool messages to tool_use/tool_result, ignoring SDK-dump fields', () => {
    const c = only(json(openAIChat));
    expect(c.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(c.messages[2]?.content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'search_flights', input: { from: 'JFK', to: 'SEA' } }]);
    expect(c.messages[3]?.content).toEqual([{ type: 'tool_result', tool_use_id: 'call_1', content: '[{"flight":"HAT069"}]' }]);
    expect(c.stats).toMatchObject({ messages: 5, toolPairs: 1, unmatchedToolUses: 0 });
    expect(c.id).toMatch(/^openai-[0-9a-f]{8}$/);
  });

  it('takes {messages} with an id, parsed arguments, and JSON lines', () => {
    const withParsedArgs = openAIChat.map((m) =>
      m.tool_calls
        ? { ...m, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'search_flights', arguments: { from: 'JFK' } } }] }
        : m,
    );
    const c = only(json({ id: 'conv-42', messages: withParsedArgs }));
    expect(c.id).toBe('conv-42');
    expect(c.messages[2]?.content[0]).toMatchObject({ input: { from: 'JFK' } });
    const lines = openAIChat.map((m) => JSON.stringify(m)).join('\n');
    expect(only(lines, { format: 'openai' }).stats.toolPairs).toBe(1);
  });

  it('renames a reused call id and answers each call with its own result', () => {
    const reused = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_X', type: 'function', function: { name: 'a', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_X', content: 'first' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_X', type: 'function', function: { name: 'b', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_X', content: 'second' },
    ];
    const c = only(json(reused));
    expect(c.messages[3]?.content[0]).toMatchObject({ type: 'tool_use', id: 'call_X_2', name: 'b' });
    expect(c.messages[4]?.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'call_X_2', content: 'second' });
    expect(c.stats).toMatchObject({ toolPairs: 2, renamedToolUseIds: 1, unmatchedToolUses: 0 });
  });

  it('drops an assistant message with neither text nor calls, and names an invalid message', () => {
    const c = only(
      json([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: '' },
      ]),
    );
    expect(c.stats).toMatchObject({ messages: 1, droppedLines: 1 });
    const err = caught(() =>
      importTranscript(
        json({
          messages: [
            { role: 'user', content: 'a' },
            { role: 'robot', content: 'b' },
          ],
        }),
        { format: 'openai' },
      ),
    );
    expect(err.code).toBe('TRANSCRIPT_INVALID');
    expect(err.message).toMatch(/^messages\.1: role: must be one of/);
  });
});

describe('Anthropic messages JSON', () => {
  const request = {
    system: [{ type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } }],
    messages: [
      { role: 'user', content: 'List the files.' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'ls will do', signature: 'sig' },
          { type: 'text', text: 'Listing.', citations: null },
          { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'a.ts\nb.ts' }] }] },
    ],
  };

  it('puts the top-level system first, drops thinking and foreign block fields', () => {
    const c = only(json(request));
    expect(c.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(c.messages[0]?.content).toEqual([{ type: 'text', text: 'You are a coding agent.' }]);
    expect(c.messages[2]?.content).toEqual([
      { type: 'text', text: 'Listing.' },
      { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } },
    ]);
    expect(c.stats).toMatchObject({ messages: 4, toolPairs: 1 });
  });

  it('names the message at fault, counting from the file’s messages', () => {
    const bad = {
      system: 'S',
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: [{ type: 'tool_use', name: 'x', input: {} }] },
      ],
    };
    const err = caught(() => importTranscript(json(bad)));
    expect(err.message).toMatch(/^messages\.1: content: /);
  });
});

describe('mini-swe-agent trajectory', () => {
  const trajectory = {
    info: { exit_status: 'Submitted', submission: 'diff', mini_version: '1.15.0', config: {} },
    messages: [
      { role: 'system', content: 'You are a helpful assistant that can interact with a computer.' },
      { role: 'user', content: '<pr_description>Fix the parser.</pr_description>' },
      { role: 'assistant', content: 'THOUGHT: look around.\n\n```bash\nls\n```', extra: { response: { id: 'gen-1' } } },
      { role: 'user', content: '<returncode>0</returncode>\n<output>\nsetup.py\n</output>' },
    ],
    trajectory_format: 'mini-swe-agent-1',
    instance_id: 'acme__parser-12',
  };

  it('keeps roles and text, with the positional action/observation pairing left as text', () => {
    const c = only(json(trajectory));
    expect(c.id).toBe('acme__parser-12');
    expect(c.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(c.messages[2]?.content).toEqual([{ type: 'text', text: 'THOUGHT: look around.\n\n```bash\nls\n```' }]);
    expect(c.stats).toMatchObject({ messages: 4, toolPairs: 0 });
    expect(c.metadata).toMatchObject({ instanceId: 'acme__parser-12', exitStatus: 'Submitted', miniVersion: '1.15.0' });
  });

  it('flags the environment’s turns as meta: only the task is the user’s request', () => {
    const c = only(json(trajectory));
    expect(c.messages.map((m) => m.metadata?.meta ?? null)).toEqual([null, null, null, true]);
  });
});

describe('format detection', () => {
  const cases: Array<[string, string, TranscriptFormat, string?]> = [
    ['OpenAI chat array', json(openAIChat), 'openai'],
    ['plain chat array', json([{ role: 'user', content: 'hi' }]), 'openai'],
    ['Anthropic request', json({ system: 'S', messages: [{ role: 'user', content: 'hi' }] }), 'anthropic'],
    ['Anthropic blocks', json([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] }]), 'anthropic'],
    ['mini-swe-agent', json({ messages: [], trajectory_format: 'mini-swe-agent-1' }), 'mini-swe-agent'],
    ['.traj.json name', json({ messages: [{ role: 'user', content: 'x' }] }), 'mini-swe-agent', 'x.traj.json'],
    ['τ-bench', json([{ task_id: 0, trial: 0, reward: 1, traj: [] }]), 'tau-bench'],
    ['OpenHands events', json([{ id: 0, source: 'user', action: 'message', args: { content: 'hi' } }]), 'openhands'],
    ['OpenHands output', JSON.stringify({ instance_id: 'i', history: [] }), 'openhands'],
    [
      'Claude Code',
      `${JSON.stringify({ type: 'user', sessionId: 's', uuid: 'u', message: { role: 'user', content: 'hi' } })}\n`,
      'claude-code',
    ],
  ];

  it.each(cases)('%s → %s', (_name, text, format, fileName) => {
    expect(detectTranscriptFormat(text, fileName)).toBe(format);
  });

  it('refuses to guess, naming the formats to choose from', () => {
    const err = caught(() => detectTranscriptFormat(json({ hello: 'world' }), 'notes.json'));
    expect(err.code).toBe('TRANSCRIPT_FORMAT_UNKNOWN');
    expect(err.message).toContain('notes.json');
    expect(err.message).toContain('claude-code, openai, anthropic, mini-swe-agent, openhands, tau-bench');
  });

  it('names the line of a syntax error in a pretty-printed document', () => {
    const err = caught(() => importTranscript('[\n  {"role": "user",\n   "content" "hi"}\n]'));
    expect(err).toMatchObject({ code: 'TRANSCRIPT_PARSE_ERROR', line: 3 });
    expect(caught(() => importTranscript('  \n')).message).toContain('empty');
  });
});
