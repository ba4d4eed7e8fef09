import { formatSeqRanges } from '../../../compaction/context/index.js';
import type { Ledger } from '../../../compaction/ledger/index.js';
import type { OriginalRow } from '../../../db/repos/archive.js';
import type { SearchHit } from '../../../db/repos/archive-search.js';
import type { ListedConversation } from '../../../db/repos/conversation-list.js';
import type { ConversationRow } from '../../../db/repos/conversations.js';
import type { ListedBatch as BatchRow } from '../../../db/repos/inspector.js';
import type { JobRow } from '../../../db/repos/jobs.js';
import type { MessageRow } from '../../../db/repos/messages.js';
import { effectiveTokens } from '../../views.js';
import { href, type Html, html } from '../html.js';
import { conversationHref, jobHref, type Viewer } from '../viewer.js';
import { counted, fmt, page, statusBadge, when } from './layout.js';
import { renderMessage } from './messages.js';
import { gaugeSvg } from './svg.js';

export interface ConversationPageData {
  conversation: ConversationRow;
  jobs: readonly JobRow[];
  history: { after: number; limit: number; messages: readonly MessageRow[]; batches: readonly BatchRow[]; nextAfter: number | null };
  /** a batch opened in place (a recall hit's link), with the page of originals around the hit */
  opened: { batchId: string; originals: readonly OriginalRow[]; nextAfter: number | null } | null;
  clipArchive: MessageRow | null;
  /** the batch tree's rows (bounded: live ones first) and how many batches there are in all */
  batches: readonly BatchRow[];
  batchTotal: number;
  ledger: Ledger | null;
  recall: { query: string; hits: readonly SearchHit[] } | null;
  notice: string | null;
  /** the conversation it was started from, and those started from it (sub-agents, threads), the first page */
  family: { parent: string | null; children: readonly ListedConversation[]; more: boolean };
}

const isCompaction = (job: JobRow) => job.trigger !== 'consolidate';
const num = (value: unknown): number | null => (typeof value === 'number' ? value : null);

/** The compaction the "revert" action undoes: the latest completed one not reverted yet. */
export function latestRevertible(jobs: readonly JobRow[]): JobRow | null {
  const done = jobs.filter((j) => isCompaction(j) && (j.status === 'completed' || j.status === 'noop'));
  const latest = done.at(-1);
  return latest && latest.status === 'completed' && !latest.result?.['revertedAt'] ? latest : null;
}

