import { readFileSync } from 'node:fs';
import path from 'node:path';

import { REPO_ROOT as repoRoot } from '../../harness/index.js';
import type { BenchContext } from '../lib/context.js';
import { emptyScenario, figure, type ScenarioResult, target } from '../lib/result.js';
import { rangeText, round, spread } from '../lib/stats.js';
import { DEFAULT_TRIM_TOKENS, type MiddlewareRun } from '../peers/langchain-middleware.js';
import { defaultPolicy } from '../peers/sequential-fold.js';
import { type MiddlewareVariant, outcomeText, type PeerRuns, type SessionPlan } from './peers.js';

/** Scenario 2's result: compactd against the real LangChain middleware and the sequential-fold baseline. */

export const PEERS_TITLE = '2. Against peers: the real LangChain summarization middleware, and a sequential-fold baseline';

/** What scenario 1 measured of compactd on each session (its SessionRuns). */
export interface CompactdRuns {
  session: string;
  sourceTokens: number;
  wallMs: number[];
  noCheckMs: number[];
  criticalMs: number[];
  strictMs: number[];
  nonLlmMs: number[];
  retries: number[];
  plan: SessionPlan;
}

const med = (values: readonly number[]) => spread(values).median;
const callMs = (run: MiddlewareRun) => run.calls.reduce((sum, c) => sum + ((c.endMs ?? c.startMs) - c.startMs), 0);
const ok = (runs: readonly MiddlewareRun[]) => runs.length > 0 && runs.every((r) => r.outcome === 'summarized');

function pinned(name: string): string {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { devDependencies?: Record<string, string> };
  return `${name} ${pkg.devDependencies?.[name] ?? '(not installed)'}`;
}

