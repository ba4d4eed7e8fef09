import { formatSeqRanges } from '../../../compaction/context/index.js';
import type { ChunkRow } from '../../../db/repos/chunks.js';
import type { JobRow } from '../../../db/repos/jobs.js';
import type { ForgottenName } from '../../../db/schema.js';
import { ACTIVE_JOB_STATUSES } from '../../../db/schema.js';
import { type Html, html } from '../html.js';
import { conversationHref, jobHref, type Viewer } from '../viewer.js';
import { fmt, page, statusBadge, usd, when } from './layout.js';
import { type TimelineBar, type TimelineMark, timelineSvg } from './svg.js';

export interface JobPageData {
  job: JobRow & { conversationExternalId: string; conversationTenantId: string };
  chunks: readonly ChunkRow[];
  forgotten: readonly ForgottenName[] | null;
  /** the compaction this consolidation follows, when it is one */
  causedBy: string | null;
}

export const isActive = (job: Pick<JobRow, 'status'>): boolean => ACTIVE_JOB_STATUSES.includes(job.status);
const num = (value: unknown): number | null => (typeof value === 'number' ? value : null);

/**
 * An LLM call as a bar: a chunk's row records when it finished (`updatedAt`) and how long
 * its calls took (`latencyMs`), so it started `latencyMs` earlier. Pending chunks run until now.
 */
export function chunkBars(chunks: readonly ChunkRow[], now: Date): TimelineBar[] {
  return chunks.map((c) => {
    const done = c.status === 'done';
    const end = done ? c.updatedAt : now;
    const start = done ? new Date(c.updatedAt.getTime() - c.latencyMs) : c.updatedAt;
    const usage = c.usage;
    const retries = Math.max(0, c.calls - 1);
    const detail = [
      done ? 'done' : 'running',
      c.model ? `${c.provider ?? ''}:${c.model}` : '',
      usage
        ? `in ${usage.inputTokens} / out ${usage.outputTokens} / cache read ${usage.cacheReadTokens} / cache write ${usage.cacheWriteTokens}`
        : '',
      `${c.calls} call${c.calls === 1 ? '' : 's'}${retries > 0 ? ` (${retries} retr${retries === 1 ? 'y' : 'ies'} or repairs)` : ''}`,
      c.fallback ? `fallback: ${c.fallback}` : '',
    ]
      .filter(Boolean)
      .join(' · ');
    return {
      label: `chunk ${c.idx}${c.level > 0 ? ` (level ${c.level})` : ''}`,
      start,
      end,
      detail,
      kind: c.fallback ? 'fallback' : 'call',
    };
  });
}

function timeline(data: JobPageData, now: Date): Html {
  const { job } = data;
  const bars = chunkBars(data.chunks, now);
  const marks: TimelineMark[] = [{ label: 'queued', at: job.createdAt }];
  if (job.startedAt) marks.push({ label: 'plan', at: job.startedAt });
  if (job.finishedAt) marks.push({ label: job.status === 'completed' ? 'commit' : job.status, at: job.finishedAt });
  const times = [job.createdAt, ...bars.flatMap((b) => [b.start, b.end]), job.finishedAt ?? now].map((d) => d.getTime());
  return timelineSvg({ bars, marks, start: new Date(Math.min(...times)), end: new Date(Math.max(...times)) });
}

function callsTable(chunks: readonly ChunkRow[]): Html {
  return html`<table class="list calls"><caption class="sr-only">LLM calls</caption>
<thead><tr><th scope="col">Chunk</th><th scope="col">Seqs</th><th scope="col">Status</th><th scope="col">Model</th><th scope="col">Input</th><th scope="col">Output</th><th scope="col">Cache read / write</th><th scope="col">Calls</th><th scope="col">Latency</th><th scope="col">Cost</th><th scope="col">Fallback</th></tr></thead>
<tbody>${chunks.map(
    (
      c,
    ) => html`<tr><td>${c.idx}${c.level > 0 ? ` (L${c.level})` : ''}</td><td>#${formatSeqRanges(c.seqs)}</td><td>${c.status}</td><td>${c.model ? `${c.provider ?? ''}:${c.model}` : '–'}</td>
<td class="num">${fmt(c.usage?.inputTokens)}</td><td class="num">${fmt(c.usage?.outputTokens)}</td><td class="num">${fmt(c.usage?.cacheReadTokens)} / ${fmt(c.usage?.cacheWriteTokens)}</td>
<td class="num">${c.calls}</td><td class="num">${fmt(c.latencyMs)} ms</td><td class="num">${usd(c.costUsd)}</td><td>${c.fallback ?? ''}</td></tr>`,
  )}</tbody></table>`;
}

