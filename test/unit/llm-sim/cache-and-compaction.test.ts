import { describe, expect, it } from 'vitest';

import { parseLlmSimArgs } from '../../../src/app/cli/llm-sim.js';
import {
  checkCompactionSignature,
  checkThresholdBlock,
  openResponsesItem,
  seal,
  sealResponsesItem,
  sealThresholdBlock,
  signCompaction,
  unseal,
} from '../../../src/llm-sim/compaction-seal.js';
import { applyPromptCache, minCacheableTokens, PromptCacheStore, type PromptLayout } from '../../../src/llm-sim/prompt-cache.js';
import { applySettings, DEFAULT_SETTINGS } from '../../../src/llm-sim/state.js';
import { validateAnthropicRequest } from '../../../src/llm-sim/validate-anthropic.js';

/** llm-sim's prompt-cache arithmetic, compaction seals and compaction-block rules, without HTTP. */

describe('compaction seals', () => {
  it('verifies a signature over the exact content: ok, mismatch for other content, invalid for anything it did not issue', () => {
    const signature = signCompaction('## TASK STATE\n- fix src/a.ts');
    expect(signCompaction('## TASK STATE\n- fix src/a.ts')).toBe(signature);
    expect(checkCompactionSignature('## TASK STATE\n- fix src/a.ts', signature)).toBe('ok');
    expect(checkCompactionSignature('## TASK STATE\n- fix src/a.ts ', signature)).toBe('mismatch');
    expect(checkCompactionSignature('x', `${signature.slice(0, -3)}AAA`)).toBe('invalid');
    expect(checkCompactionSignature('x', 'simsig1.e30.AAAA')).toBe('invalid');
    expect(checkCompactionSignature('x', null)).toBe('invalid');
    expect(checkCompactionSignature('x', sealThresholdBlock('x'))).toBe('invalid');
  });

  it('seals opaquely and opens only what it sealed; each kind opens only its own', () => {
    const sealed = seal({ a: 1 });
    expect(unseal(sealed)).toEqual({ a: 1 });
    expect(unseal(`${sealed.slice(0, -4)}AAAA`)).toBeNull();
    expect(unseal('simenc1.short')).toBeNull();
    const item = sealResponsesItem('the summary of src/b.ts', 'gpt-4.1-mini');
    expect(item).not.toContain('summary');
    expect(openResponsesItem(item)).toBe('the summary of src/b.ts');
    expect(openResponsesItem(sealThresholdBlock('x'))).toBeNull();
    expect(checkThresholdBlock('x', sealThresholdBlock('x'))).toBe('ok');
    expect(checkThresholdBlock('y', sealThresholdBlock('x'))).toBe('mismatch');
    expect(checkThresholdBlock('x', item)).toBe('invalid');
  });
});

describe('compaction blocks in validateAnthropicRequest', () => {
  const signed = { type: 'compaction', content: 'summary', signature: signCompaction('summary') };
  const threshold = { type: 'compaction', content: 'summary', encrypted_content: sealThresholdBlock('summary') };

  it('accepts a signed block opening messages, in an assistant turn (which may then come first) or a user turn', () => {
    expect(
      validateAnthropicRequest({
        messages: [
          { role: 'assistant', content: [signed] },
          { role: 'user', content: 'Go on.' },
        ],
      }),
    ).toBeNull();
    expect(validateAnthropicRequest({ messages: [{ role: 'user', content: [signed, { type: 'text', text: 'Go on.' }] }] })).toBeNull();
  });

  it('names the code first: misplaced, invalid, mismatch', () => {
    const later = validateAnthropicRequest({
      messages: [
        { role: 'user', content: 'Hi.' },
        { role: 'assistant', content: [signed] },
        { role: 'user', content: 'Go.' },
      ],
    });
    expect(later).toEqual({
      param: 'messages.1.content.0',
      message: expect.stringMatching(/^compaction_block_misplaced: messages\.1\.content\.0: /),
    });
    expect(validateAnthropicRequest({ messages: [{ role: 'user', content: [{ ...signed, signature: 'x' }] }] })?.message).toMatch(
      /^compaction_signature_invalid: /,
    );
    expect(validateAnthropicRequest({ messages: [{ role: 'user', content: [{ ...signed, content: 'other' }] }] })?.message).toMatch(
      /^compaction_content_mismatch: /,
    );
    expect(
      validateAnthropicRequest({ messages: [{ role: 'user', content: [{ ...signed, encrypted_content: threshold.encrypted_content }] }] })
        ?.message,
    ).toMatch(/^compaction_signature_invalid: .*not both/);
    expect(validateAnthropicRequest({ messages: [{ role: 'user', content: [{ type: 'compaction', content: '' }] }] })?.param).toBe(
      'messages.0.content.0.content',
    );
  });

  it('accepts a threshold block at the head of an assistant turn anywhere, not inside a user turn', () => {
    expect(
      validateAnthropicRequest({
        messages: [
          { role: 'user', content: 'Hi.' },
          { role: 'assistant', content: [threshold, { type: 'text', text: 'Answer.' }] },
          { role: 'user', content: 'Go.' },
        ],
      }),
    ).toBeNull();
    expect(
      validateAnthropicRequest({
        messages: [
          { role: 'user', content: 'Hi.' },
          { role: 'assistant', content: 'Ok.' },
          { role: 'user', content: [threshold] },
        ],
      })?.message,
    ).toMatch(/^compaction_block_misplaced: messages\.2\.content\.0/);
  });

  it('treats a null-content block (a failed compaction) as a no-op', () => {
    expect(
      validateAnthropicRequest({
        messages: [
          { role: 'user', content: 'Hi.' },
          { role: 'assistant', content: [{ type: 'compaction', content: null, signature: null }] },
          { role: 'user', content: 'Go.' },
        ],
      }),
    ).toBeNull();
  });
});

