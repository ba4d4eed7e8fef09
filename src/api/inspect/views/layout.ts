import { type Html, html, type Renderable } from '../html.js';

/** Where the one stylesheet and the one script are served (routes.ts). */
export const ASSET_PATH = '/inspect/assets';

/** The page frame: no inline script or style anywhere (the CSP forbids both). */
export function page(input: { title: string; body: Renderable; crumbs?: ReadonlyArray<{ label: string; href: string }> }): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${input.title} · compactd inspector</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${ASSET_PATH}/inspect.css">
<script src="${ASSET_PATH}/inspect.js" defer></script>
</head>
<body>
<header class="top"><nav aria-label="Breadcrumb"><a href="/inspect">compactd inspector</a>${(input.crumbs ?? []).map((c) => html` › <a href="${c.href}">${c.label}</a>`)}</nav></header>
<main id="main">
${input.body}
</main>
</body>
</html>`;
}

export const fmt = (n: number | null | undefined): string => (n === null || n === undefined ? '–' : Math.round(n).toLocaleString('en-US'));
/** `1 compaction`, `3 compactions`: a count with its noun. */
export const counted = (n: number, noun: string): string => `${fmt(n)} ${noun}${Math.round(n) === 1 ? '' : 's'}`;
export const when = (d: Date | string | null | undefined): string => (d ? new Date(d).toISOString().replace('T', ' ').slice(0, 19) : '–');
export const usd = (n: number | null | undefined): string => (typeof n === 'number' ? `$${n.toFixed(4)}` : '–');

export function statusBadge(status: string): Html {
  return html`<span class="status status-${status}">${status}</span>`;
}