/** The originals of one batch: a fragment the page's script loads when the batch is opened, paged by seq. */
export function originalsFragment(
  viewer: Viewer,
  batch: Pick<BatchRow, 'id'>,
  originals: readonly OriginalRow[],
  nextAfter: number | null,
): Html {
  return html`<ol class="messages originals">${originals.map((o) => renderMessage({ ...o, kind: o.kind }, { idPrefix: 'seq' }))}</ol>
${nextAfter !== null && html`<p><a class="more" data-fragment-more href="${href(`/inspect/batches/${batch.id}/originals`, { after: nextAfter })}">More originals (after #${nextAfter})</a></p>`}`;
}

function batchFold(viewer: Viewer, batch: BatchRow, opened: ConversationPageData['opened']): Html {
  const isOpen = opened?.batchId === batch.id;
  const fragment = href(`/inspect/batches/${batch.id}/originals`, { after: 0 });
  return html`<li class="batch-fold" id="batch-${batch.id}">
<details data-originals="${fragment}"${isOpen ? html` open data-loaded="1"` : ''}>
<summary>Archived: ${fmt(batch.sourceMessages)} messages #${formatSeqRanges(batch.seqs)} → batch (${fmt(batch.sourceTokens)} → ${fmt(batch.summaryTokens)} tokens)${batch.supersededBy ? ' · consolidated' : ''}</summary>
<div class="batch-summary"><h4>Batch summary</h4><pre class="block-text">${batch.summary}</pre></div>
<div class="originals-slot" aria-live="polite">${isOpen && opened ? originalsFragment(viewer, batch, opened.originals, opened.nextAfter) : html`<noscript><a href="${fragment}">Originals of this batch</a></noscript>`}</div>
</details></li>`;
}

function historySection(viewer: Viewer, data: ConversationPageData): Html {
  const { history, conversation } = data;
  type Item = { seq: number; order: number; render: () => Html };
  const items: Item[] = [
    ...history.messages.map((m) => ({ seq: m.seq, order: 1, render: () => renderMessage({ ...m, content: m.content }) })),
    ...history.batches.map((b) => ({ seq: b.seqs[0] ?? 0, order: 0, render: () => batchFold(viewer, b, data.opened) })),
  ].sort((a, b) => a.seq - b.seq || a.order - b.order);
  return html`<section aria-labelledby="history-h"><h2 id="history-h">History</h2>
<p class="muted">The active history, ${history.limit} messages a page, with each archived stretch folded into its batch at its place. Page after #${history.after}.</p>
<ol class="messages history">${items.map((item) => item.render())}</ol>
<nav class="pager" aria-label="History pages">${history.after > 0 && html`<a href="${conversationHref(viewer, conversation)}#history-h">First page</a>`}
${history.nextAfter !== null && html`<a href="${conversationHref(viewer, conversation, { after: history.nextAfter })}#history-h">Next page (after #${history.nextAfter})</a>`}</nav>
</section>`;
}

function batchTree(batches: readonly BatchRow[], total: number): Html {
  const children = new Map<string, BatchRow[]>();
  for (const b of batches) if (b.supersededBy) children.set(b.supersededBy, [...(children.get(b.supersededBy) ?? []), b]);
  // a live batch shows its summary (it is in the clip-archive); an absorbed one links to its originals
  const node = (
    b: BatchRow,
  ): Html => html`<li><details><summary>level ${b.level} · #${formatSeqRanges(b.seqs)} · ${fmt(b.sourceMessages)} messages · ${fmt(b.sourceTokens)} → ${fmt(b.summaryTokens)} tokens · ${b.model}${b.supersededBy ? ' · absorbed' : ''}</summary>
<p class="muted">batch ${b.id} · <a href="${jobHref(b.jobId)}">job</a> · <a href="${href(`/inspect/batches/${b.id}/originals`, { after: 0 })}">originals</a> · ${when(b.createdAt)}</p>${b.supersededBy ? '' : html`<pre class="block-text">${b.summary}</pre>`}</details>
${(children.get(b.id) ?? []).length > 0 && html`<ul>${(children.get(b.id) ?? []).map(node)}</ul>`}</li>`;
  const roots = batches.filter((b) => !b.supersededBy || !batches.some((p) => p.id === b.supersededBy));
  return html`<section aria-labelledby="tree-h"><h2 id="tree-h">Batch tree</h2>
${total > batches.length && html`<p class="muted">The ${fmt(batches.length)} live and highest-level batches of ${fmt(total)}; the JSON API lists them all (GET /v1/conversations/:id/batches).</p>`}
${roots.length === 0 ? html`<p class="muted">Nothing archived yet.</p>` : html`<ul class="tree">${[...roots].sort((a, b) => b.level - a.level || (a.seqs[0] ?? 0) - (b.seqs[0] ?? 0)).map(node)}</ul>`}</section>`;
}

/** Items of one ledger list shown at most (the newest); the clip-archive renders the ledger under its own caps. */
const LEDGER_ITEMS = 100;

/** The newest `LEDGER_ITEMS` of a list, newest first, and a line saying how many are left out. */
function newest<T>(items: readonly T[], seq: (item: T) => number): { shown: T[]; more: Html | '' } {
  const shown = [...items].sort((a, b) => seq(b) - seq(a)).slice(0, LEDGER_ITEMS);
  return { shown, more: items.length > shown.length ? html`<p class="muted">… and ${fmt(items.length - shown.length)} older</p>` : '' };
}

function ledgerSection(ledger: Ledger | null): Html {
  if (!ledger)
    return html`<section aria-labelledby="ledger-h"><h2 id="ledger-h">State ledger</h2><p class="muted">No ledger: nothing summarized yet.</p></section>`;
  const requests = newest(ledger.instructions.requests, (r) => r.seq);
  const constraints = newest(ledger.instructions.constraints, (r) => r.seq);
  const files = newest(ledger.files, (f) => f.lastSeq);
  const commands = newest(ledger.commands, (c) => c.lastSeq);
  const errors = newest(ledger.errors, (e) => e.seq);
  return html`<section aria-labelledby="ledger-h"><h2 id="ledger-h">State ledger</h2>
<p class="muted">Computed from the archived tool calls and user turns of the live batches (what the clip-archive's state section is rendered from); newest first.</p>
${ledger.tasks && html`<h3>Tasks</h3><ul>${ledger.tasks.items.slice(0, LEDGER_ITEMS).map((t) => html`<li>[${t.status}] ${t.text}</li>`)}</ul>`}
${requests.shown.length > 0 && html`<h3>Requests (${fmt(ledger.instructions.requests.length)})</h3><ul>${requests.shown.map((r) => html`<li>#${r.seq}: ${r.text}</li>`)}</ul>${requests.more}`}
${constraints.shown.length > 0 && html`<h3>Constraints (${fmt(ledger.instructions.constraints.length)})</h3><ul>${constraints.shown.map((r) => html`<li>#${r.seq}: ${r.text}</li>`)}</ul>${constraints.more}`}
<h3>Files (${fmt(ledger.files.length)})</h3>
<table class="list"><thead><tr><th scope="col">Path</th><th scope="col">Actions</th><th scope="col">Last change</th><th scope="col">Last seq</th></tr></thead>
<tbody>${files.shown.map(
    (f) =>
      html`<tr><td><code>${f.path}</code></td><td>${Object.entries(f.actions)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}</td><td>${f.lastChange ?? ''}${f.gist ? ` – ${f.gist}` : ''}</td><td>#${f.lastSeq}</td></tr>`,
  )}</tbody></table>${files.more}
<h3>Commands (${fmt(ledger.commands.length)})</h3>
<table class="list"><thead><tr><th scope="col">Command</th><th scope="col">Outcome</th><th scope="col">Runs</th><th scope="col">Last seq</th></tr></thead>
<tbody>${commands.shown.map((c) => html`<tr><td><code>${c.line}</code></td><td>${c.outcome}${c.exitCode === undefined ? '' : ` (exit ${c.exitCode})`}</td><td class="num">${c.count}</td><td>#${c.lastSeq}</td></tr>`)}</tbody></table>${commands.more}
<h3>Errors (${fmt(ledger.errors.length)})</h3>
<ul>${errors.shown.map((e) => html`<li>${e.resolved ? html`<span class="tag">resolved</span> ` : html`<span class="tag error">open</span> `}#${e.seq} ${e.tool} <code>${e.target}</code>: ${e.line}</li>`)}</ul>${errors.more}
</section>`;
}

function recallSection(viewer: Viewer, data: ConversationPageData): Html {
  const { conversation, recall } = data;
  // a rewound original belongs to no batch nor job: it links to its place in the conversation
  const hitHref = (hit: SearchHit) =>
    hit.batchId
      ? conversationHref(viewer, conversation, { open: hit.batchId, at: hit.seq }) + `#seq-${hit.seq}`
      : hit.jobId
        ? jobHref(hit.jobId)
        : conversationHref(viewer, conversation) + `#seq-${hit.seq}`;
  return html`<section aria-labelledby="recall-h"><h2 id="recall-h">Search the archive (recall)</h2>
<form method="get" action="${conversationHref(viewer, conversation)}" role="search">
${'tenantId' in viewer.scope ? '' : html`<input type="hidden" name="tenant" value="${conversation.tenantId}">`}
<label for="recall-q">Path, command, error line, id or words</label> <input id="recall-q" name="q" type="search" value="${recall?.query ?? ''}" maxlength="1000" required> <button type="submit">Search</button>
</form>
${
  recall &&
  html`<p>${recall.hits.length} hit${recall.hits.length === 1 ? '' : 's'} for <code>${recall.query}</code>.</p>
<ol class="hits">${recall.hits.map(
    (
      hit,
    ) => html`<li class="hit"><a href="${hitHref(hit)}">#${hit.seq} ${hit.role}${hit.tool ? ` · ${hit.tool}` : ''}</a> <span class="tag">${hit.match}</span>
<pre class="block-text">${hit.lines.length > 0 ? hit.lines.map((l) => `${l.match ? '>' : ' '} ${l.line}: ${l.text}`).join('\n') : (hit.snippet ?? '')}</pre></li>`,
  )}</ol>`
}
</section>`;
}

function gaugeSection(viewer: Viewer, data: ConversationPageData): Html {
  const { conversation, jobs } = data;
  const compactions = jobs
    .filter((j) => j.status === 'completed' && num(j.result?.['tokensBefore']) !== null && !j.result?.['revertedAt'])
    .map((j) => ({
      at: j.finishedAt ?? j.createdAt,
      before: num(j.result?.['tokensBefore']) ?? 0,
      after: num(j.result?.['tokensAfter']) ?? 0,
      href: jobHref(j.id),
      label: j.trigger === 'consolidate' ? 'consolidation' : `${j.trigger} compaction (${String(j.result?.['strategy'] ?? '')})`,
    }));
  const tokens = effectiveTokens(conversation);
  return html`<section aria-labelledby="gauge-h"><h2 id="gauge-h">Context over time</h2>
<p><meter min="0" max="1" low="0.6" high="0.85" optimum="0.3" value="${Math.min(1, tokens / conversation.contextLimit).toFixed(4)}" aria-label="context use now"></meter> ${fmt(tokens)} of ${fmt(conversation.contextLimit)} tokens now · ${counted(conversation.messageCount, 'message')} · ${counted(conversation.compactionCount, 'compaction')}</p>
${gaugeSvg({ compactions, now: { at: new Date(), tokens }, limit: conversation.contextLimit, start: conversation.createdAt })}
<h3>Jobs</h3>
<table class="list"><thead><tr><th scope="col">Job</th><th scope="col">Status</th><th scope="col">Tokens before → after</th><th scope="col">Created</th></tr></thead>
<tbody>${[...jobs]
    .reverse()
    .slice(0, 50)
    .map(
      (j) =>
        html`<tr><td><a href="${jobHref(j.id)}">${j.trigger} ${j.id.slice(0, 8)}</a></td><td>${statusBadge(j.status)}${j.result?.['revertedAt'] ? html` <span class="tag">reverted</span>` : ''}</td><td>${fmt(num(j.result?.['tokensBefore']))} → ${fmt(num(j.result?.['tokensAfter']))}</td><td>${when(j.createdAt)}</td></tr>`,
    )}</tbody></table>
</section>`;
}

function actionsSection(viewer: Viewer, data: ConversationPageData): Html {
  if (viewer.tenantKey === null)
    return html`<p class="muted">Actions (compact, revert, export) are the tenant's: sign in with its API key.</p>`;
  const base = conversationHref(viewer, data.conversation, {}, '');
  const revertible = latestRevertible(data.jobs);
  return html`<nav class="actions" aria-label="Actions">
<a class="button" href="${base}/compact">Compact now…</a>
${revertible && html`<a class="button" href="${jobHref(revertible.id)}/revert">Revert the latest compaction…</a>`}
<a class="button" href="${base}/export">Export…</a></nav>`;
}

/** Where the conversation sits in its agent tree: the session that started it, and its sub-agents and threads. */
function familySection(viewer: Viewer, data: ConversationPageData): Html | null {
  const { parent, children, more } = data.family;
  if (parent === null && children.length === 0) return null;
  const tenantId = data.conversation.tenantId;
  const link = (externalId: string) => html`<a href="${conversationHref(viewer, { externalId, tenantId })}"><code>${externalId}</code></a>`;
  return html`<section aria-labelledby="family-h"><h2 id="family-h">Agent tree</h2>
${parent !== null && html`<p>Started from ${link(parent)}.</p>`}
${
  children.length > 0 &&
  html`<p>Started from here (sub-agents and threads)${more ? ', the first ' + String(children.length) : ''}:</p>
<ul>${children.map((child) => html`<li>${link(child.externalId)} · ${fmt(child.activeMessages)} active messages, ${fmt(child.activeTokens)} tokens${child.model ? ` · ${child.model}` : ''}</li>`)}</ul>`
}
</section>`;
}

export function conversationPage(viewer: Viewer, data: ConversationPageData): Html {
  const c = data.conversation;
  return page({
    title: c.externalId,
    crumbs: [{ label: c.externalId, href: conversationHref(viewer, c) }],
    body: html`<h1>Conversation <code>${c.externalId}</code></h1>
${data.notice && html`<p class="notice" role="status">${data.notice}</p>`}
<p class="muted">model ${c.model ?? 'not set'} · created ${when(c.createdAt)} · updated ${when(c.updatedAt)}</p>
${familySection(viewer, data)}
${actionsSection(viewer, data)}
<nav class="toc" aria-label="Sections"><a href="#gauge-h">Context</a> · <a href="#clip-h">Clip-archive</a> · <a href="#history-h">History</a> · <a href="#tree-h">Batch tree</a> · <a href="#ledger-h">Ledger</a> · <a href="#recall-h">Search</a></nav>
${gaugeSection(viewer, data)}
${recallSection(viewer, data)}
<section aria-labelledby="clip-h"><h2 id="clip-h">Clip-archive, as the agent receives it</h2>
${data.clipArchive ? html`<p class="muted">Message #${data.clipArchive.seq} (${data.clipArchive.role}), ${fmt(data.clipArchive.tokens)} tokens.</p>${(data.clipArchive.content as unknown[]).map((b) => html`<pre class="block-text clip-archive">${(b as { text?: string }).text ?? JSON.stringify(b)}</pre>`)}` : html`<p class="muted">None: nothing compacted (or the compaction was reverted).</p>`}
</section>
${historySection(viewer, data)}
${batchTree(data.batches, data.batchTotal)}
${ledgerSection(data.ledger)}`,
  });
}
