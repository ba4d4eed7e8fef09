/**
 * One error family for the whole service. Adapters turn foreign errors into an AppError;
 * the API maps it to problem+json, the worker to BullMQ behaviour (retry, unrecoverable,
 * rate limit). `code` is SCREAMING_SNAKE and stable.
 */
export interface AppErrorOptions {
  status?: number;
  retryable?: boolean;
  retryAfterMs?: number;
  cause?: unknown;
  /** the request field (dotted path) a 4xx is about */
  field?: string;
  /** extra field-level details for problem+json */
  details?: Array<{ field: string; message: string }>;
}

export class AppError extends Error {
  readonly code: string;
  readonly status: number;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly field: string | undefined;
  readonly details: Array<{ field: string; message: string }> | undefined;

  constructor(code: string, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.status = options.status ?? 500;
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
    this.field = options.field;
    this.details = options.details;
  }
}

export const notFound = (what: string, id: string): AppError =>
  new AppError(`${what.toUpperCase()}_NOT_FOUND`, `${what} ${id} not found`, { status: 404 });

export const badRequest = (code: string, message: string, field?: string): AppError =>
  new AppError(code, message, field === undefined ? { status: 400 } : { status: 400, field, details: [{ field, message }] });

export const conflict = (code: string, message: string): AppError => new AppError(code, message, { status: 409 });

/** Normalises anything thrown into an Error (graphile's coerceError). */
export function coerceError(err: unknown): Error {
  if (err instanceof Error) return err;
  if (typeof err === 'string') return new Error(err);
  try {
    return new Error(JSON.stringify(err));
  } catch {
    return new Error(String(err));
  }
}
