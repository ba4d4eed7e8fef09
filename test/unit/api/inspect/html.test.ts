import { describe, expect, it } from 'vitest';

import { clip, escapeHtml, href, Html, html, render } from '../../../../src/api/inspect/html.js';
import { page } from '../../../../src/api/inspect/views/layout.js';
import { renderBlock, renderMessage } from '../../../../src/api/inspect/views/messages.js';

const HOSTILE = `<script>alert(1)</script><img src=x onerror="alert('x')">&amp;`;

describe('escapeHtml', () => {
  it('escapes the five characters that can end text or an attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
  it('leaves other text as it is, unicode included', () => {
    expect(escapeHtml('tokens → 1,200 ✓ naïve')).toBe('tokens → 1,200 ✓ naïve');
  });
});

describe('html templates', () => {
  it('escapes every interpolated string, in text and in attributes', () => {
    const out = html`<p title="${HOSTILE}">${HOSTILE}</p>`.value;
    expect(out).not.toContain('<script>');
    expect(out).not.toContain('<img');
    expect(out).not.toMatch(/title="[^"]*"[^>]*onerror/);
    expect(out).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(out).toContain('&amp;amp;');
  });
  it('nests Html without escaping it twice, and renders lists, numbers and nothing for null/false', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p>${inner}${[1, html`<br>`, 'x&y']}${null}${false}${undefined}</p>`.value).toBe('<p><b>&lt;i&gt;</b>1<br>x&amp;y</p>');
  });
  it('only values made by the module pass unescaped: a look-alike object is text', () => {
    const fake = { value: '<script>', toString: () => '<script>' } as unknown as string;
    expect(render(fake)).toBe('&lt;script&gt;');
    expect(render(new Html('<ok>'))).toBe('<ok>');
  });
});

describe('href and clip', () => {
  it('builds query strings with encoding and leaves out empty values', () => {
    expect(href('/inspect', { q: 'a b&c', after: 0, tenant: undefined, x: '' })).toBe('/inspect?q=a+b%26c&after=0');
    expect(href('/inspect')).toBe('/inspect');
  });
  it('says how much text it left out', () => {
    expect(clip('abcdef', 4)).toEqual({ text: 'abcd', omitted: 2 });
    expect(clip('abc', 4)).toEqual({ text: 'abc', omitted: 0 });
  });
});

describe('message rendering', () => {
  it('renders text, tool calls and tool results as text, never as markup', () => {
    const out = renderMessage({
      seq: 7,
      role: 'assistant',
      kind: 'message',
      tokens: 12,
      content: [
        { type: 'text', text: HOSTILE },
        { type: 'tool_use', id: 'toolu_1', name: '<b>Bash</b>', input: { command: HOSTILE } },
        { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: HOSTILE }], is_error: true },
      ],
    }).value;
    expect(out).not.toMatch(/<(script|img|b)[\s>]/);
    expect(out).toContain('id="seq-7"');
    expect(out.match(/&lt;script&gt;/g)?.length).toBe(3);
    expect(out).toContain('tool-result error');
  });
  it('cuts a huge block and says how many characters are left out', () => {
    const out = renderBlock({ type: 'text', text: 'x'.repeat(10_000) }, 100).value;
    expect(out).toContain('9,900 more characters');
  });
  it('the page frame loads only its own script and stylesheet, nothing inline', () => {
    const out = page({ title: 'Conversation', body: html`<p>hi</p>` }).value;
    expect(out.match(/<script/g)).toHaveLength(1);
    expect(out).toContain('<script src="/inspect/assets/inspect.js" defer></script>');
    expect(out).not.toMatch(/ style=| on[a-z]+=|<style/);
    const hostile = page({ title: HOSTILE, body: '' }).value;
    expect(hostile.match(/<script/g)).toHaveLength(1);
    expect(hostile).toContain('&lt;script&gt;alert(1)');
  });
});
