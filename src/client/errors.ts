/**
 * Errors of the compactd client. Every failure is one `CompactdError`: an RFC 9457
 * problem+json answer of the service keeps its `status`, `code`, `title`, `detail` and
 * field-level `errors`; failures that never got an answer use `status: 0` and one of the
 * client codes below.
 */

export interface FieldError {
  field: string;
  message: string;
}

/** Codes the client itself raises (the service's codes are open-ended, e.g. `CONVERSATION_NOT_FOUND`). */
export type ClientErrorCode =
  /** no HTTP answer: refused, reset, DNS, TLS */
  | 'CONNECTION_FAILED'
  /** a request exceeded the client's `timeoutMs`, or `waitForJob` its `timeoutMs` */
  | 'TIMEOUT'
  /** the caller's AbortSignal fired */
  | 'ABORTED'
  /** a 2xx answer whose body is not the JSON the route promises */
  | 'INVALID_RESPONSE';

export interface CompactdErrorInit {
  status: number;
  code: string;
  title: string;
  detail?: string | undefined;
  type?: string | undefined;
  instance?: string | undefined;
  errors?: FieldError[] | undefined;
  retryAfterMs?: number | undefined;
  requestId?: string | undefined;
  cause?: unknown;
}

export class CompactdError extends Error {
  /** HTTP status; 0 when no answer arrived */
  readonly status: number;
  /** stable SCREAMING_SNAKE code, e.g. `CONVERSATION_NOT_FOUND`, `VALIDATION_FAILED`, `CONNECTION_FAILED` */
  readonly code: string;
  readonly title: string;
  readonly detail: string | undefined;
  readonly type: string | undefined;
  readonly instance: string | undefined;
  /** field-level details (`field` is a dotted path such as `body.messages.3.role`) */
  readonly errors: FieldError[];
  /** what the service asked for in `retry-after`, when it did */
  readonly retryAfterMs: number | undefined;
  readonly requestId: string | undefined;

  constructor(init: CompactdErrorInit) {
    super(
      init.detail ? `${init.code}: ${init.detail}` : `${init.code}: ${init.title}`,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.name = 'CompactdError';
    this.status = init.status;
    this.code = init.code;
    this.title = init.title;
    this.detail = init.detail;
    this.type = init.type;
    this.instance = init.instance;
    this.errors = init.errors ?? [];
    this.retryAfterMs = init.retryAfterMs;
    this.requestId = init.requestId;
  }
}

/** True for a CompactdError, optionally with the given code (`isCompactdError(e, 'CONVERSATION_NOT_FOUND')`). */
export function isCompactdError(error: unknown, code?: string): error is CompactdError {
  return error instanceof CompactdError && (code === undefined || error.code === code);
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function fieldErrors(value: unknown): FieldError[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter(isRecord).map((e) => ({ field: String(e['field'] ?? ''), message: String(e['message'] ?? '') }));
}

/**
 * The error for a non-2xx answer. A problem+json body is read field by field; anything else
 * (a proxy's HTML page, an empty 502) becomes `HTTP_<status>` with the start of the body as
 * detail, so the caller still sees what came back.
 */
export function errorFromResponse(
  status: number,
  statusText: string,
  bodyText: string,
  meta: { retryAfterMs?: number | undefined; requestId?: string | undefined },
): CompactdError {
  let body: unknown;
  try {
    body = bodyText === '' ? undefined : JSON.parse(bodyText);
  } catch {
    body = undefined;
  }
  if (isRecord(body) && typeof body['code'] === 'string') {
    return new CompactdError({
      status,
      code: body['code'],
      title: typeof body['title'] === 'string' ? body['title'] : statusText,
      detail: typeof body['detail'] === 'string' ? body['detail'] : undefined,
      type: typeof body['type'] === 'string' ? body['type'] : undefined,
      instance: typeof body['instance'] === 'string' ? body['instance'] : undefined,
      errors: fieldErrors(body['errors']),
      ...meta,
    });
  }
  const snippet = bodyText.trim().slice(0, 300);
  return new CompactdError({
    status,
    code: `HTTP_${status}`,
    title: statusText || `HTTP ${status}`,
    detail: snippet === '' ? undefined : snippet,
    ...meta,
  });
}