function forgottenSection(data: JobPageData, viewer: Viewer): Html {
  const { job, forgotten } = data;
  const counts = job.result?.['forgotten'] as { total?: number; byKind?: Record<string, number> } | undefined;
  const context = job.result?.['context'] as Record<string, unknown> | undefined;
  const search = (name: string) =>
    conversationHref(viewer, { externalId: job.conversationExternalId, tenantId: job.conversationTenantId }, { q: name }) + '#recall-h';
  return html`<section aria-labelledby="after-h"><h2 id="after-h">What the context holds after it</h2>
${
  context &&
  html`<dl class="figures">${Object.entries(context)
    .filter(([, v]) => typeof v === 'number')
    .map(([k, v]) => html`<dt>${k}</dt><dd>${fmt(v as number)}</dd>`)}</dl>`
}
${
  forgotten === null
    ? html`<p class="muted">Nothing recorded (not a completed compaction).</p>`
    : html`<p>${fmt(counts?.total ?? forgotten.length)} names of the summarized span are now only in the archive${
        counts?.byKind
          ? ` (${Object.entries(counts.byKind)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')})`
          : ''
      }; each links to its recall search.</p>
<ul class="forgotten">${forgotten.slice(0, 500).map((n) => html`<li><span class="tag">${n.kind}</span> <a href="${search(n.name)}"><code>${n.name}</code></a></li>`)}</ul>`
}
</section>`;
}

/**
 * The operator's instructions the job's summarizer requests carry: what the result recorded,
 * or, while the job runs, those of the policy it was planned with. Nothing when there are none.
 */
function operatorInstructionsSection(job: JobRow): Html | null {
  const recorded = job.result?.['operatorInstructions'] as { text?: unknown } | undefined;
  const planned = isActive(job) ? job.policy?.['summaryInstructions'] : undefined;
  const text = typeof recorded?.text === 'string' ? recorded.text : typeof planned === 'string' ? planned.trim() : '';
  if (text === '') return null;
  return html`<section aria-labelledby="operator-h"><h2 id="operator-h">Operator's instructions</h2>
<p class="muted">Policy <code>summaryInstructions</code> (${fmt(text.length)} characters), added to every summarizer request of this job in its own fenced section of the system prompt.</p>
<pre class="block-text">${text}</pre>
</section>`;
}

/** How the strategy was chosen (SPEC §5.10), as the job result says. */
function decisionOf(result: Record<string, unknown>): string | null {
  const decision = result['decision'] as { reason?: unknown } | undefined;
  return typeof decision?.reason === 'string' ? decision.reason : null;
}

/** The share of the job's LLM input read from the provider's prompt cache, and the models its cost could not price. */
function cacheShareOf(result: Record<string, unknown>): string {
  const llm = result['llm'] as Record<string, unknown> | undefined;
  const share = num(llm?.['cacheReadShare']);
  const unpriced = Array.isArray(llm?.['unpricedModels']) ? (llm['unpricedModels'] as unknown[]).map(String) : [];
  const shareText = share === undefined || share === null ? '' : ` · ${Math.round(share * 100)}% of its input read from the prompt cache`;
  return unpriced.length === 0 ? shareText : `${shareText} · not priced (no registry prices): ${unpriced.join(', ')}`;
}

/** What the compaction does to the agent's own prompt cache (result.agentCache), at its model's prices. */
function agentCacheRows(result: Record<string, unknown>): Html | null {
  const cache = result['agentCache'] as
    | { model: string; invalidatedTokens: number; nextRequestUsd: number; nextRequestWithoutCompactionUsd: number; laterRequestUsd: number }
    | null
    | undefined;
  if (!cache) return null;
  return html`<dt>The agent's cache</dt><dd>${fmt(cache.invalidatedTokens)} cached tokens invalidated; its next request (${cache.model}) writes the new context for ${usd(cache.nextRequestUsd)} (uncompacted it would read ${usd(cache.nextRequestWithoutCompactionUsd)}), later ones read it for ${usd(cache.laterRequestUsd)}</dd>`;
}

