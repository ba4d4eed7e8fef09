import { IDENTIFIERS_HEADING, readRequest, type SectionName, SECTIONS } from '../summarize/index.js';
import type { CountTokens, SummarizeMessage, SummarizeRequest } from '../types.js';

/**
 * Budgeting and rendering for the local summarizer: sections take turns adding their most
 * important remaining item (errors and files first) until the token budget is spent, so no
 * section can starve the others; chosen items are then listed in chronological order.
 */

export interface Item {
  text: string;
  /** chronological position, for display */
  order: number;
  /** higher is chosen first */
  priority: number;
}

export type SectionKey = SectionName | 'IDENTIFIERS';
export type SectionItems = Partial<Record<SectionKey, Item[]>>;

const TURN_ORDER: readonly SectionKey[] = [
  'IDENTIFIERS',
  'ERRORS',
  'FILES',
  'TASK STATE',
  'USER GUIDANCE',
  'NEXT STEPS',
  'DECISIONS',
  'TOOL HISTORY',
];

export interface RequestParts {
  body: SummarizeMessage[];
  focus: string | null;
  missingIdentifiers: string[];
}

/** Separates the conversation (or batch summaries) from the context and directive of a request. */
export function requestParts(request: SummarizeRequest): RequestParts {
  const reading = readRequest(request.messages);
  return { body: reading.body, focus: reading.focus, missingIdentifiers: reading.keep };
}

/** Items mentioning a word of the focus text jump ahead within their section. */
export function focusFirst(sections: SectionItems, focus: string | null): SectionItems {
  const words = (focus ?? '').toLowerCase().match(/[\p{L}\p{N}_./-]{4,}/gu) ?? [];
  if (words.length === 0) return sections;
  const out: SectionItems = {};
  for (const [name, items] of Object.entries(sections) as Array<[SectionKey, Item[]]>) {
    out[name] = items.map((item) =>
      words.some((w) => item.text.toLowerCase().includes(w)) ? { ...item, priority: item.priority + 1e6 } : item,
    );
  }
  return out;
}

function render(chosen: ReadonlyMap<SectionKey, Item[]>): string {
  const blocks = SECTIONS.map((name) => {
    const items = [...(chosen.get(name) ?? [])].sort((a, b) => a.order - b.order);
    const lines = items.length > 0 ? items.map((item) => `- ${item.text}`) : ['- none'];
    return `## ${name}\n${lines.join('\n')}`;
  });
  const identifiers = chosen.get('IDENTIFIERS') ?? [];
  if (identifiers.length > 0) {
    const sorted = [...identifiers].sort((a, b) => a.order - b.order);
    blocks.push(`${IDENTIFIERS_HEADING}\n${sorted.map((item) => `- ${item.text}`).join('\n')}`);
  }
  return blocks.join('\n\n');
}

function queues(sections: SectionItems): Map<SectionKey, Item[]> {
  const out = new Map<SectionKey, Item[]>();
  for (const name of TURN_ORDER) {
    const items = [...(sections[name] ?? [])].sort((a, b) => b.priority - a.priority || a.order - b.order);
    out.set(name, items);
  }
  return out;
}

/** Chooses items by turns within `maxTokens` and renders the summary. */
export function allocate(sections: SectionItems, countTokens: CountTokens, maxTokens: number): string {
  const chosen = new Map<SectionKey, Item[]>(TURN_ORDER.map((name) => [name, []]));
  const pending = queues(sections);
  const picked: Array<[SectionKey, Item]> = [];
  const identifierHeading = (sections.IDENTIFIERS ?? []).length > 0 ? countTokens(`\n\n${IDENTIFIERS_HEADING}`) : 0;
  let budget = maxTokens - countTokens(render(chosen)) - identifierHeading;
  let progressed = true;
  while (progressed) {
    progressed = false;
    for (const name of TURN_ORDER) {
      const queue = pending.get(name) ?? [];
      while (queue.length > 0) {
        const item = queue.shift() as Item;
        const cost = countTokens(`- ${item.text}\n`);
        if (cost > budget) continue;
        chosen.get(name)?.push(item);
        picked.push([name, item]);
        budget -= cost;
        progressed = true;
        break;
      }
    }
  }
  let text = render(chosen);
  // token counts are not exactly additive over joined lines: trim the latest picks until it fits
  while (countTokens(text) > maxTokens && picked.length > 0) {
    const [name, item] = picked.pop() as [SectionKey, Item];
    const list = chosen.get(name) ?? [];
    list.splice(list.indexOf(item), 1);
    text = render(chosen);
  }
  return text;
}