export function peersResult(
  ctx: BenchContext,
  sessions: readonly CompactdRuns[],
  peers: readonly PeerRuns[],
  options: { profile: string; peerRuns: number },
): ScenarioResult {
  const result = emptyScenario('peers', PEERS_TITLE);
  const maxTokens = defaultPolicy().summaryMaxTokens;
  result.setup = {
    profile: options.profile,
    runsPerPeer: options.peerRuns,
    langchain:
      `${pinned('langchain')} createAgent + summarizationMiddleware, ${pinned('@langchain/anthropic')} ChatAnthropic (claude-haiku-4-5, maxTokens ${maxTokens} = compactd's summaryMaxTokens) on llm-sim's base URL; ` +
      'trigger {messages: all of them}, keep {messages: the ones compactd kept}, default prompt, prefix and token counter; a second middleware ends the agent before its own model call',
    langchainSettings: `"defaults": trimTokensToSummarize unset (${DEFAULT_TRIM_TOKENS}); "whole span": trimTokensToSummarize = Number.MAX_SAFE_INTEGER, so the whole span is sent`,
    langchainWall: "agent.invoke end to end in the bench process, one run at a time, alone on llm-sim; tokens from llm-sim's call log",
    fold: 'bench/peers/sequential-fold.ts (a baseline design, not a product): the chunks compactd planned, one at a time in chronological order, each request carrying the running summary (Anthropic SDK, same prompt builder)',
  };
  const foldSpeedups: number[] = [];
  const vsLangChain: number[] = [];
  const vsDefaults: number[] = [];
  const rows = sessions.map((s, i) => {
    const p = peers[i] as PeerRuns;
    const compactd = med(s.wallMs);
    const fold = med(p.foldMs);
    const whole = p.langchain.wholeSpan;
    const defaults = p.langchain.defaults;
    const lcMs = med(whole.map((r) => r.wallMs));
    foldSpeedups.push(fold / compactd);
    // a failed middleware run did not summarize the span: no ratio for that session
    if (ok(whole)) vsLangChain.push(compactd / lcMs);
    if (ok(defaults)) vsDefaults.push(compactd / med(defaults.map((r) => r.wallMs)));
    const label = s.session.slice(0, 8);
    ctx.chart.push({ strategy: 'sequential fold', tokens: s.sourceTokens, seconds: fold / 1000, ok: true, label });
    ctx.chart.push({ strategy: 'LangChain middleware', tokens: s.sourceTokens, seconds: lcMs / 1000, ok: ok(whole), label });
    const noCheck = med(s.noCheckMs);
    ctx.chart.push({ strategy: 'compactd, identifier check off', tokens: s.sourceTokens, seconds: noCheck / 1000, ok: true, label });
    return [
      label,
      s.sourceTokens,
      rangeText(s.wallMs.map((v) => v / 1000)),
      rangeText(s.noCheckMs.map((v) => v / 1000)),
      `${rangeText(whole.map((r) => r.wallMs / 1000))}${ok(whole) ? '' : ' (failed)'}`,
      ok(whole) ? round(compactd / lcMs, 2) : 'n/a',
      `${rangeText(defaults.map((r) => r.wallMs / 1000))}${ok(defaults) ? '' : ' (failed)'}`,
      rangeText(p.foldMs.map((v) => v / 1000)),
      round(fold / compactd, 2),
    ];
  });
  result.tables.push({
    title: 'Wall time per strategy (s, median; range in brackets)',
    columns: [
      'session',
      'tokens compacted',
      'compactd',
      'compactd, identifier check off',
      'LangChain middleware, whole span',
      'compactd / LangChain',
      'LangChain middleware, defaults',
      'sequential fold (baseline)',
      'fold / compactd',
    ],
    rows,
  });
  result.tables.push(middlewareTable(sessions, peers));

  result.figures.push(figure('compactd wall / LangChain summarizationMiddleware wall, same span', '×', vsLangChain));
  result.figures.push(
    figure(
      `compactd wall / LangChain summarizationMiddleware wall, defaults (span trimmed to ${DEFAULT_TRIM_TOKENS} tokens)`,
      '×',
      vsDefaults,
    ),
  );
  result.figures.push(figure('speed-up over the sequential fold (baseline)', '×', foldSpeedups));
  const lcTarget = target(
    'median compactd job wall / real LangChain summarizationMiddleware wall, same span',
    '<=',
    0.5,
    spread(vsLangChain).median,
    '×',
  );
  const foldTarget = target('median speed-up over the sequential fold (baseline)', '>=', 5, spread(foldSpeedups).median, '×');
  if (!lcTarget.met) lcTarget.bottleneck = langChainBottleneck(sessions, peers, options.profile);
  if (!foldTarget.met) {
    const foldCalls = med(peers.map((p) => p.foldCalls));
    foldTarget.bottleneck =
      `the fold makes ${foldCalls} dependent calls (median); compactd's dependent chain is a chunk call, its identifier retry when the first answer misses identifiers (median ${med(sessions.flatMap((s) => s.retries))} retries per job), ` +
      'then the re-summary and its retry: up to four calls in a row, so the speed-up is bounded near chunks / 4 on these sessions.';
  }
  result.targets.push(lcTarget, foldTarget);
  result.notes.push(...middlewareNotes(sessions, peers));
  if (sessions.length > 1)
    result.notes.push(
      'The folds of the different sessions ran side by side (each sequential within itself); compactd jobs and LangChain runs ran one at a time, alone on llm-sim.',
    );
  return result;
}

function middlewareTable(sessions: readonly CompactdRuns[], peers: readonly PeerRuns[]): ScenarioResult['tables'][number] {
  const rows: Array<Array<string | number>> = [];
  sessions.forEach((s, i) => {
    const p = peers[i] as PeerRuns;
    const whole = med(p.langchain.wholeSpan.map((r) => r.inputTokens));
    for (const [variant, label] of [
      ['wholeSpan', 'whole span'],
      ['defaults', 'defaults'],
    ] as Array<[MiddlewareVariant, string]>) {
      const runs = p.langchain[variant];
      const first = runs[0];
      if (!first) continue;
      rows.push([
        s.session.slice(0, 8),
        label,
        runs
          .map(outcomeText)
          .filter((t, k, all) => all.indexOf(t) === k)
          .join('; '),
        rangeText(runs.map((r) => r.wallMs / 1000)),
        rangeText(runs.map((r) => callMs(r) / 1000)),
        med(runs.map((r) => r.calls.length)),
        med(runs.map((r) => r.inputTokens)),
        med(runs.map((r) => r.outputTokens)),
        `${first.replaced} of ${first.messagesBefore} (span ${first.spanMessages})`,
        `${round((med(runs.map((r) => r.inputTokens)) / Math.max(1, whole)) * 100, 1)}%`,
      ]);
    }
  });
  return {
    title:
      "LangChain summarizationMiddleware per session (median over runs; tokens are what llm-sim's call log recorded for the summarizer requests)",
    columns: [
      'session',
      'setting',
      'outcome',
      'wall s',
      'summarizer call s',
      'calls',
      'input tokens',
      'output tokens',
      'messages replaced by the summary',
      'request size vs whole span',
    ],
    rows,
  };
}

