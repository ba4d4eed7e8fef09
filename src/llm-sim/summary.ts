import { readRequest, type SectionName as Section, SECTIONS } from '../compaction/summarize/index.js';
import { createPrng, hashString } from './prng.js';
import type { SimMessage } from './types.js';

/**
 * The simulated model's answer: a deterministic, extractive summary in the seven sections
 * the directive asks for (SPEC §5.4), echoing the identifiers of its input — except a
 * seeded fraction `lossRate` of them, so the identifier check (SPEC §5.6a) has something
 * to catch. Same input and seed, same summary.
 */

export interface SimSummaryOptions {
  countTokens: (text: string) => number;
  extractIdentifiers: (text: string) => string[];
  /** the error-message lines among the identifiers (they go under ERRORS) */
  errorLines: (text: string) => string[];
  /** the file paths among the identifiers (they go under FILES) */
  extractPaths: (text: string) => string[];
  /** fraction of identifiers the summary drops, in [0, 1] */
  lossRate: number;
  seed: number;
  /** length the summary aims for, in tokens; never above `maxTokens` */
  targetTokens: number;
}

export interface SimSummary {
  text: string;
  /** identifiers not dropped by the loss rate (those over the budget are left out too) */
  kept: string[];
  dropped: string[];
}

// Sentences that belong to a section, by what they talk about.
const CUES: ReadonlyArray<[Section, RegExp, SimMessage['role'] | undefined]> = [
  ['ERRORS', /\b(error|fail(?:ed|ure|s)?|exception|traceback|denied|not found|cannot|crash)/i, undefined],
  ['DECISIONS', /\b(decid|decision|chose|choose|going with|agreed|we will|let's|approach)/i, undefined],
  ['USER GUIDANCE', /\b(must|never|always|don't|do not|please|should|prefer|make sure|require)/i, 'user'],
  ['NEXT STEPS', /\b(next|todo|to do|remaining|then|follow[- ]up|will)\b/i, undefined],
  ['TOOL HISTORY', /\b(ran|run|running|called|tool|command|output|exit code|result)\b/i, undefined],
];

export function buildSimSummary(messages: readonly SimMessage[], options: SimSummaryOptions): SimSummary {
  const { content, requested } = splitRequest(messages);
  const contentText = content.map((m) => m.content).join('\n');
  // Identifiers a request names explicitly are always written, as a model told so would.
  const identifiers = unique([...options.extractIdentifiers(contentText), ...requested]);
  const random = createPrng(options.seed ^ hashString(contentText));
  const dropped = identifiers.filter((id) => random() < options.lossRate && !requested.includes(id));
  const kept = identifiers.filter((id) => !dropped.includes(id));
  const redact = redactor(dropped, kept);

  const items = new Map<Section, string[]>(SECTIONS.map((section) => [section, []]));
  const errors = new Set(options.errorLines(contentText));
  const files = new Set(options.extractPaths(contentText));
  const sectionOf = (id: string): Section =>
    errors.has(id) ? 'ERRORS' : files.has(id) || /^https?:\/\//.test(id) ? 'FILES' : 'TASK STATE';
  // Identifiers first (what the directive insists on), then sentences, while the budget lasts.
  const candidates: Array<[Section, string]> = [
    ...kept.map((id): [Section, string] => [sectionOf(id), id]),
    ...rankSentences(content).map(([section, sentence]): [Section, string] => [section, redact(sentence)]),
  ];
  let used = options.countTokens(render(items));
  for (const [section, text] of candidates) {
    const line = `- ${text}`;
    const cost = options.countTokens(line) + 1;
    if (used + cost > options.targetTokens) continue;
    items.get(section)?.push(line);
    used += cost;
  }
  return { text: render(items), kept, dropped };
}

/**
 * The excerpt and the identifiers the request asks for, read as the local summarizer reads
 * a request (src/compaction/summarize/read-request.ts): the fenced turns (or, for a request written
 * without a fence, every message but the system prompt and the final directive). The
 * orientation context is not summarized again.
 */
function splitRequest(messages: readonly SimMessage[]): { content: SimMessage[]; requested: string[] } {
  const reading = readRequest(messages);
  return { content: reading.body, requested: reading.keep };
}

/** Sentences by section: cue matches first (in input order), then the rest as task state. */
function rankSentences(content: readonly SimMessage[]): Array<[Section, string]> {
  const cued: Array<[Section, string]> = [];
  const plain: Array<[Section, string]> = [];
  const seen = new Set<string>();
  for (const message of content) {
    for (const sentence of sentences(message.content)) {
      if (seen.has(sentence)) continue;
      seen.add(sentence);
      const cue = CUES.find(([, pattern, role]) => (role === undefined || role === message.role) && pattern.test(sentence));
      if (cue !== undefined) cued.push([cue[0], sentence]);
      else plain.push(['TASK STATE', sentence]);
    }
  }
  return [...cued, ...plain];
}

function sentences(text: string): string[] {
  return text
    .split(/\n+|(?<=[.!?])\s+(?=[A-Z])/)
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => s.length >= 12)
    .map((s) => (s.length > 240 ? `${s.slice(0, 237)}...` : s));
}

function redactor(dropped: readonly string[], kept: readonly string[]): (text: string) => string {
  // An identifier inside a kept one (app.ts in src/app.ts) cannot be cut without cutting the kept one.
  const cuttable = dropped.filter((d) => !kept.some((k) => k.includes(d))).sort((a, b) => b.length - a.length);
  return (text) => cuttable.reduce((acc, id) => acc.split(id).join('…'), text);
}

function render(items: ReadonlyMap<Section, string[]>): string {
  return SECTIONS.map((section) => {
    const lines = items.get(section) ?? [];
    return `## ${section}\n${lines.length > 0 ? lines.join('\n') : '- none'}`;
  }).join('\n\n');
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values.filter((v) => v.trim() !== ''))];
}
