import { describe, expect, it } from 'vitest';

import { validateSummaryOutput } from '../../../../src/compaction/summarize/validate-output.js';

const good = '## TASK STATE\n- fixing the login bug in src/auth/login.ts\n## FILES\n- src/auth/login.ts (edited)';

describe('validateSummaryOutput (SPEC §5.6a)', () => {
  it.each([
    ['a seven-section summary', good, 'end_turn'],
    ['a summary with unknown stop reason', good, null],
    ['OpenAI stop', good, 'stop'],
    ['a polite preface before the sections', `I'm sorry for the length, here it is.\n${good}`, 'end_turn'],
    ['a summary mentioning errors', `${good}\n## ERRORS\n- Error: timeout after 30s`, 'end_turn'],
    ['a free-form summary opening with "Error handling"', 'Error handling in the API client was rewritten to retry on 429.', 'end_turn'],
    ['sections after an error-like first line', `Error: none remaining.\n${good}`, 'end_turn'],
  ])('accepts %s', (_name, text, stop) => {
    expect(validateSummaryOutput(text, stop)).toEqual({ ok: true });
  });

  it.each([
    ['empty', '', 'end_turn', 'empty'],
    ['whitespace', '  \n\t ', 'end_turn', 'empty'],
    ['null', null, 'end_turn', 'empty'],
    ['Anthropic max_tokens', good, 'max_tokens', 'truncated'],
    ['OpenAI length', good, 'length', 'truncated'],
    ['a refusal', "I'm sorry, but I can't help with summarizing this conversation.", 'end_turn', 'refusal'],
    ['an inability', 'I am unable to process this request because it contains sensitive data.', 'end_turn', 'refusal'],
    ['a JSON error body', '{"error":{"type":"overloaded_error","message":"Overloaded"}}', 'end_turn', 'error_text'],
    ['an Anthropic error event', '{"type":"error","error":{"type":"api_error"}}', null, 'error_text'],
    ['an HTML error page', '<!DOCTYPE html><html><body>502 Bad Gateway</body></html>', null, 'error_text'],
    ['a plain error line', 'Error: upstream request timed out while waiting for the model', null, 'error_text'],
    ['a status line', '429 Too Many Requests', null, 'error_text'],
    ['a rate-limit notice', 'Rate limit exceeded, please retry later.', null, 'error_text'],
    ['a fragment', 'ok', 'end_turn', 'too_short'],
  ])('rejects %s', (_name, text, stop, reason) => {
    expect(validateSummaryOutput(text, stop)).toEqual({ ok: false, reason });
  });
});
