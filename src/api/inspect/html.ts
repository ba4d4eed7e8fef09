/**
 * HTML built from tagged templates. Every interpolated value is escaped unless it is already
 * `Html` (made by this module), so messages, summaries and tool output (untrusted) can only
 * ever land in a page as text. One escaping function, used for text and attribute values.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or as a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
}

export type Renderable = Html | string | number | boolean | null | undefined | readonly Renderable[];

/** `null`, `undefined` and `false` render as nothing (so `${cond && html`…`}` reads naturally). */
export function render(value: Renderable): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Renderable[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += render(value) + (strings[i + 1] ?? '');
  });
  return new Html(out);
}

/** A path with query parameters (undefined ones left out), for links and form actions. */
export function href(path: string, query: Record<string, string | number | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(key, String(value));
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

/** Text cut to `max` characters, saying how much was left out (the full text is one click away). */
export function clip(text: string, max: number): { text: string; omitted: number } {
  return text.length <= max ? { text, omitted: 0 } : { text: text.slice(0, max), omitted: text.length - max };
}
