import type { Table } from '../lib/result.js';
import { fmt } from '../lib/result.js';
import type { RowSizes } from '../lib/storage.js';

/**
 * The capacity arithmetic for a platform of one million active conversations, derived from
 * what the scale-out scenario measured. Every assumption is a named constant printed with
 * the result, so a reader can redo the sums with their own numbers.
 */

export const PLATFORM_ASSUMPTIONS = {
  activeConversations: 1_000_000,
  /** compactions per conversation per day (a long-running agent session compacting every few hours) */
  compactionsPerConversationPerDay: 4,
  /** messages appended per conversation per day (50 agent steps of 4 messages) */
  messagesPerConversationPerDay: 200,
  /** busiest hour over the daily average */
  peakToAverage: 3,
  /** days of history (active + archived) kept per conversation */
  retainedDays: 30,
  /** wall time of the summarize call(s) of one compaction with a real LLM (Haiku-class, ~8k tokens in) */
  llmSecondsPerCompaction: 10,
  /** LLM calls per compaction (one chunk per compaction at these sizes) */
  llmCallsPerCompaction: 1,
  /** summarize jobs in flight per worker process (COMPACTD_SUMMARIZE_CONCURRENCY default) */
  summarizeConcurrencyPerWorker: 32,
} as const;

export interface MeasuredCapacity {
  /** compactions/s of one worker process, instant LLM */
  compactionsPerSecondPerWorker: number;
  /** worker CPU seconds per compaction (user + system, from /proc) */
  workerCpuSecondsPerCompaction: number;
  /** messages/s through one API process */
  messagesPerSecondPerApi: number;
  /** API CPU seconds per message ingested */
  apiCpuSecondsPerMessage: number;
  sizes: RowSizes;
}

const DAY_SECONDS = 86_400;

export interface PlatformEstimate {
  table: Table;
  paragraph: string;
}

