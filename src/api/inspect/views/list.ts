import type { ConversationListItem } from '../../../db/repos/inspector.js';
import { effectiveTokens } from '../../views.js';
import { type Html, html } from '../html.js';
import { conversationHref, isAdmin, jobHref, type Viewer } from '../viewer.js';
import { fmt, page, statusBadge, when } from './layout.js';

export function conversationListPage(viewer: Viewer, items: readonly ConversationListItem[], search: string, limit: number): Html {
  const admin = isAdmin(viewer);
  const rows = items.map(({ conversation: c, tenantName, lastJob }) => {
    const tokens = effectiveTokens(c);
    const ratio = tokens / c.contextLimit;
    return html`<tr>
<td><a href="${conversationHref(viewer, c)}">${c.externalId}</a></td>
${admin && html`<td>${tenantName}</td>`}
<td class="num">${fmt(c.messageCount)}</td>
<td><meter min="0" max="1" low="0.6" high="0.85" optimum="0.3" value="${Math.min(1, ratio).toFixed(4)}" aria-label="context use">${(ratio * 100).toFixed(1)}%</meter> ${fmt(tokens)} / ${fmt(c.contextLimit)}</td>
<td class="num">${fmt(c.compactionCount)}</td>
<td>${lastJob ? html`<a href="${jobHref(lastJob.id)}">${lastJob.trigger}</a> ${statusBadge(lastJob.status)} <span class="muted">${when(lastJob.createdAt)}</span>` : html`<span class="muted">none</span>`}</td>
<td class="muted">${when(c.updatedAt)}</td>
</tr>`;
  });
  return page({
    title: 'Conversations',
    body: html`<h1>Conversations</h1>
<form class="search" method="get" action="/inspect" role="search">
<label for="q">Conversation id contains</label> <input id="q" name="q" type="search" value="${search}" maxlength="256"> <button type="submit">Search</button>
</form>
<p class="muted">${admin ? 'Every tenant (admin token).' : 'Your tenant.'} The ${fmt(limit)} most recently updated${search ? ' matches' : ''} are listed.</p>
<table class="list"><caption class="sr-only">Conversations</caption>
<thead><tr><th scope="col">Id</th>${admin && html`<th scope="col">Tenant</th>`}<th scope="col">Messages</th><th scope="col">Tokens / window</th><th scope="col">Compactions</th><th scope="col">Last job</th><th scope="col">Updated</th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="7">No conversation${search ? ' matches' : ' yet'}.</td></tr>`}</tbody>
</table>`,
  });
}