function langChainBottleneck(sessions: readonly CompactdRuns[], peers: readonly PeerRuns[], profile: string): string {
  const whole = peers.flatMap((p) => p.langchain.wholeSpan).filter((r) => r.outcome === 'summarized');
  if (whole.length === 0)
    return 'the real middleware never summarized the whole span in this run, so there is no wall time to compare with (see its outcome in the table).';
  const lcCall = med(whole.map(callMs)) / 1000;
  const lcWall = med(whole.map((r) => r.wallMs)) / 1000;
  const chain = med(sessions.flatMap((s) => s.criticalMs)) / 1000;
  const strict = med(sessions.flatMap((s) => s.strictMs)) / 1000;
  const nonLlm = med(sessions.flatMap((s) => s.nonLlmMs)) / 1000;
  const retries = med(sessions.flatMap((s) => s.retries));
  return (
    `the middleware waits on one request (median ${med(whole.map((r) => r.inputTokens))} tokens in, ${med(whole.map((r) => r.outputTokens))} out: ${round(lcCall, 2)} s in llm-sim, ${round(lcWall, 2)} s end to end), ` +
    `compactd on a dependent chain of calls (median ${round(chain, 2)} s: a chunk call, its identifier retry — median ${retries} retries per job —, then the re-summary) plus ${round(nonLlm, 2)} s outside LLM calls. ` +
    `Even at the physical limit of one chunk call + one re-summary call (median ${round(strict, 2)} s) the job would take ${round(strict / lcWall, 2)}× the middleware's wall: ` +
    (profile.startsWith('fixed:')
      ? `under the ${profile} profile every call takes the same time whatever its size, so two calls in a row cost twice one.`
      : 'both calls of that chain write a summary, and the output speed, not the input size, sets their time.')
  );
}

function middlewareNotes(sessions: readonly CompactdRuns[], peers: readonly PeerRuns[]): string[] {
  const notes: string[] = [];
  const runs = peers.flatMap((p) => [...p.langchain.wholeSpan, ...p.langchain.defaults]);
  const off = runs.filter((r) => r.replaced !== r.spanMessages);
  notes.push(
    off.length === 0
      ? `In every run the middleware replaced exactly the span compactd compacted (${sessions.map((s, i) => `${s.session.slice(0, 8)}: ${peers[i]?.langchain.wholeSpan[0]?.spanMessages ?? 0} LangChain messages`).join(', ')}) with one summary message.`
      : `In ${off.length} run(s) the middleware replaced a different number of messages than the span compactd compacted (its cutoff moves to keep tool calls with their results): ${off.map((r) => `${r.replaced} vs ${r.spanMessages}`).join(', ')}.`,
  );
  const gaps = sessions.filter((s) => s.plan.spanGaps > 0);
  if (gaps.length > 0) {
    const gapText = (s: CompactdRuns) =>
      `${s.session.slice(0, 8)} (${s.plan.spanGaps} message${s.plan.spanGaps === 1 ? '' : 's'} inside it that compactd keeps verbatim: protected, like the newest user message)`;
    notes.push(
      `compactd's span was not a prefix in ${gaps.map(gapText).join(', ')}; the middleware, which can only cut a prefix, summarized those too.`,
    );
  }
  const failed = runs.filter((r) => r.outcome !== 'summarized');
  if (failed.length > 0)
    notes.push(
      `Below the window, ${failed.length} middleware run(s) did not produce a summary: ${failed.map(outcomeText).join('; ').slice(0, 400)}.`,
    );
  notes.push(
    `With its defaults the middleware sends only the newest ${DEFAULT_TRIM_TOKENS} tokens of the span to the summarizer and replaces the whole span with that summary; ` +
      'it is faster because it reads a few percent of what the other strategies read ("request size vs whole span"), not because it does the same job faster.',
  );
  return notes;
}
