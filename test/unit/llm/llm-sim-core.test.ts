import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';

import { errorLines, extractIdentifiers, extractPaths, findMissingIdentifiers } from '../../../src/compaction/summarize/index.js';
import { IDENTIFIERS_TO_KEEP_INTRO } from '../../../src/compaction/summarize/prompt.js';
import { parseFaultRates, pickFault, validateFaults } from '../../../src/llm-sim/faults.js';
import { createPrng } from '../../../src/llm-sim/prng.js';
import { parseProfile, plannedTiming } from '../../../src/llm-sim/profiles.js';
import { buildSimSummary } from '../../../src/llm-sim/summary.js';
import { type SimMessage, SimRequestError } from '../../../src/llm-sim/types.js';
import { anthropicWire } from '../../../src/llm-sim/wire-anthropic.js';
import { openaiWire } from '../../../src/llm-sim/wire-openai.js';

describe('latency profiles', () => {
  it('haiku: 0.6 s to first token plus prefill, then 70 tokens/s', () => {
    const timing = plannedTiming(parseProfile('haiku'), 12_000, 1_001);
    expect(timing.firstTokenMs).toBeCloseTo(600 + 400, 5);
    expect(timing.totalMs).toBeCloseTo(1_000 + (1_000 / 70) * 1000, 5);
  });

  it('fixed:<ms> takes that long whatever the size; instant takes nothing', () => {
    expect(plannedTiming(parseProfile('fixed:250'), 50_000, 4_000)).toEqual({ firstTokenMs: 250, totalMs: 250 });
    expect(plannedTiming(parseProfile('instant'), 50_000, 4_000)).toEqual({ firstTokenMs: 0, totalMs: 0 });
  });

  it('list-everything: the pace of haiku, answers that list all they see until max_tokens', () => {
    const profile = parseProfile('list-everything');
    expect(profile.listsEverything).toBe(true);
    expect(plannedTiming(profile, 12_000, 1_001)).toEqual(plannedTiming(parseProfile('haiku'), 12_000, 1_001));
    expect(parseProfile('haiku').listsEverything).toBeUndefined();
  });

  it('rejects unknown names', () => {
    expect(() => parseProfile('opus')).toThrow(/unknown latency profile/);
  });
});

describe('faults', () => {
  it('consumes the script before drawing from the rates', () => {
    const faults = validateFaults({ script: ['hang', 'none'], rates: { empty: 1 } });
    expect([pickFault(faults, 0.5), pickFault(faults, 0.5), pickFault(faults, 0.5)]).toEqual(['hang', null, 'empty']);
  });

  it('maps a draw to the cumulative rates', () => {
    const faults = { rates: parseFaultRates('429=0.1,529=0.2,truncated=0.1') };
    expect([0.05, 0.15, 0.35, 0.45].map((draw) => pickFault(faults, draw))).toEqual(['rate_limit', 'overloaded', 'truncated', null]);
  });

  it('validates rates', () => {
    expect(() => validateFaults({ rates: { empty: 0.7, hang: 0.6 } })).toThrow(/more than 1/);
    expect(() => parseFaultRates('teapot=0.1')).toThrow(/unknown fault/);
  });

  it('draws the same sequence from the same seed', () => {
    const a = createPrng(7);
    const b = createPrng(7);
    expect(Array.from({ length: 5 }, a)).toEqual(Array.from({ length: 5 }, b));
  });
});

const MESSAGES: SimMessage[] = [
  { role: 'system', content: 'You summarize.' },
  { role: 'system', content: 'Previous summary mentions old/legacy.ts only.' },
  { role: 'user', content: 'Please fix src/parser.ts. You must never edit migrations/0001_init.sql.' },
  {
    role: 'assistant',
    content:
      'Ran the tests.\nTypeError: Cannot read properties of undefined (reading "length")\nSee https://example.com/issue/42 and ticket ABC-123.',
  },
  { role: 'assistant', content: 'We decided to rewrite tokenize() in src/lexer.ts. Next I will run npm test again.' },
  { role: 'user', content: 'Summarize the excerpt above.' },
];
const summaryDeps = { countTokens, extractIdentifiers, errorLines, extractPaths, seed: 1 };

