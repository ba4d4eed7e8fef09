import { UnrecoverableError } from 'bullmq';
import { z } from 'zod';
import { AppError, coerceError } from '../lib/errors.js';
import { isLlmError } from '../llm/port.js';

/**
 * The one boundary where an error becomes BullMQ behaviour (STYLE §4):
 * - payload that fails its schema, or a non-retryable AppError → UnrecoverableError;
 * - an LLM error reaching this point already went through the LLM retry layer, so another
 *   BullMQ attempt would only multiply provider calls → UnrecoverableError;
 * - anything else (database or Redis hiccup, crash) → rethrow, BullMQ retries with backoff.
 */
export function toBullmqError(error: unknown): Error {
  if (error instanceof UnrecoverableError) return error;
  if (error instanceof z.ZodError) return new UnrecoverableError(`invalid job payload: ${error.message}`);
  if (isLlmError(error)) return new UnrecoverableError(`${error.code}: ${error.message}`);
  if (error instanceof AppError && !error.retryable && error.status < 500) return new UnrecoverableError(`${error.code}: ${error.message}`);
  return coerceError(error);
}