export function platformEstimate(m: MeasuredCapacity, a = PLATFORM_ASSUMPTIONS): PlatformEstimate {
  const compactionsPerDay = a.activeConversations * a.compactionsPerConversationPerDay;
  const compactionsAvg = compactionsPerDay / DAY_SECONDS;
  const compactionsPeak = compactionsAvg * a.peakToAverage;
  const workersForCpu = Math.ceil(compactionsPeak / m.compactionsPerSecondPerWorker);
  const workerCores = compactionsPeak * m.workerCpuSecondsPerCompaction;
  const llmInFlight = compactionsPeak * a.llmSecondsPerCompaction * a.llmCallsPerCompaction;
  const workersForSlots = Math.ceil(llmInFlight / a.summarizeConcurrencyPerWorker);
  const llmRpm = compactionsPeak * a.llmCallsPerCompaction * 60;

  const messagesPerDay = a.activeConversations * a.messagesPerConversationPerDay;
  const messagesAvg = messagesPerDay / DAY_SECONDS;
  const messagesPeak = messagesAvg * a.peakToAverage;
  const apisForPeak = Math.ceil(messagesPeak / m.messagesPerSecondPerApi);
  const apiCores = messagesPeak * m.apiCpuSecondsPerMessage;

  const bytesPerConversation =
    a.retainedDays * a.messagesPerConversationPerDay * m.sizes.bytesPerMessage +
    a.retainedDays * a.compactionsPerConversationPerDay * m.sizes.bytesPerCompaction +
    m.sizes.bytesPerConversation;
  const totalBytes = bytesPerConversation * a.activeConversations;
  const writeBytesPerDay = messagesPerDay * m.sizes.bytesPerMessage + compactionsPerDay * m.sizes.bytesPerCompaction;

  const rows: Array<[string, string, string]> = [
    [
      'compactions/day',
      count(compactionsPerDay),
      `${count(a.activeConversations)} conversations × ${a.compactionsPerConversationPerDay}/day`,
    ],
    [
      'compactions/s, average → peak',
      `${fmt(compactionsAvg)} → ${fmt(compactionsPeak)}`,
      `÷ 86,400 s; × ${a.peakToAverage} in the busiest hour`,
    ],
    [
      'worker processes for the peak (CPU, instant LLM)',
      count(workersForCpu),
      `peak ÷ ${fmt(m.compactionsPerSecondPerWorker)} compactions/s measured on one worker`,
    ],
    [
      'worker cores at the peak',
      fmt(workerCores),
      `peak × ${fmt(m.workerCpuSecondsPerCompaction * 1000)} ms worker CPU per compaction (measured)`,
    ],
    [
      'LLM calls in flight at the peak',
      count(llmInFlight),
      `peak × ${a.llmSecondsPerCompaction} s per call × ${a.llmCallsPerCompaction} call(s) (Little's law)`,
    ],
    [
      'worker processes for those calls',
      count(workersForSlots),
      `÷ ${a.summarizeConcurrencyPerWorker} summarize slots per worker (raise COMPACTD_SUMMARIZE_CONCURRENCY to need fewer)`,
    ],
    [
      'LLM requests/min at the peak',
      count(llmRpm),
      'the provider quota needed; COMPACTD_LLM_CONCURRENCY ≥ the calls in flight and COMPACTD_LLM_RPM ≥ this (both provider-wide, defaults 16 and 4,000)',
    ],
    ['messages/day', count(messagesPerDay), `${count(a.activeConversations)} × ${a.messagesPerConversationPerDay}/day`],
    ['messages/s, average → peak', `${count(messagesAvg)} → ${count(messagesPeak)}`, `÷ 86,400 s; × ${a.peakToAverage}`],
    ['API processes for the peak', count(apisForPeak), `peak ÷ ${count(m.messagesPerSecondPerApi)} msg/s measured on one API process`],
    [
      'API cores at the peak',
      fmt(apiCores),
      `peak × ${fmt(m.apiCpuSecondsPerMessage * 1e6)} µs API CPU per message (measured; Postgres CPU not included)`,
    ],
    [
      'Postgres bytes per message (active or archived)',
      count(m.sizes.bytesPerMessage),
      `measured: table + indexes + TOAST ÷ the ${count(m.sizes.rows.messages)} rows this bench run wrote (~0.4 KB "chat" and ~1 KB "agent" messages as JSON)`,
    ],
    [
      'Postgres bytes per compaction',
      count(m.sizes.bytesPerCompaction),
      `measured: jobs + chunks + summary batches ÷ ${count(m.sizes.rows.compactions)} jobs`,
    ],
    [
      'Postgres per conversation',
      bytes(bytesPerConversation),
      `${a.retainedDays} days × (${a.messagesPerConversationPerDay} messages + ${a.compactionsPerConversationPerDay} compactions) + the conversation row`,
    ],
    ['Postgres for the platform', bytes(totalBytes), `× ${count(a.activeConversations)} conversations`],
    ['Postgres written per day', bytes(writeBytesPerDay), 'new messages + compactions, before WAL and replicas'],
  ];
  const paragraph =
    `One million active conversations, each appending ${a.messagesPerConversationPerDay} messages and compacting ${a.compactionsPerConversationPerDay} times a day (peak hour ${a.peakToAverage}× the average), ` +
    `means ${count(compactionsPeak)} compactions/s and ${count(messagesPeak)} messages/s at the peak. From the one-process figures measured here, the compaction CPU needs ` +
    `${count(workersForCpu)} worker process(es) (${fmt(workerCores)} cores), but with a real LLM taking ${a.llmSecondsPerCompaction} s per call, ${count(llmInFlight)} calls are in flight at once: ` +
    `${count(workersForSlots)} worker processes at the default ${a.summarizeConcurrencyPerWorker} summarize slots, COMPACTD_LLM_CONCURRENCY raised to ${count(llmInFlight)} and a provider quota of ${count(llmRpm)} requests/min: ` +
    `${workersForSlots >= workersForCpu ? 'the LLM side (slots and quota), not worker CPU, sizes the worker fleet' : 'worker CPU, not the LLM slots, sizes the worker fleet'}. ` +
    `Ingest needs ${count(apisForPeak)} API process(es) (${fmt(apiCores)} cores) plus the Postgres CPU for the inserts. Keeping ${a.retainedDays} days of history costs ${bytes(bytesPerConversation)} per conversation, ` +
    `${bytes(totalBytes)} in all, growing by ${bytes(writeBytesPerDay)} a day: at that size the message tables want partitioning by conversation hash and an archive retention policy.`;
  return {
    table: {
      title:
        '8c. Arithmetic for 1,000,000 active conversations (assumptions in the right column; measured inputs from 8a, 8b and the bench database)',
      columns: ['quantity', 'value', 'from'],
      rows,
    },
    paragraph,
  };
}

function count(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return Math.round(value).toLocaleString('en-US');
}

function bytes(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let v = value;
  let unit = 0;
  while (v >= 1000 && unit < units.length - 1) {
    v /= 1000;
    unit += 1;
  }
  return `${v >= 100 ? Math.round(v) : v.toFixed(1)} ${units[unit]}`;
}
