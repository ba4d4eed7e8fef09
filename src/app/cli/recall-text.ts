import type { SearchResult } from '../../client/index.js';

/**
 * The `recall` tool's answer as an agent reads it: one block per archived message — seq,
 * role, tool, batch, how it matched — and its matching lines (`>`) with their context lines,
 * each numbered as in the message.
 */
export function renderRecall(query: string, result: SearchResult): string {
  if (result.hits.length === 0) return `No archived message matches ${JSON.stringify(query)}.`;
  const head = `${result.hits.length} archived message${result.hits.length === 1 ? '' : 's'} match ${JSON.stringify(query)}, best first:`;
  const blocks = result.hits.map((hit) => {
    const facts = [
      `seq ${hit.seq}`,
      hit.role,
      `tool ${hit.tool ?? '-'}`,
      `batch ${hit.batchId ?? '-'}`,
      hit.match === 'fragment' ? 'exact fragment' : 'words',
    ];
    const lines = hit.lines.length > 0 ? hit.lines.map((l) => `  ${l.match ? '>' : ' '} ${l.line}: ${l.text}`) : [`    ${hit.snippet}`];
    return [facts.join(' · '), ...lines].join('\n');
  });
  return [head, ...blocks].join('\n\n');
}