describe('prompt-cache arithmetic', () => {
  // one token per character keeps the expected numbers readable
  const count = (text: string): number => text.length;
  const block = (text: string, breakpoint = false) => ({ key: text, text, breakpoint: breakpoint ? { ttl: '5m' as const } : null });
  /** One call; what it wrote is readable from `firstTokenAt` (default: at once), as the server publishes it. */
  const call = (store: PromptCacheStore, layout: PromptLayout, model = 'claude-opus-4-5', now = 0, firstTokenAt = now) => {
    const messageTokens = layout.messages.map((m) => count(m.blocks.map((b) => b.text).join('\n')) + 4);
    const { written, ...usage } = applyPromptCache({
      store,
      org: 'k',
      model,
      layout,
      messageTokens,
      overheadTokens: 4,
      countTokens: count,
      ttlMs: 1_000,
      now,
    });
    store.publish(written, firstTokenAt);
    return usage;
  };

  it('counts a breakpoint inside a message as the blocks up to it, joined, plus the overhead', () => {
    const a = 'a'.repeat(1_500);
    const layout: PromptLayout = { scheme: 'anthropic', tools: [], messages: [{ blocks: [block(a), block('bb', true), block('ccc')] }] };
    const store = new PromptCacheStore();
    expect(call(store, layout)).toEqual({ readTokens: 0, writeTokens: 1_500 + 1 + 2 + 4, write1hTokens: 0 });
    expect(call(store, layout, 'claude-opus-4-5', 999)).toEqual({ readTokens: 1_507, writeTokens: 0, write1hTokens: 0 });
    // the hit refreshed the TTL: alive at 1 998, gone 1 000 ms after the last hit
    expect(call(store, layout, 'claude-opus-4-5', 1_998).readTokens).toBe(1_507);
    expect(call(store, layout, 'claude-opus-4-5', 2_999).readTokens).toBe(0);
  });

  it('an entry is readable from the first token of the response that wrote it: calls sent together all write', () => {
    const layout: PromptLayout = {
      scheme: 'anthropic',
      tools: [],
      messages: [{ blocks: [block('s'.repeat(1_200), true)] }, { blocks: [block('q')] }],
    };
    const store = new PromptCacheStore();
    expect(call(store, layout, 'claude-opus-4-5', 0, 300).writeTokens).toBe(1_204);
    expect(call(store, layout, 'claude-opus-4-5', 10, 310)).toEqual({ readTokens: 0, writeTokens: 1_204, write1hTokens: 0 });
    expect(call(store, layout, 'claude-opus-4-5', 300).readTokens).toBe(1_204);
  });

  it('OpenAI: cached tokens in 128-token steps of the longest cached message boundary, nothing under 1,024', () => {
    const store = new PromptCacheStore();
    const first: PromptLayout = {
      scheme: 'openai',
      tools: [],
      messages: [{ blocks: [block('s'.repeat(1_300))] }, { blocks: [block('q1')] }],
    };
    expect(call(store, first, 'gpt-4o')).toEqual({ readTokens: 0, writeTokens: 0, write1hTokens: 0 });
    const second: PromptLayout = { ...first, messages: [...first.messages, { blocks: [block('a1')] }] };
    expect(call(store, second, 'gpt-4o').readTokens).toBe(Math.floor((1_304 + 6) / 128) * 128);
    const short: PromptLayout = { scheme: 'openai', tools: [], messages: [{ blocks: [block('s'.repeat(900))] }] };
    call(store, short, 'gpt-4o');
    expect(call(store, short, 'gpt-4o').readTokens).toBe(0);
  });

  it('keeps the minimum per model in one table', () => {
    expect(minCacheableTokens('claude-haiku-4-5')).toBe(2_048);
    expect(minCacheableTokens('claude-3-5-haiku-20241022')).toBe(2_048);
    expect(minCacheableTokens('claude-sonnet-4-5')).toBe(1_024);
    expect(minCacheableTokens('claude-opus-4-1')).toBe(1_024);
    expect(minCacheableTokens('gpt-4.1-mini')).toBe(1_024);
  });
});

describe('cache settings', () => {
  it('takes --cache-ttl-ms and --no-prompt-cache on the command line', () => {
    expect(parseLlmSimArgs(['--cache-ttl-ms', '60000'])).toMatchObject({ cache: { ttlMs: 60_000 } });
    expect(parseLlmSimArgs(['--no-prompt-cache'])).toMatchObject({ cache: { enabled: false } });
    expect(parseLlmSimArgs([])).not.toHaveProperty('cache');
  });

  it('validates the cache and the clock offset', () => {
    expect(applySettings(DEFAULT_SETTINGS, { cache: { ttlMs: 60_000 } }).cache).toEqual({ enabled: true, ttlMs: 60_000 });
    expect(() => applySettings(DEFAULT_SETTINGS, { cache: { ttlMs: 0 } })).toThrow(/cache.ttlMs/);
    expect(() => applySettings(DEFAULT_SETTINGS, { cache: { enabled: 'yes' as never } })).toThrow(/cache.enabled/);
    expect(() => applySettings(DEFAULT_SETTINGS, { clockOffsetMs: Number.NaN })).toThrow(/clockOffsetMs/);
  });
});
