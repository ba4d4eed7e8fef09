import { z } from 'zod';

import { EMPTY_ALLOW_LIST, parseWebhookAllowList, type WebhookAllowList } from '../lib/webhook-target.js';
import { parseRedisUrl } from './redis-url.js';

/**
 * Environment variables (SPEC §6.1, §7). `loadConfig(env)` is pure: the composition roots
 * call it once with `process.env`; tests call it with literal objects.
 * Defaults work on a machine with Postgres and Redis on their standard local ports.
 */

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
const url = (protocols: string[]) =>
  z.string().refine(
    (value) => {
      try {
        return protocols.includes(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    `must be a URL with scheme ${protocols.join(' or ')}`,
  );

const SummarizerSchema = z
  .string()
  .regex(/^(local|(anthropic|openai):[^\s]+|(anthropic|openai))$/, 'must be local, anthropic:MODEL or openai:MODEL');

/** The defaults of every tenant's quotas (`tenants.max_active_compactions`, `compactions_per_minute` override them). */
export interface TenantQuotas {
  maxActiveCompactions: number;
  compactionsPerMinute: number;
}

export const DEFAULT_TENANT_QUOTAS: TenantQuotas = { maxActiveCompactions: 250, compactionsPerMinute: 600 };
/** Open long-polls per tenant and API process: each costs a socket and a little memory, never a query while it waits. */
export const DEFAULT_MAX_WAITERS_PER_TENANT = 3000;

export const EnvSchema = z.object({
  DATABASE_URL: url(['postgres:', 'postgresql:']).default('postgres://postgres@127.0.0.1:5432/compactd'),
  /** one server, or a Redis Cluster as `redis+cluster://host:port,host:port` (config/redis-url.ts) */
  REDIS_URL: z
    .string()
    .superRefine((text, ctx) => {
      const parsed = parseRedisUrl(text);
      if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.message });
    })
    .default('redis://127.0.0.1:6379'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: int(0, 65535).default(8080),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** pretty logs; unset = pretty when stdout is a terminal */
  LOG_PRETTY: z.stringbool().optional(),

  /** unset = the first configured provider's cheapest model, else local; when set it wins over the base URLs and keys */
  COMPACTD_SUMMARIZER: SummarizerSchema.optional(),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: url(['http:', 'https:']).optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  OPENAI_BASE_URL: url(['http:', 'https:']).optional(),
  COMPACTD_LLM_TIMEOUT_MS: int(100, 600_000).default(120_000),
  COMPACTD_LLM_MAX_ATTEMPTS: int(1, 10).default(4),
  /** provider-wide cap on concurrent calls, shared by every worker process (Redis) */
  COMPACTD_LLM_CONCURRENCY: int(1, 1000).default(16),
  /** provider-wide request rate per minute, shared by every worker process (Redis) */
  COMPACTD_LLM_RPM: int(1, 1_000_000).default(4000),
  /**
   * provider call slots one tenant leaves free for the others while another tenant has been
   * active in the last 5 minutes (queue/fair-slots.ts); at most COMPACTD_LLM_CONCURRENCY - 1 applies
   */
  COMPACTD_TENANT_RESERVED_LLM_SLOTS: int(0, 1000).default(2),

  COMPACTD_BOOTSTRAP_KEY: z.string().min(16, 'must be at least 16 characters').optional(),
  COMPACTD_ADMIN_TOKEN: z.string().min(8, 'must be at least 8 characters').optional(),
  /** when set, GET /metrics requires `Authorization: Bearer <token>` */
  COMPACTD_METRICS_TOKEN: z.string().min(8, 'must be at least 8 characters').optional(),
  /** port on which `compactd worker` serves GET /metrics (the API serves its own); unset: not served */
  COMPACTD_METRICS_PORT: int(0, 65535).optional(),
  /** webhook deliveries: attempts, first backoff (doubling), per-attempt timeout */
  COMPACTD_WEBHOOK_ATTEMPTS: int(1, 50).default(10),
  COMPACTD_WEBHOOK_BACKOFF_MS: int(10, 3_600_000).default(5_000),
  COMPACTD_WEBHOOK_TIMEOUT_MS: int(100, 120_000).default(10_000),
  /** webhook targets allowed although not public: comma-separated host names, addresses, CIDR ranges */
  COMPACTD_WEBHOOK_ALLOW: z
    .string()
    .transform((text, ctx) => {
      const parsed = parseWebhookAllowList(text);
      if (parsed.ok) return parsed.value;
      ctx.addIssue({ code: 'custom', message: `not a host name, address or CIDR range: ${parsed.invalid.join(', ')}` });
      return z.NEVER;
    })
    .optional(),
  /** optional TOML file with default policy and scoring weights */
  COMPACTD_CONFIG: z.string().min(1).optional(),

  /** BullMQ key prefix; wrapped in {…} so every key hashes to one Redis Cluster slot */
  COMPACTD_QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, _ or - only')
    .default('compactd'),
  COMPACTD_COMPACTION_CONCURRENCY: int(1, 256).default(8),
  COMPACTD_SUMMARIZE_CONCURRENCY: int(1, 1024).default(32),
  COMPACTD_SHUTDOWN_TIMEOUT_MS: int(100, 600_000).default(30_000),
  /**
   * reconciler (SPEC §5.6): sweep interval (0: off) and how long a job, or a pending webhook
   * delivery, must sit untouched before it is checked against Redis
   */
  COMPACTD_RECONCILE_EVERY_MS: int(0, 3_600_000).default(15_000),
  COMPACTD_RECONCILE_IDLE_MS: int(100, 3_600_000).default(20_000),
  /**
   * Fault injection, for crash tests only (unset: no effect): a worker waits this long after a
   * job's terminal commit before it hands the job's webhook delivery to Redis, so a test can
   * kill it inside that window.
   */
  COMPACTD_FAULT_PAUSE_BEFORE_DISPATCH_MS: int(0, 3_600_000).default(0),

  /** per-tenant quotas (a tenant's own columns override them): compactions active at once, compactions started per minute */
  COMPACTD_TENANT_MAX_ACTIVE: int(1, 1_000_000).default(DEFAULT_TENANT_QUOTAS.maxActiveCompactions),
  COMPACTD_TENANT_COMPACTIONS_PER_MINUTE: int(1, 1_000_000).default(DEFAULT_TENANT_QUOTAS.compactionsPerMinute),

  /** long-polls (`GET /v1/jobs/:id?wait=`) a tenant may hold open at once in one API process (429 beyond) */
  COMPACTD_TENANT_MAX_WAITERS: int(1, 1_000_000).default(DEFAULT_MAX_WAITERS_PER_TENANT),

  COMPACTD_MAX_BODY_BYTES: int(1024, 1024 * 1024 * 1024).default(16 * 1024 * 1024),
  COMPACTD_MAX_MESSAGE_BYTES: int(256, 1024 * 1024 * 1024).default(2 * 1024 * 1024),

  /** statement_timeout of the API's database connections (the worker's have none): a slower query is a 503 */
  COMPACTD_API_STATEMENT_TIMEOUT_MS: int(100, 3_600_000).default(15_000),
  /** archive searches one tenant may run at once, per API process; the next is a 429 */
  COMPACTD_TENANT_MAX_SEARCHES: int(4, 100_000).default(8),
});

export type Env = z.infer<typeof EnvSchema>;

export interface Config {
  databaseUrl: string;
  redisUrl: string;
  host: string;
  port: number;
  logLevel: Env['LOG_LEVEL'];
  logPretty: boolean | undefined;
  /** COMPACTD_SUMMARIZER (`local` when unset); `explicit` says it was set, so it outranks the provider settings */
  summarizer: { provider: 'local' | 'anthropic' | 'openai'; model: string | undefined; explicit: boolean };
  anthropic: { apiKey: string | undefined; baseUrl: string | undefined };
  openai: { apiKey: string | undefined; baseUrl: string | undefined };
  llm: { timeoutMs: number; maxAttempts: number; concurrency: number; requestsPerMinute: number; tenantReservedSlots: number };
  bootstrapKey: string | undefined;
  adminToken: string | undefined;
  metrics: { token: string | undefined; port: number | undefined };
  webhooks: { attempts: number; backoffMs: number; timeoutMs: number; allow: WebhookAllowList };
  configFile: string | undefined;
  queue: { prefix: string; compactionConcurrency: number; summarizeConcurrency: number };
  reconcile: { everyMs: number; idleMs: number };
  /** fault-injection points (tests only; 0 = off) */
  faults: { pauseBeforeDispatchMs: number };
  shutdownTimeoutMs: number;
  limits: { maxBodyBytes: number; maxMessageBytes: number };
  quotas: TenantQuotas;
  /** the API process's database bound and per-tenant cap on concurrent archive searches */
  apiLimits: { statementTimeoutMs: number; maxSearchesPerTenant: number };
  longPoll: { maxWaitersPerTenant: number };
}

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n${issues.map((line) => `  ${line}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment; throws ConfigError whose lines read `VARIABLE: message`. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  // An empty variable means "not set" (compose files often write `FOO=`).
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  const e = parsed.data;
  const [provider, ...modelParts] = (e.COMPACTD_SUMMARIZER ?? 'local').split(':');
  const model = modelParts.length > 0 ? modelParts.join(':') : undefined;
  return {
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    host: e.HOST,
    port: e.PORT,
    logLevel: e.LOG_LEVEL,
    logPretty: e.LOG_PRETTY,
    summarizer: { provider: provider as Config['summarizer']['provider'], model, explicit: e.COMPACTD_SUMMARIZER !== undefined },
    anthropic: { apiKey: e.ANTHROPIC_API_KEY, baseUrl: e.ANTHROPIC_BASE_URL },
    openai: { apiKey: e.OPENAI_API_KEY, baseUrl: e.OPENAI_BASE_URL },
    llm: {
      timeoutMs: e.COMPACTD_LLM_TIMEOUT_MS,
      maxAttempts: e.COMPACTD_LLM_MAX_ATTEMPTS,
      concurrency: e.COMPACTD_LLM_CONCURRENCY,
      requestsPerMinute: e.COMPACTD_LLM_RPM,
      tenantReservedSlots: e.COMPACTD_TENANT_RESERVED_LLM_SLOTS,
    },
    bootstrapKey: e.COMPACTD_BOOTSTRAP_KEY,
    adminToken: e.COMPACTD_ADMIN_TOKEN,
    metrics: { token: e.COMPACTD_METRICS_TOKEN, port: e.COMPACTD_METRICS_PORT },
    webhooks: {
      attempts: e.COMPACTD_WEBHOOK_ATTEMPTS,
      backoffMs: e.COMPACTD_WEBHOOK_BACKOFF_MS,
      timeoutMs: e.COMPACTD_WEBHOOK_TIMEOUT_MS,
      allow: e.COMPACTD_WEBHOOK_ALLOW ?? EMPTY_ALLOW_LIST,
    },
    configFile: e.COMPACTD_CONFIG,
    queue: {
      prefix: e.COMPACTD_QUEUE_PREFIX,
      compactionConcurrency: e.COMPACTD_COMPACTION_CONCURRENCY,
      summarizeConcurrency: e.COMPACTD_SUMMARIZE_CONCURRENCY,
    },
    reconcile: { everyMs: e.COMPACTD_RECONCILE_EVERY_MS, idleMs: e.COMPACTD_RECONCILE_IDLE_MS },
    faults: { pauseBeforeDispatchMs: e.COMPACTD_FAULT_PAUSE_BEFORE_DISPATCH_MS },
    shutdownTimeoutMs: e.COMPACTD_SHUTDOWN_TIMEOUT_MS,
    limits: { maxBodyBytes: e.COMPACTD_MAX_BODY_BYTES, maxMessageBytes: e.COMPACTD_MAX_MESSAGE_BYTES },
    quotas: { maxActiveCompactions: e.COMPACTD_TENANT_MAX_ACTIVE, compactionsPerMinute: e.COMPACTD_TENANT_COMPACTIONS_PER_MINUTE },
    apiLimits: { statementTimeoutMs: e.COMPACTD_API_STATEMENT_TIMEOUT_MS, maxSearchesPerTenant: e.COMPACTD_TENANT_MAX_SEARCHES },
    longPoll: { maxWaitersPerTenant: e.COMPACTD_TENANT_MAX_WAITERS },
  };
}
