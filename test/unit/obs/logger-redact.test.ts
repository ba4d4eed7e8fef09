import { Writable } from 'node:stream';

import pino from 'pino';
import { describe, expect, it } from 'vitest';

import { REDACTED_PATHS } from '../../../src/obs/logger.js';

describe('log redaction', () => {
  it('never writes a key header, compactd or provider, to the logs', () => {
    const lines: string[] = [];
    const logger = pino(
      { redact: { paths: REDACTED_PATHS, censor: '[redacted]' } },
      new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) }),
    );
    logger.info(
      {
        req: {
          headers: {
            'x-api-key': 'cmp_secret',
            'x-compactd-upstream-key': 'sk-ant-secret',
            authorization: 'Bearer cmp_secret',
            'anthropic-beta': 'b1',
          },
        },
      },
      'request',
    );
    logger.info({ headers: { 'x-compactd-upstream-key': 'sk-other-secret' } }, 'forwarded');
    expect(lines.join('')).not.toContain('secret');
    expect(lines.join('')).toContain('anthropic-beta');
  });
});
