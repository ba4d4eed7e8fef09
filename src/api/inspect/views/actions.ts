import { type Html, html } from '../html.js';
import { conversationHref, jobHref, type Viewer } from '../viewer.js';
import { page } from './layout.js';

/** Each action is a page of its own that says what will happen, and a form that does it (POST, same origin only). */

type ConversationRef = { externalId: string; tenantId: string };

export function compactConfirmPage(viewer: Viewer, conversation: ConversationRef): Html {
  const back = conversationHref(viewer, conversation);
  return page({
    title: 'Compact now',
    crumbs: [{ label: conversation.externalId, href: back }],
    body: html`<h1>Compact <code>${conversation.externalId}</code> now?</h1>
<p>A compaction job is queued; the job page shows it live. An already active compaction is shown instead of a new one.</p>
<form method="post" action="${conversationHref(viewer, conversation, {}, '/compact')}">
<label for="strategy">Strategy</label>
<select id="strategy" name="strategy"><option value="auto">auto</option><option value="summarize">summarize</option><option value="mask">mask</option><option value="reset">reset</option><option value="native">native</option></select>
<button type="submit">Confirm: compact now</button> <a href="${back}">Cancel</a>
</form>`,
  });
}

export function revertConfirmPage(job: { id: string; conversation: ConversationRef }, viewer: Viewer): Html {
  const back = conversationHref(viewer, job.conversation);
  return page({
    title: 'Revert compaction',
    crumbs: [{ label: job.conversation.externalId, href: back }],
    body: html`<h1>Revert compaction <code>${job.id}</code>?</h1>
<p>The originals it archived come back into the active history and the previous clip-archive is restored. Only the conversation's latest compaction can be reverted.</p>
<form method="post" action="${jobHref(job.id)}/revert">
<button type="submit">Confirm: revert</button> <a href="${jobHref(job.id)}">Cancel</a>
</form>`,
  });
}

export function exportConfirmPage(viewer: Viewer, conversation: ConversationRef): Html {
  const back = conversationHref(viewer, conversation);
  return page({
    title: 'Export',
    crumbs: [{ label: conversation.externalId, href: back }],
    body: html`<h1>Export <code>${conversation.externalId}</code>?</h1>
<p>Downloads the full history as JSONL: every appended message once, as appended (active and archived originals by seq), with the active clip-archive.</p>
<form method="get" action="${conversationHref(viewer, conversation, {}, '/export.jsonl')}">
${'tenantId' in viewer.scope ? '' : html`<input type="hidden" name="tenant" value="${conversation.tenantId}">`}
<button type="submit">Confirm: download JSONL</button> <a href="${back}">Cancel</a>
</form>`,
  });
}

/** An action the JSON API refused: its problem, as text. */
export function problemPage(status: number, title: string, detail: string, back: string | null): Html {
  return page({
    title,
    body: html`<h1>${title}</h1><p class="error-box" role="alert">${status}: ${detail}</p>${back && html`<p><a href="${back}">Back</a></p>`}`,
  });
}
