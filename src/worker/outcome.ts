import { UnrecoverableError } from 'bullmq';
import { z } from 'zod';

import { AppError, coerceError } from '../lib/errors.js';
import { carriesQuery, publicError } from '../lib/public-error.js';
import { isLlmError } from '../llm/port.js';
import { DeferStep } from './guarded-summary.js';

/** What the queue should do with a failed step. */
export type QueueOutcome =
  | { action: 'retry'; error: Error }
  | { action: 'unrecoverable'; error: UnrecoverableError }
  | { action: 'defer'; delayMs: number; error: Error };

/**
 * The one boundary where an error becomes BullMQ behaviour (STYLE §4):
 * - a provider that asks us to come back later than the in-process retry layer waits
 *   (429/529 with a long retry-after) → defer this step alone for that long (moved to
 *   delayed, no attempt spent); the queue goes on serving every other step;
 * - payload that fails its schema, a non-retryable AppError, or any other LLM error (it
 *   already went through the LLM retry layer; another attempt would multiply calls) →
 *   UnrecoverableError;
 * - anything else (database or Redis hiccup, crash) → retry with backoff. BullMQ keeps the
 *   error as the job's `failedReason` (shown by the dashboard): a failed query goes there as
 *   its public code and message, its SQL and values only to the log.
 */
export function classifyForQueue(error: unknown): QueueOutcome {
  if (error instanceof UnrecoverableError) return { action: 'unrecoverable', error };
  if (error instanceof z.ZodError)
    return { action: 'unrecoverable', error: new UnrecoverableError(`invalid job payload: ${error.message}`) };
  if (error instanceof DeferStep) return { action: 'defer', delayMs: error.delayMs, error };
  if (isLlmError(error)) {
    return { action: 'unrecoverable', error: new UnrecoverableError(`${error.code}: ${error.message}`) };
  }
  if (error instanceof AppError && !error.retryable && error.status < 500) {
    return { action: 'unrecoverable', error: new UnrecoverableError(`${error.code}: ${error.message}`) };
  }
  if (carriesQuery(error)) {
    const { code, message } = publicError(error);
    return { action: 'retry', error: new Error(`${code}: ${message}`) };
  }
  return { action: 'retry', error: coerceError(error) };
}
