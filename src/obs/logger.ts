import pino, { type Logger } from 'pino';

import type { Config } from '../config/env.js';
import { redactError } from './redact-error.js';

export type { Logger };

/** Every header that carries a key: compactd's (Authorization, x-api-key) and the provider key a gateway client passes through. */
export const REDACTED_PATHS = ['authorization', 'x-api-key', 'x-compactd-upstream-key'].flatMap((name) => [
  `req.headers["${name}"]`,
  `headers["${name}"]`,
]);

/** JSON logs, pretty when stdout is a terminal (or LOG_PRETTY says so). */
export function createLogger(config: Pick<Config, 'logLevel' | 'logPretty'>, isTTY = Boolean(process.stdout.isTTY)): Logger {
  const pretty = config.logPretty ?? isTTY;
  return pino({
    level: config.logLevel,
    base: { service: 'compactd' },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // Query values (and so secrets) never reach the logs: see redact-error.ts.
    serializers: { err: redactError, error: redactError },
    ...(pretty
      ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' } } }
      : {}),
  });
}
