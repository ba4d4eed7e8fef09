import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Prometheus metrics (SPEC §7). `createMetrics()` builds its own registry, never the global
 * default one, so tests (and an API and a worker in one process) can each hold their own.
 * Label values are bounded: job statuses and triggers, phases, providers and configured
 * models, route patterns (never raw URLs), queue names and states.
 */

/** Anything that can report BullMQ job counts (a `Queue`). */
export interface JobCountsSource {
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
}

export const QUEUE_STATES = ['wait', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed'] as const;

/** Steps of a compaction (and the other queue jobs) whose duration is recorded. */
export type Phase = 'plan' | 'summarize' | 'finalize' | 'idle_check' | 'webhook' | 'reconcile';

export interface Metrics {
  registry: Registry;
  jobsFinished: Counter<'status' | 'trigger'>;
  phaseDuration: Histogram<'phase' | 'outcome'>;
  llmRequests: Counter<'provider' | 'model' | 'outcome'>;
  llmDuration: Histogram<'provider' | 'model'>;
  llmTokens: Counter<'provider' | 'model' | 'kind'>;
  llmCost: Counter<'provider' | 'model'>;
  llmRetries: Counter<'provider'>;
  tokensSaved: Counter<'trigger'>;
  queueJobs: Gauge<'queue' | 'state'>;
  jobWaiters: Gauge;
  httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  webhookDeliveries: Counter<'event' | 'outcome'>;
  idleChecks: Counter<'outcome'>;
}

export interface MetricsOptions {
  /** queues whose depth `compactd_queue_jobs` reports, read at scrape time */
  queues?: Readonly<Record<string, JobCountsSource>>;
  /** process metrics (CPU, memory, event loop lag) under `compactd_`; default true */
  processMetrics?: boolean;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'compactd_' });
  return {
    registry,
    ...jobInstruments([registry]),
    ...llmInstruments([registry]),
    ...serviceInstruments([registry], options.queues ?? {}),
  };
}

type Registers = Registry[];

function jobInstruments(registers: Registers) {
  return {
    jobsFinished: new Counter({
      name: 'compactd_jobs_finished_total',
      help: 'Compaction jobs that reached a terminal status in a worker, by status and trigger',
      labelNames: ['status', 'trigger'] as const,
      registers,
    }),
    phaseDuration: new Histogram({
      name: 'compactd_phase_duration_seconds',
      help: 'Duration of one queue step (plan, summarize chunk, finalize incl. commit, idle check, webhook delivery)',
      labelNames: ['phase', 'outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    tokensSaved: new Counter({
      name: 'compactd_tokens_saved_total',
      help: 'Active tokens removed by completed compactions (tokensBefore - tokensAfter)',
      labelNames: ['trigger'] as const,
      registers,
    }),
    idleChecks: new Counter({
      name: 'compactd_idle_checks_total',
      help: 'Idle checks (schedule: idle) by outcome: compacted, rescheduled, or why not',
      labelNames: ['outcome'] as const,
      registers,
    }),
  };
}

function llmInstruments(registers: Registers) {
  const byModel = ['provider', 'model'] as const;
  return {
    llmRequests: new Counter({
      name: 'compactd_llm_requests_total',
      help: 'Summarizer calls (after the retry layer), by provider, model and outcome (ok or the error code)',
      labelNames: [...byModel, 'outcome'] as const,
      registers,
    }),
    llmDuration: new Histogram({
      name: 'compactd_llm_request_duration_seconds',
      help: 'Wall time of summarizer calls, retries and waits included',
      labelNames: byModel,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    llmTokens: new Counter({
      name: 'compactd_llm_tokens_total',
      help: 'Tokens as providers report them, by kind: input, output, cache_read, cache_write',
      labelNames: [...byModel, 'kind'] as const,
      registers,
    }),
    llmCost: new Counter({
      name: 'compactd_llm_cost_usd_total',
      help: 'Summarizer cost in USD from the model registry prices',
      labelNames: byModel,
      registers,
    }),
    llmRetries: new Counter({
      name: 'compactd_llm_retries_total',
      help: 'Provider calls retried by the LLM retry layer (429, 5xx, timeouts)',
      labelNames: ['provider'] as const,
      registers,
    }),
  };
}

function serviceInstruments(registers: Registers, queues: Readonly<Record<string, JobCountsSource>>) {
  return {
    jobWaiters: new Gauge({
      name: 'compactd_job_waiters',
      help: 'Long-polls (GET /v1/jobs/:id?wait=) open in this API process',
      registers,
    }),
    queueJobs: new Gauge({
      name: 'compactd_queue_jobs',
      help: 'Jobs per queue and state, read from Redis at scrape time',
      labelNames: ['queue', 'state'] as const,
      registers,
      async collect() {
        this.reset();
        await Promise.all(
          Object.entries(queues).map(async ([queue, source]) => {
            // A scrape during a Redis outage still returns the other series; the gap shows the outage.
            const counts = await source.getJobCounts(...QUEUE_STATES).catch(() => null);
            if (!counts) return;
            for (const state of QUEUE_STATES) this.set({ queue, state }, counts[state] ?? 0);
          }),
        );
      },
    }),
    httpDuration: new Histogram({
      name: 'compactd_http_request_duration_seconds',
      help: 'HTTP request latency by method, route pattern and status code',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'compactd_webhook_deliveries_total',
      help: 'Webhook delivery attempts by event and outcome (delivered, retry, failed)',
      labelNames: ['event', 'outcome'] as const,
      registers,
    }),
  };
}

/** What the worker reports when a job reaches a terminal status. */
export interface JobOutcome {
  status: string;
  trigger: string;
  result: Record<string, unknown> | null;
}

/** Counts a finished job and, for a completed compaction, the tokens it freed. */
export function recordJobOutcome(metrics: Metrics, job: JobOutcome): void {
  metrics.jobsFinished.inc({ status: job.status, trigger: job.trigger });
  const before = job.result?.['tokensBefore'];
  const after = job.result?.['tokensAfter'];
  if (job.status === 'completed' && typeof before === 'number' && typeof after === 'number' && before > after) {
    metrics.tokensSaved.inc({ trigger: job.trigger }, before - after);
  }
}
