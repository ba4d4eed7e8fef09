import { contextText } from '../../../eval/metrics.js';
import { deriveProbes, scoreProbes } from '../../../eval/probes/index.js';
import type { Block, NormalizedMessage } from '../../../src/compaction/types.js';
import type { SimMessage } from './sim-count.js';

/**
 * The continuation-probe score of a context an agent continues from, by the eval's own code
 * (eval/probes): the probes of everything the session did so far (files changed and how, the
 * last errors and failing commands, the user's constraints and latest requests, open tasks),
 * answered or not by the context's text (system prompt included, where compactd puts its
 * clip-archive).
 */

export interface ContextScore {
  answered: number;
  total: number;
  /** null when the session so far has no probe */
  score: number | null;
}

export function scoreContext(
  sessionSoFar: readonly NormalizedMessage[],
  cwd: string | null,
  system: string,
  context: readonly SimMessage[],
): ContextScore {
  const probes = deriveProbes(sessionSoFar, { cwd });
  const messages = [{ content: [{ type: 'text', text: system }] as Block[] }, ...context.map((m) => ({ content: asBlocks(m.content) }))];
  const { answered, total, score } = scoreProbes(probes, contextText(messages));
  return { answered, total, score };
}

/** Blocks as the eval reads them; a provider compaction block is read as the summary text it carries. */
function asBlocks(content: unknown): Block[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return (content as Array<Record<string, unknown>>).map((block) =>
    block['type'] === 'compaction'
      ? { type: 'text', text: typeof block['content'] === 'string' ? block['content'] : '' }
      : (block as unknown as Block),
  );
}
