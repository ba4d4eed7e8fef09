import { countTokens } from '../src/lib/count-tokens.js';
import { type Coverage, coverage, explicitInstructions, indexContext, userRequests, type UserStatement } from './instructions.js';
import {
  contextText,
  type EvalMessage,
  type IdentifierKind,
  identifierRetention,
  type Retention,
  type SpanIdentifier,
  spanIdentifiers,
  stripIdentifierLists,
} from './metrics.js';
import { type Probe, type ProbeScore, scoreProbes } from './probes/index.js';

/**
 * One function computes every measure of one resulting context, whoever produced it
 * (compactd's active history after a compaction, or a peer's summary), against the facts
 * of the span it replaced.
 */

/** What a span holds that a summary should keep, computed once per case. */
export interface SpanFacts {
  identifiers: SpanIdentifier[];
  instructions: UserStatement[];
  requests: UserStatement[];
}

export function spanFacts(messages: readonly EvalMessage[]): SpanFacts {
  // system messages are never compacted (protected); Claude Code sessions have none
  const span = messages.filter((m) => m.role !== 'system');
  return { identifiers: spanIdentifiers(span), instructions: explicitInstructions(span), requests: userRequests(span) };
}

export interface RetentionSummary {
  found: number;
  total: number;
  ratio: number;
  byKind: Retention['byKind'];
}

export interface CoverageSummary {
  covered: number;
  total: number;
  ratio: number | null;
}

export interface ContextMeasures {
  tokensBefore: number;
  tokensAfter: number;
  /** tokens of the summaries (the clip-archive message, or the peer's summary) */
  summaryTokens: number;
  /** 1 − after / before */
  reduction: number;
  /** the summaries as written, without the gate's appended identifier lists */
  retentionBeforeGate: RetentionSummary;
  retentionAfterGate: RetentionSummary;
  /** the level-0 chunk summaries (after the gate) and the kept messages: what survived before any re-summary */
  retentionBeforeResummary: RetentionSummary | null;
  instructions: CoverageSummary;
  requests: CoverageSummary;
  /** a few identifiers lost after the gate, per kind, for the analysis */
  lostExamples: Partial<Record<IdentifierKind, string[]>>;
  /** user statements not covered (the first few, each cut to a few lines) */
  missedStatements: string[];
  /** continuation probes of the span this context replaced, answered from the context alone (every miss listed) */
  probes: ProbeMeasures | null;
}

export interface ProbeMeasures extends ProbeScore {
  /** messages of the span the probes were derived from */
  spanMessages: number;
}

/** A resulting context: the summary part (gate lists may be stripped from it) and what was kept verbatim. */
export interface ResultContext {
  summaries: string;
  kept: readonly EvalMessage[];
  /** every level-0 summary, re-summarized or not (compactd only) */
  chunkSummaries?: readonly string[];
  /** the probes of the span this context replaced */
  probes?: { probes: readonly Probe[]; spanMessages: number };
}

const EXAMPLES_PER_KIND = 8;
const MAX_MISSED = 12;
/** a task statement can run to pages; the start says which one it was */
const MISSED_CHARS = 240;

function clip(text: string): string {
  return text.length <= MISSED_CHARS ? text : `${text.slice(0, MISSED_CHARS - 1)}…`;
}

function summarize(r: Retention): RetentionSummary {
  return { found: r.found, total: r.total, ratio: r.ratio, byKind: r.byKind };
}

function coverageSummary(c: Coverage): CoverageSummary {
  return { covered: c.covered, total: c.total, ratio: c.ratio };
}

function examples(missing: readonly SpanIdentifier[]): ContextMeasures['lostExamples'] {
  const out: ContextMeasures['lostExamples'] = {};
  for (const id of missing) {
    const list = (out[id.kind] ??= []);
    if (list.length < EXAMPLES_PER_KIND) list.push(id.value);
  }
  return out;
}

export function measureContext(facts: SpanFacts, result: ResultContext, tokensBefore: number, tokensAfter: number): ContextMeasures {
  const kept = contextText(result.kept);
  const after = `${result.summaries}\n\n${kept}`;
  const before = `${stripIdentifierLists(result.summaries)}\n\n${kept}`;
  const retentionAfter = identifierRetention(facts.identifiers, after);
  const indexed = indexContext(after);
  const instructions = coverage(facts.instructions, indexed);
  const requests = coverage(facts.requests, indexed);
  return {
    tokensBefore,
    tokensAfter,
    summaryTokens: result.summaries.length === 0 ? 0 : countTokens(result.summaries),
    reduction: tokensBefore === 0 ? 0 : 1 - tokensAfter / tokensBefore,
    retentionBeforeGate: summarize(identifierRetention(facts.identifiers, before)),
    retentionAfterGate: summarize(retentionAfter),
    retentionBeforeResummary: result.chunkSummaries
      ? summarize(identifierRetention(facts.identifiers, `${result.chunkSummaries.join('\n\n')}\n\n${kept}`))
      : null,
    instructions: coverageSummary(instructions),
    requests: coverageSummary(requests),
    lostExamples: examples(retentionAfter.missing),
    missedStatements: [...instructions.missed, ...requests.missed].slice(0, MAX_MISSED).map(clip),
    probes: result.probes ? { ...scoreProbes(result.probes.probes, after), spanMessages: result.probes.spanMessages } : null,
  };
}
