import { isMetaText } from '../meta-turns.js';
import { BATCH_SUMMARY_PREFIX, IDENTIFIERS_HEADING, type SectionName, SECTIONS } from '../summarize/index.js';
import type { CountTokens, SummarizeRequest } from '../types.js';
import { type ChunkFacts, extractFacts, keyArgument, sentences, type ToolCallFact } from './local-extract.js';
import { allocate, focusFirst, type Item, requestParts, type SectionItems, type SectionKey } from './local-render.js';

/**
 * The local summarizer (SPEC §7): deterministic, offline and extractive. It fills the same
 * seven sections an LLM is asked for, from the structured request (rendered chunk messages,
 * or batch summaries for a re-summary), within a token budget. Items are chosen by
 * priority (errors, edits, the latest requests first) and shown in chronological order.
 */

export interface LocalSummarizerOptions {
  countTokens: CountTokens;
  maxTokens: number;
}

const DECISION =
  /\b(decid\w*|chose|choos\w*|will use|going with|instead of|approach|because|so that|opt(?:ed)? for|the fix is|root cause)\b/i;
const GUIDANCE = /\b(must|never|always|don'?t|do not|please|prefer\w*|should(?:n'?t)?|make sure|instead|only|avoid|need to|want)\b/i;
const NEXT = /\b(next|then|now I|I'll|I will|let me|let's|todo|remaining|still need|going to|need to)\b/i;
// observation-style user turns (e.g. `<returncode>0</returncode><output>…`) are tool output, not the user's words
const OBSERVATION = /^<(returncode|output|observation|tool_output)\b/i;
const MAX_ITEM_CHARS = 300;

