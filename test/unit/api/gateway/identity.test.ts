import { describe, expect, it } from 'vitest';

import { identifyConversation, threadId } from '../../../../src/api/gateway/identity.js';
import { AppError } from '../../../../src/lib/errors.js';

describe('identifyConversation', () => {
  const body = { system: 'You are a coder.', messages: [{ role: 'user', content: 'fix it' }], metadata: { user_id: 'run-1' } };

  it('prefers the header, then the provider end-user field, then the first-turn hash', () => {
    expect(identifyConversation('anthropic', { 'x-compactd-conversation': 'mine' }, body)).toEqual({ id: 'mine', source: 'header' });
    expect(identifyConversation('anthropic', {}, body)).toEqual({ id: 'run-1', source: 'metadata.user_id' });
    expect(identifyConversation('openai', {}, { messages: [], user: 'u-9' })).toEqual({ id: 'u-9', source: 'user' });
    const hashed = identifyConversation('anthropic', {}, { ...body, metadata: {} });
    expect(hashed.source).toBe('first-turn-hash');
    expect(hashed.id).toMatch(/^h-[0-9a-f]{32}$/);
  });

  it('hashes an end-user value that is not a valid id (Claude Code sends JSON there)', () => {
    const id = identifyConversation('anthropic', {}, { ...body, metadata: { user_id: '{"session_id":"abc"}' } }).id;
    expect(id).toMatch(/^user-[0-9a-f]{32}$/);
    expect(identifyConversation('anthropic', {}, { ...body, metadata: { user_id: '{"session_id":"abd"}' } }).id).not.toBe(id);
  });

  it('gives two runs with the same system prompt and first message one conversation, later turns aside', () => {
    const a = identifyConversation(
      'openai',
      {},
      {
        messages: [
          { role: 'system', content: 's' },
          { role: 'user', content: 'q' },
        ],
      },
    );
    const b = identifyConversation(
      'openai',
      {},
      {
        messages: [
          { role: 'system', content: 's' },
          { role: 'user', content: 'q' },
          { role: 'assistant', content: 'x' },
        ],
      },
    );
    const c = identifyConversation(
      'openai',
      {},
      {
        messages: [
          { role: 'system', content: 's' },
          { role: 'user', content: 'other' },
        ],
      },
    );
    expect(a.id).toBe(b.id);
    expect(c.id).not.toBe(a.id);
  });

  it('refuses an invalid header, naming it', () => {
    let thrown: unknown;
    try {
      identifyConversation('anthropic', { 'x-compactd-conversation': 'a b' }, body);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).field).toBe('headers.x-compactd-conversation');
    expect((thrown as AppError).status).toBe(400);
  });

  it('names a Claude Code session by its header when the body names no end user', () => {
    const plain = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    expect(identifyConversation('anthropic', { 'x-claude-code-session-id': 'fe4d6721-3ad7-4f42-a24a-b95253ffc95f' }, plain)).toEqual({
      id: 'cc-fe4d6721-3ad7-4f42-a24a-b95253ffc95f',
      source: 'session-header',
    });
    expect(identifyConversation('anthropic', { 'x-claude-code-session-id': 'not a/valid id' }, plain).id).toMatch(/^cc-[0-9a-f]{32}$/);
  });

  it('gives a sub-agent its own conversation, linked to its parent agent or else to the session', () => {
    const headers = { 'x-compactd-conversation': 'run-1', 'x-claude-code-agent-id': 'agent7' };
    expect(identifyConversation('anthropic', headers, body)).toEqual({ id: 'run-1.a-agent7', source: 'header', parentId: 'run-1' });
    expect(identifyConversation('anthropic', { ...headers, 'x-claude-code-parent-agent-id': 'agent2' }, body)).toEqual({
      id: 'run-1.a-agent7',
      source: 'header',
      parentId: 'run-1.a-agent2',
    });
    // an agent id that cannot be part of an id is hashed, the result still a valid id
    expect(identifyConversation('anthropic', { ...headers, 'x-claude-code-agent-id': 'a/b c' }, body).id).toMatch(/^a-[0-9a-f]{32}$/);
  });

  it('takes Codex’s session on the Responses route, and the instructions with the first user item otherwise', () => {
    const input = [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are Codex.' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context/>' }] },
    ];
    expect(identifyConversation('responses', { 'session-id': '01a2230f-b819' }, { input })).toEqual({
      id: 'codex-01a2230f-b819',
      source: 'codex-session',
    });
    // the same header means nothing on another wire
    expect(identifyConversation('openai', { 'session-id': '01a2230f-b819' }, { messages: [] }).source).toBe('first-turn-hash');
    const hashed = identifyConversation('responses', {}, { instructions: 'Be brief.', input });
    expect(hashed.id).toMatch(/^h-[0-9a-f]{32}$/);
    expect(
      identifyConversation('responses', {}, { instructions: 'Be brief.', input: [...input, { role: 'user', content: 'more' }] }).id,
    ).toBe(hashed.id);
    expect(identifyConversation('responses', {}, { instructions: 'Other.', input }).id).not.toBe(hashed.id);
  });

  it('names a thread after its first message, within the id rules whatever the base', () => {
    expect(threadId('run-1', 'm0-abc')).toMatch(/^run-1\.t-[0-9a-f]{16}$/);
    expect(threadId('run-1', 'm0-abc')).toBe(threadId('run-1', 'm0-abc'));
    expect(threadId('run-1', 'm0-abd')).not.toBe(threadId('run-1', 'm0-abc'));
    expect(threadId('x'.repeat(128), 'm0-abc')).toMatch(/^t-[0-9a-f]{32}$/);
  });
});