describe('simulated summary', () => {
  it('writes the seven sections and echoes every identifier without loss', () => {
    const summary = buildSimSummary(MESSAGES, { ...summaryDeps, lossRate: 0, targetTokens: 600 });
    expect(summary.text.match(/^## [A-Z ]+$/gm)).toEqual([
      '## TASK STATE',
      '## FILES',
      '## TOOL HISTORY',
      '## ERRORS',
      '## DECISIONS',
      '## USER GUIDANCE',
      '## NEXT STEPS',
    ]);
    const input = MESSAGES.slice(2, 5)
      .map((m) => m.content)
      .join('\n');
    expect(findMissingIdentifiers(extractIdentifiers(input), summary.text)).toEqual([]);
    expect(summary.text).toMatch(/## ERRORS\n- TypeError: Cannot read properties/);
    expect(summary.text).not.toContain('old/legacy.ts');
  });

  it('drops a seeded share of identifiers, deterministically, but never ones a retry asks for', () => {
    const lossy = buildSimSummary(MESSAGES, { ...summaryDeps, lossRate: 0.6, targetTokens: 600 });
    expect(lossy.dropped.length).toBeGreaterThan(0);
    expect(findMissingIdentifiers(lossy.dropped, lossy.text)).toEqual(lossy.dropped);
    expect(buildSimSummary(MESSAGES, { ...summaryDeps, lossRate: 0.6, targetTokens: 600 }).text).toBe(lossy.text);

    const retry = [
      ...MESSAGES.slice(0, -1),
      { role: 'user' as const, content: `Summarize.\n\n${IDENTIFIERS_TO_KEEP_INTRO}\n${lossy.dropped.map((id) => `- ${id}`).join('\n')}` },
    ];
    const second = buildSimSummary(retry, { ...summaryDeps, lossRate: 0.6, targetTokens: 600 });
    expect(findMissingIdentifiers(lossy.dropped, second.text)).toEqual([]);
  });

  it('stays within its token target', () => {
    const summary = buildSimSummary(MESSAGES, { ...summaryDeps, lossRate: 0, targetTokens: 90 });
    expect(countTokens(summary.text)).toBeLessThanOrEqual(90);
  });
});

describe('wire parsing', () => {
  it('Anthropic: system first, roles kept, blank text rejected as the API does', () => {
    const parsed = anthropicWire.parse({
      model: 'm',
      max_tokens: 10,
      system: [{ type: 'text', text: 'S' }],
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(parsed.messages).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'hi' },
    ]);
    expect(() => anthropicWire.parse({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: ' ' }] })).toThrow(SimRequestError);
    expect(() => anthropicWire.parse({ model: 'm', messages: [{ role: 'user', content: 'x' }] })).toThrow(/max_tokens/);
  });

  it('OpenAI: max_completion_tokens or max_tokens, developer read as system', () => {
    const parsed = openaiWire.parse({
      model: 'm',
      max_completion_tokens: 33,
      messages: [
        { role: 'developer', content: 'D' },
        { role: 'user', content: 'u' },
      ],
    });
    expect(parsed.maxTokens).toBe(33);
    expect(parsed.messages[0]).toEqual({ role: 'system', content: 'D' });
    expect(() => openaiWire.parse({ model: 'm', messages: [{ role: 'wizard', content: 'x' }] })).toThrow(/role/);
  });

  it('renders each API its own error body', () => {
    expect(anthropicWire.error('overloaded', 'busy')).toEqual({
      status: 529,
      body: { type: 'error', error: { type: 'overloaded_error', message: 'busy' } },
    });
    expect(openaiWire.error('rate_limit', 'slow down')).toMatchObject({ status: 429, body: { error: { code: 'rate_limit_exceeded' } } });
  });
});