function oneLine(text: string, max = MAX_ITEM_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** Items given newest-first priority, rendered oldest first. */
function newestFirst(texts: readonly string[], max = MAX_ITEM_CHARS): Item[] {
  return texts.map((text, order) => ({ text: oneLine(text, max), order, priority: order }));
}

function outcome(call: ToolCallFact): string {
  if (call.result === null) return 'no result in this excerpt';
  const first =
    call.result
      .split('\n')
      .find((line) => line.trim().length > 0)
      ?.trim() ?? '';
  if (call.failure !== null) return `${call.isError ? 'error' : 'failed'}: ${oneLine(call.failure, 140)}`;
  return first.length > 0 ? oneLine(first, 120) : 'no output';
}

function toolHistory(calls: readonly ToolCallFact[]): Item[] {
  return calls.map((call, order) => {
    const edits = call.name === 'Edit' || call.name === 'Write' || call.name === 'MultiEdit';
    const priority = (call.failure !== null ? 2 : edits ? 1 : 0) * calls.length + order;
    return { text: `${call.name} ${oneLine(keyArgument(call), 120)} → ${outcome(call)}`, order, priority };
  });
}

function taskState(facts: ChunkFacts, userTexts: readonly string[]): Item[] {
  const items: Item[] = [];
  const latest = userTexts.at(-1);
  if (latest !== undefined) items.push({ text: `Latest request: ${oneLine(latest, 400)}`, order: 0, priority: 100 });
  const status = facts.assistantTexts.at(-1);
  if (status !== undefined) items.push({ text: `Latest assistant status: ${oneLine(status, 300)}`, order: 6, priority: 88 });
  facts.todos.forEach((todo, i) => {
    const weight = todo.status === 'in_progress' ? 90 : todo.status === 'pending' ? 80 : 10;
    items.push({ text: `[${todo.status}] ${oneLine(todo.content, 200)}`, order: 10 + i, priority: weight });
  });
  const edited = [...facts.files.values()].filter((a) => a === 'edited' || a === 'written').length;
  const failed = facts.toolCalls.filter((c) => c.failure !== null).length;
  if (facts.toolCalls.length > 0) {
    const text = `Progress: ${facts.toolCalls.length} tool calls (${failed} failed), ${edited} files edited or written`;
    items.push({ text, order: 5, priority: 85 });
  }
  userTexts.slice(0, -1).forEach((text, i) => {
    items.push({ text: `Earlier request: ${oneLine(text, 240)}`, order: 1 + i / 1000, priority: 20 + i / 1000 });
  });
  return items;
}

function files(facts: ChunkFacts): Item[] {
  const rank: Record<string, number> = { edited: 4, written: 4, read: 2, mentioned: 1 };
  const entries = [...facts.files.entries()];
  const items = entries.map(([path, action], order) => ({
    text: action === 'mentioned' ? path : `${path} (${action})`,
    order,
    priority: (rank[action] ?? 1) * entries.length - order,
  }));
  const urls = facts.urls.map((url, i) => ({ text: url, order: entries.length + i, priority: -i }));
  return [...items, ...urls];
}

function pick(texts: readonly string[], pattern: RegExp): string[] {
  return texts.flatMap((text) => sentences(text).filter((s) => pattern.test(s)));
}

function chunkSections(facts: ChunkFacts): SectionItems {
  // meta turns (harness notifications, command wrappers, environment events) are not the user's words either
  const userTexts = facts.userTexts.filter((t) => !OBSERVATION.test(t.trim()) && !isMetaText(t));
  const recentAssistant = facts.assistantTexts.slice(-3);
  const pending = facts.todos.filter((t) => t.status === 'pending' || t.status === 'in_progress').map((t) => t.content);
  return {
    'TASK STATE': taskState(facts, userTexts),
    FILES: files(facts),
    'TOOL HISTORY': toolHistory(facts.toolCalls),
    ERRORS: newestFirst(facts.errors, 200),
    DECISIONS: newestFirst(pick(facts.assistantTexts, DECISION)),
    'USER GUIDANCE': newestFirst(pick(userTexts, GUIDANCE)),
    'NEXT STEPS': newestFirst([...pick(recentAssistant, NEXT), ...pending]),
  };
}

const NAMES = SECTIONS.join('|');
// "## TASK STATE", "1. TASK STATE:", "**TASK STATE**"; lower-case names only as markdown headings,
// so a sentence such as "Files changed: …" is not taken for a section
const HEADING = new RegExp(`^\\s*(?:\\d+[.)]\\s*)?(?:#+\\s*)?\\**\\s*(${NAMES})\\b\\s*\\**\\s*:?\\s*\\**\\s*(.*)$`);
const MARKDOWN_HEADING = new RegExp(`^\\s*#+\\s*(?:\\d+[.)]\\s*)?(${NAMES})\\b\\s*:?\\s*(.*)$`, 'i');

/** Parses a seven-section summary (ours or an LLM's) into section → lines. */
export function parseSections(summary: string): Map<SectionKey, string[]> {
  const sections = new Map<SectionKey, string[]>();
  let current: SectionKey = 'TASK STATE';
  for (const raw of summary.split('\n')) {
    const heading = HEADING.exec(raw) ?? MARKDOWN_HEADING.exec(raw);
    if (heading) current = (heading[1] ?? '').toUpperCase() as SectionName;
    else if (raw.trim() === IDENTIFIERS_HEADING) current = 'IDENTIFIERS';
    const text = (heading ? (heading[2] ?? '') : raw).trim().replace(/^[-*•]\s+/, '');
    if (text.length === 0 || /^none\.?$/i.test(text)) continue;
    const lines = sections.get(current) ?? [];
    if (!lines.includes(text)) lines.push(text);
    sections.set(current, lines);
  }
  return sections;
}

/** Merges batch summaries (oldest first): later facts take priority, duplicates collapse. */
function resummarySections(bodies: readonly string[]): SectionItems {
  const merged = new Map<SectionKey, string[]>();
  for (const body of bodies) {
    const withoutTitle = body.startsWith(BATCH_SUMMARY_PREFIX) ? body.slice(body.indexOf('\n') + 1) : body;
    for (const [name, lines] of parseSections(withoutTitle)) {
      const list = merged.get(name) ?? [];
      for (const line of lines) if (!list.includes(line)) list.push(line);
      merged.set(name, list);
    }
  }
  const sections: SectionItems = {};
  for (const [name, lines] of merged) sections[name] = newestFirst(lines);
  // What the user asked for outranks progress lines: newest-first alone dropped the request of
  // the oldest batch (often the task itself) as soon as later batches brought status lines.
  sections['TASK STATE'] = (sections['TASK STATE'] ?? []).map((item) =>
    REQUEST_LINE.test(item.text) ? { ...item, priority: item.priority + REQUEST_PRIORITY } : item,
  );
  return sections;
}

const REQUEST_LINE = /^(Latest|Earlier) request: /;
/** above any newest-first position, below a focus match (1e6) */
const REQUEST_PRIORITY = 1e5;

/** Summarizes a chunk or re-summary request into the seven sections within `maxTokens`. */
export function summarizeLocally(request: SummarizeRequest, options: LocalSummarizerOptions): string {
  const parts = requestParts(request);
  const isResummary = parts.body.length > 0 && parts.body.every((m) => m.content.startsWith(BATCH_SUMMARY_PREFIX));
  const sections = isResummary ? resummarySections(parts.body.map((m) => m.content)) : chunkSections(extractFacts(parts.body));
  if (parts.missingIdentifiers.length > 0) {
    const retry = newestFirst(parts.missingIdentifiers, 400).map((item) => ({ ...item, priority: 1000 + item.priority }));
    sections['IDENTIFIERS'] = [...retry, ...(sections['IDENTIFIERS'] ?? [])];
  }
  return allocate(focusFirst(sections, parts.focus), options.countTokens, options.maxTokens);
}
