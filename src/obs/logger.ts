import pino, { type Logger } from 'pino';
import type { Config } from '../config/env.js';

export type { Logger };

/** JSON logs, pretty when stdout is a terminal (or LOG_PRETTY says so). */
export function createLogger(config: Pick<Config, 'logLevel' | 'logPretty'>, isTTY = Boolean(process.stdout.isTTY)): Logger {
  const pretty = config.logPretty ?? isTTY;
  return pino({
    level: config.logLevel,
    base: { service: 'compactd' },
    redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' } } } : {}),
  });
}