/** The job's options as shown: the agent's system prompt and tools by size, not in full. */
function shownOptions(options: Record<string, unknown>): Record<string, unknown> {
  const agent = options['agent'] as { provider?: unknown; model?: unknown; system?: unknown; tools?: unknown[] } | undefined;
  if (!agent) return options;
  return {
    ...options,
    agent: {
      provider: agent.provider,
      model: agent.model,
      systemChars: JSON.stringify(agent.system ?? '').length,
      tools: agent.tools?.length ?? 0,
    },
  };
}

/** The part of the job page that changes while the job runs; the script re-fetches it until the job is terminal. */
export function jobLive(viewer: Viewer, data: JobPageData, now = new Date()): Html {
  const { job } = data;
  const result = job.result ?? {};
  const cost = num(result['costUsd']) ?? data.chunks.reduce((sum, c) => sum + c.costUsd, 0);
  const consolidation = typeof result['consolidationJobId'] === 'string' ? result['consolidationJobId'] : null;
  return html`<div id="job-live" data-active="${isActive(job) ? '1' : '0'}">
<p>${statusBadge(job.status)} ${job.trigger} · progress ${job.progress.chunksDone}/${job.progress.chunksTotal} chunks · attempts ${job.attempts}${result['revertedAt'] ? html` · <span class="tag">reverted ${when(result['revertedAt'] as string)}</span>` : ''}</p>
<dl class="figures">
<dt>Tokens before</dt><dd>${fmt(num(result['tokensBefore']))}</dd>
<dt>Tokens after</dt><dd>${fmt(num(result['tokensAfter']))}</dd>
<dt>Messages archived</dt><dd>${fmt(num(result['messagesArchived']))}</dd>
<dt>Strategy</dt><dd>${String(result['strategy'] ?? job.options['strategy'] ?? 'auto')}${decisionOf(result) && html` <span class="muted">(${decisionOf(result)})</span>`}</dd>
<dt>Cost</dt><dd>${usd(cost)}${cacheShareOf(result)}</dd>
${agentCacheRows(result)}
<dt>Queued / started / finished</dt><dd>${when(job.createdAt)} / ${when(job.startedAt)} / ${when(job.finishedAt)}</dd>
</dl>
${operatorInstructionsSection(job)}
${job.error && html`<p class="error-box" role="alert">${job.error.code}: ${job.error.message}</p>`}
<h2>Timeline</h2>
<p class="muted">Plan, each LLM call on its own row (bars that overlap ran side by side), then the commit. Hover a bar for its tokens, model, retries and fallback.</p>
${timeline(data, now)}
${callsTable(data.chunks)}
${consolidation && html`<p>This commit caused a consolidation: <a href="${jobHref(consolidation)}">job ${consolidation}</a>.</p>`}
${data.causedBy && html`<p>A consolidation that followed <a href="${jobHref(data.causedBy)}">job ${data.causedBy}</a>.</p>`}
${forgottenSection(data, viewer)}
</div>`;
}

export function jobPage(viewer: Viewer, data: JobPageData): Html {
  const { job } = data;
  const conversation = { externalId: job.conversationExternalId, tenantId: job.conversationTenantId };
  return page({
    title: `Job ${job.id.slice(0, 8)}`,
    crumbs: [
      { label: job.conversationExternalId, href: conversationHref(viewer, conversation) },
      { label: `job ${job.id.slice(0, 8)}`, href: jobHref(job.id) },
    ],
    body: html`<h1>Job <code>${job.id}</code></h1>
<p>Conversation <a href="${conversationHref(viewer, conversation)}"><code>${job.conversationExternalId}</code></a></p>
<h2>Plan</h2>
<p class="muted">${data.chunks.length} chunk${data.chunks.length === 1 ? '' : 's'}${job.watermark ? ` up to #${job.watermark}` : ''}; options ${JSON.stringify(shownOptions(job.options))}</p>
<section data-live="${jobHref(job.id)}/live" aria-live="polite">${jobLive(viewer, data)}</section>`,
  });
}
