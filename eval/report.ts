import { DEFAULT_POLICY } from '../src/config/policy.js';
import type { ImagesReport } from './images.js';
import { KEY_WORD_SHARE, WINDOW_LINES } from './instructions.js';
import type { ProbeMeasures } from './measure.js';
import { IDENTIFIER_KINDS } from './metrics.js';
import { MAX_RECENT_COMMANDS } from './probes/recent.js';
import { code, covered, int, pct, retention, table } from './report-format.js';
import type { EvalResults } from './run.js';
import type { CaseReport, MeasureRow } from './run-case.js';
import type { EvalHalf } from './split.js';
import {
  aggregateByVariant,
  clipArchiveBudget,
  CONTINUATION_GOAL,
  continuationGoals,
  GOAL,
  halfFigures,
  type Measured,
  measured,
  meetsGoal,
  peerComparisons,
  retentionByKind,
} from './summary.js';

/** Renders a run's results as EVAL.md: setup, goal verdict, tables per session and per strategy, losses by kind. */

const ROW_HEADERS = [
  'summary',
  'status',
  'summary tokens',
  'context after',
  'reduction',
  'probes',
  'retention before gate',
  'before re-summary',
  'after gate',
  'instructions',
  'requests',
];

function probes(p: ProbeMeasures | null): string {
  if (!p) return '–';
  return p.score === null ? 'n/a (none)' : `${pct(p.score)} (${p.answered}/${p.total})`;
}

function rowStatus(row: MeasureRow): string {
  if (row.job)
    return `${row.job.status}${row.job.reason ? ` (${row.job.reason})` : ''}${row.job.consolidation ? `, consolidation ${row.job.consolidation.status}` : ''}`;
  return row.outcome ?? 'reference';
}

function rowCells(row: MeasureRow): string[] {
  const m = row.measures;
  const status = rowStatus(row);
  if (!m) return [row.label, status, '–', '–', '–', '–', '–', '–', '–', '–', '–'];
  return [
    row.label,
    status,
    int(m.summaryTokens),
    int(m.tokensAfter),
    pct(m.reduction),
    probes(m.probes),
    retention(m.retentionBeforeGate),
    retention(m.retentionBeforeResummary),
    retention(m.retentionAfterGate),
    covered(m.instructions),
    covered(m.requests),
  ];
}

function setup(results: EvalResults): string {
  const provider = results.provider
    ? `A provider was configured (${results.provider.configuredBy.join(', ')}): its rows use \`model: ${results.provider.model}\`.`
    : 'No LLM provider was configured in the environment (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_BASE_URL` were unset), so no compactd summary written by a model is measured here: every compactd summary below comes from the local extractive summarizer. Set one of them and run `npm run eval` again to add provider rows (`COMPACTD_EVAL_MODEL` picks the model).';
  const sim = results.sim
    ? `Rows marked **llm-sim** come from compactd's loopback simulator (\`src/llm-sim\`), not from a model: it writes an extractive summary and drops a seeded ${pct(results.sim.lossRate, 0)} of the identifiers it sees, which shows how the identifier gate treats a lossy summarizer and nothing about any real model.`
    : 'The llm-sim simulator was not run.';
  return [
    '## Setup',
    '',
    `* **Claude Code sessions**: the four long sessions of \`spotter-claude-code\`, imported up to Claude Code's own \`compact_boundary\` (\`compactBoundary: 'stop'\`). The peer row is the summary Claude Code wrote at that boundary for exactly that span; its context after compaction is that summary alone.`,
    '* **mini-swe-agent**: the eight SWE-bench trajectories; **τ-bench**: the ten airline conversations with the most content. No peer summary exists for them.',
    '* **Two halves** (`eval/split.ts`): within each collection, the cases are ordered by the SHA-256 of their id; the first half (rounded up) is the development half, the rest is held out. Each case names its half below.',
    "* Each case is appended to a fresh conversation of the real service (API, queue, workers, Postgres, Redis, in-process) and compacted through `POST /v1/conversations/:id/compactions`: `strategy: reset` (everything summarized, like Claude Code), `strategy: auto` with the default target (`target.ratio` 0.5, what the auto trigger uses: Tier 1–2 first, summaries only if needed), `strategy: summarize` (the recent tail of 12 messages kept), and on Claude Code sessions a reset sized like Claude Code's summary (policy `maxLiveBatches: 2`, `summaryMaxTokens` = half of its tokens).",
    "* The conversation's context limit is set so the history sits exactly at the auto trigger (`contextLimit = tokens / 0.8`), as Claude Code's did when it compacted.",
    `* ${provider}`,
    `* ${sim}`,
    `* ${results.langchain ? `Rows marked **LangChain** run the real LangChain v1 \`summarizationMiddleware\` (\`createAgent\` + \`ChatAnthropic\`, as the bench's peer) on the span the default reset compacted, with its default trimming (the span's last 4,000 tokens) and with trimming that covers the span; their summary is written by llm-sim (loss ${pct(results.langchain.lossRate, 0)}), not by a model. Their context is the summary and the messages after the span.` : 'The LangChain middleware peer was not run (`COMPACTD_EVAL_LANGCHAIN=0`, or a quick run).'}`,
    '* compactd contexts are read after the consolidation job the compaction enqueued (if any) has finished: what an agent continues from.',
    '',
    '## Measures',
    '',
    "* **Continuation probes** (`eval/probes/`, the eval's own reading of the raw transcript, independent of the service's extractors), derived from the span each compaction archived (the case's messages up to the last one that left the active history; for Claude Code's summary, the whole session up to its boundary; for LangChain, the default reset's span): each file the span changed with its action (answered when a line of the context names it — path, cwd-relative path or unambiguous file name — with the action word or a synonym on, next to or in the heading above that line); the last ≤ 5 error lines, ≤ 3 failing commands and the last ≤ 5 distinct commands run (however they ended; each named by its first line that is not a comment), verbatim (whitespace aside; a long line by its first 100 characters); the user's constraints verbatim and the first sentence of the latest 3 requests; open items of the latest todo list (contained, case and markdown aside). *Probes* is answered / total; every miss is listed in the results JSON (`measures.probes.missed`).",
    "* **Identifiers of the span**: what compactd's identifier gate extracts (`extractChunkIdentifiers` without its per-chunk cap): error lines, file paths (`path`: said or passed to a tool; `output-path`: only seen in tool output), URLs, ticket ids, tool names, quoted/backticked names, numbers with units; plus, measured by the eval only, `id` (codes mixing letters and digits, ISO dates and e-mail addresses said by the user or agent or passed to a tool, e.g. reservation `NM1VX1`, flight `HAT300`) and `command` (first line of each shell command run, ≤ 160 characters). System messages are not part of the span (never compacted).",
    "* **Retention**: share of those identifiers found verbatim (whitespace aside, case-sensitive) in the context after compaction: clip-archive + kept messages. *Before gate* strips the gate's appended `Identifiers (verbatim…)` lists; *before re-summary* reads every level-0 chunk summary (after its gate) instead of the clip-archive, i.e. what survived before re-summaries collapsed batches; *after gate* is the context the agent gets.",
    `* **Instructions**: sentences of user-typed messages with must / never / always / don't / do not / please; **requests**: every user-typed message (meta turns, tool results, command notices and mini-swe-agent observations excluded). One is covered when the context holds it verbatim, or holds its identifiers and ≥ ${pct(KEY_WORD_SHARE, 0)} of its (up to 8) longest content words within ${WINDOW_LINES} consecutive lines.`,
    '* **Tokens**: o200k (gpt-tokenizer) as compactd counts them, message framing included; *reduction* = 1 − context after / context before. Claude Code measured its context with its own tokenizer, system prompt and tools included (its `preTokens`), so it is shown apart.',
  ].join('\n');
}

function bestOf(runs: ReadonlyArray<{ caseId: string; row: Measured }>): string {
  const best = [...runs].sort((a, b) => b.row.measures.retentionAfterGate.ratio - a.row.measures.retentionAfterGate.ratio)[0];
  if (!best) return 'none';
  const m = best.row.measures;
  return `${pct(m.retentionAfterGate.ratio)} (${best.caseId}, ${best.row.label}, ${pct(m.reduction)} reduction)`;
}

const HALF_TITLES: Readonly<Record<EvalHalf, string>> = { development: 'Development half', 'held-out': 'Held-out half' };

function counted(part: { answered: number; total: number }): string {
  return part.total === 0 ? 'n/a (none)' : `${pct(part.answered / part.total)} (${part.answered}/${part.total})`;
}

function continuationGoalSection(cases: readonly CaseReport[]): string {
  const budget = clipArchiveBudget(DEFAULT_POLICY as { clipArchiveMaxTokens?: unknown });
  const halves = halfFigures(cases, budget);
  const lines = [
    '## Goal against the results',
    '',
    `Goals, per case, default policy, \`reset\` (the context after the compaction and the consolidation it started): continuation probe score ≥ ${pct(CONTINUATION_GOAL.probeScore, 0)}, the last ${MAX_RECENT_COMMANDS} commands among them ≥ ${pct(CONTINUATION_GOAL.probeScore, 0)}; ≥ Claude Code's own summary of the same span + ${CONTINUATION_GOAL.aheadOfPeer * 100} points (capped at 100%) where one exists; clip-archive tokens ≤ ${CONTINUATION_GOAL.peerSizeFactor}× Claude Code's summary tokens; clip-archive tokens ≤ its budget (policy \`clipArchiveMaxTokens\`, ${budget}).`,
    '',
    `The corpus is split in two halves (\`eval/split.ts\`): within each collection, the cases ordered by the SHA-256 of their id, the first half (rounded up) is the **development** half, the rest is **held out**. Changes are tuned looking at the development half only; the held-out half is reported as measured.`,
    '',
    table(
      [
        'half',
        'cases',
        'goal lines met',
        'probes answered',
        `last ${MAX_RECENT_COMMANDS} commands answered`,
        "clip-archive ÷ Claude Code's summary",
      ],
      halves.map((h) => [
        HALF_TITLES[h.half],
        String(h.caseIds.length),
        `${h.goalLines.met} of ${h.goalLines.total}`,
        counted(h.probes),
        counted(h.recentCommands),
        h.peerSizeRatio ? `${h.peerSizeRatio.min.toFixed(2)}–${h.peerSizeRatio.max.toFixed(2)}×` : '–',
      ]),
    ),
  ];
  for (const half of halves) {
    const goals = continuationGoals(
      cases.filter((c) => c.half === half.half),
      budget,
    );
    lines.push(
      '',
      `### ${HALF_TITLES[half.half]}: ${half.caseIds.join(', ') || 'no case in this run'}`,
      '',
      `**${half.goalLines.met} of ${half.goalLines.total} goal lines met.**`,
      '',
      table(
        ['case', 'compactd', 'goal', 'met', 'figures'],
        goals.flatMap((g) => g.checks.map((check) => [g.caseId, g.variant, check.goal, check.met ? 'yes' : '**no**', check.detail])),
      ),
    );
  }
  return lines.join('\n');
}

function goal(cases: readonly CaseReport[]): string {
  const all = cases.flatMap((c) =>
    measured(c.rows)
      .filter((r) => r.system === 'compactd')
      .map((row) => ({ caseId: c.id, row })),
  );
  const met = all.filter((r) => meetsGoal(r.row.measures));
  const reducing = all.filter((r) => r.row.measures.reduction >= GOAL.reduction);
  const vsPeer = peerComparisons(cases).filter((p) => p.variant.startsWith('reset-local'));
  const comparable = vsPeer.filter((p) => p.comparable);
  const ahead = comparable.filter((p) => p.retentionGain > 0);
  const lines = [
    '## Identifier retention (earlier goal, reported for reference)',
    '',
    `Earlier goal: ≥ ${pct(GOAL.retention, 0)} identifier retention after the gate at ≥ ${pct(GOAL.reduction, 0)} token reduction, and retention above Claude Code's summary on the same spans at comparable size (summary tokens within ±${pct(GOAL.sizeTolerance, 0)} of Claude Code's).`,
    '',
    `* **≥ ${pct(GOAL.retention, 0)} retention at ≥ ${pct(GOAL.reduction, 0)} reduction: ${met.length === 0 ? 'not met' : 'met'} (${met.length} of ${all.length} compactions reach it).** ` +
      `Highest retention among the ${reducing.length} compactions that reached ${pct(GOAL.reduction, 0)} reduction: ${bestOf(reducing)}; highest overall: ${bestOf(all)}.`,
    `* **Above Claude Code's summary at comparable size: ${ahead.length} of ${comparable.length} comparable reset runs** (${vsPeer.length - comparable.length} more reset runs fell outside the size band; their differences are listed too).`,
  ];
  const rows = vsPeer.map((p) => [
    p.caseId,
    p.variant,
    `${int(p.peer.summaryTokens)} → ${pct(p.peer.retentionAfterGate.ratio)}`,
    `${int(p.ours.summaryTokens)} → ${pct(p.ours.retentionAfterGate.ratio)}`,
    p.comparable ? 'yes' : 'no',
    `${p.retentionGain >= 0 ? '+' : ''}${(p.retentionGain * 100).toFixed(1)} pts`,
  ]);
  lines.push(
    '',
    table(
      [
        'session',
        'compactd variant',
        'Claude Code: tokens → retention',
        'compactd: tokens → retention after gate',
        'comparable size',
        'difference',
      ],
      rows,
    ),
  );
  return lines.join('\n');
}

function claudeCodeSection(cases: readonly CaseReport[]): string {
  const parts = ['## Claude Code sessions', ''];
  for (const c of cases) {
    parts.push(
      `### ${c.id} (${HALF_TITLES[c.half].toLowerCase()}; ${c.source})`,
      '',
      `${c.messages} messages, ${int(c.tokensBefore)} tokens before compaction (Claude Code measured ${int(c.peerPreTokens)} with its system prompt and tools); ${c.identifiers.total} identifiers (${kindList(c)}); ${c.instructions} explicit instructions, ${c.requests} requests.`,
      '',
      table(ROW_HEADERS, c.rows.map(rowCells)),
      '',
    );
  }
  const rows = cases.flatMap((c) => measured(c.rows));
  const variants = [...new Set(rows.map((r) => r.variant))];
  const byVariant = variants.map((v) => ({
    v,
    label: rows.find((r) => r.variant === v)?.label ?? v,
    kinds: retentionByKind(rows.filter((r) => r.variant === v)),
  }));
  const kinds = IDENTIFIER_KINDS.filter((k) => byVariant.some((b) => b.kinds[k]));
  parts.push(
    '### Retention by identifier kind (four sessions pooled, after the gate)',
    '',
    table(
      ['kind', ...byVariant.map((b) => b.label)],
      kinds.map((k) => [k, ...byVariant.map((b) => retention(b.kinds[k]))]),
    ),
  );
  return parts.join('\n');
}

function kindList(c: CaseReport): string {
  return Object.entries(c.identifiers.byKind)
    .map(([kind, n]) => `${n} ${kind}`)
    .join(', ');
}

function perStrategy(title: string, cases: readonly CaseReport[]): string {
  const variants = [...new Set(cases.flatMap((c) => c.rows.map((r) => r.variant)))];
  const parts = [`## ${title}`, ''];
  for (const variant of variants) {
    const label = cases.flatMap((c) => c.rows).find((r) => r.variant === variant)?.label ?? variant;
    const rows = cases.flatMap((c) =>
      c.rows
        .filter((r) => r.variant === variant)
        .map((r) => [c.id, c.half, int(c.tokensBefore), String(c.identifiers.total), ...rowCells(r).slice(1)]),
    );
    parts.push(`### ${label}`, '', table(['case', 'half', 'tokens before', 'identifiers', ...ROW_HEADERS.slice(1)], rows), '');
  }
  return parts.join('\n');
}

function aggregates(results: EvalResults): string {
  const collections = [...new Set(results.cases.map((c) => c.collection))];
  const rows = collections.flatMap((collection) =>
    aggregateByVariant(results.cases.filter((c) => c.collection === collection)).map((a) => [
      collection,
      a.label,
      String(a.runs),
      int(a.meanSummaryTokens),
      pct(a.meanReduction),
      retention(a.beforeGate),
      retention(a.beforeResummary),
      retention(a.afterGate),
      covered(a.instructions),
      covered(a.requests),
      `${a.goalMet}/${a.runs}`,
    ]),
  );
  return [
    '## All runs, pooled',
    '',
    'Retention pooled over the runs (identifiers found / identifiers in all spans); summary tokens and reduction are means per run.',
    '',
    table(
      [
        'collection',
        'summary',
        'runs',
        'summary tokens',
        'reduction',
        'before gate',
        'before re-summary',
        'after gate',
        'instructions',
        'requests',
        'goal met',
      ],
      rows,
    ),
  ].join('\n');
}

function lossExamples(cases: readonly CaseReport[]): string {
  const lines = ['## Examples of identifiers lost after the gate (reset, local summarizer)', ''];
  for (const c of cases) {
    const row = measured(c.rows).find((r) => r.variant === 'reset-local');
    if (!row) continue;
    const examples = Object.entries(row.measures.lostExamples).map(
      ([kind, values]) =>
        `${kind}: ${values
          .slice(0, 3)
          .map((v) => code(v))
          .join(', ')}`,
    );
    if (examples.length > 0) lines.push(`* **${c.id}**: ${examples.join('; ')}`);
  }
  return lines.join('\n');
}

export function renderReport(results: EvalResults, options: { analysis: string | null; resultsFile: string }): string {
  const byCollection = (collection: string) => results.cases.filter((c) => c.collection === collection);
  const header = [
    `# Summary fidelity eval${results.quick ? ' (quick)' : ''}`,
    '',
    `Generated by \`npm run eval${results.quick ? ' -- --quick' : ''}\` on ${results.date.slice(0, 10)}${results.commit ? ` at commit \`${results.commit}\`` : ''} in ${Math.round(results.durationMs / 1000)} s. Every table is computed by \`eval/\` from that run (raw results: \`${options.resultsFile}\`)${options.analysis ? '; the analysis is written by hand against it (`eval/analysis.md`)' : ''}.`,
  ].join('\n');
  const sections = [header, setup(results), continuationGoalSection(results.cases), goal(results.cases)];
  if (options.analysis) sections.push(options.analysis.trim());
  sections.push(
    claudeCodeSection(byCollection('claude-code')),
    perStrategy('mini-swe-agent (SWE-bench), per strategy', byCollection('mini-swe-agent')),
    perStrategy('τ-bench airline, per strategy', byCollection('tau-bench')),
    aggregates(results),
    ...(results.images ? [imagesSection(results.images)] : []),
    lossExamples(results.cases),
  );
  return `${sections.join('\n\n')}\n`;
}

/** The images check: a generated session of 20 screenshots (eval/images.ts). */
function imagesSection(images: ImagesReport): string {
  const yes = (ok: boolean) => (ok ? 'yes' : '**no**');
  const withinBudget = images.clipTokens <= images.clipBudget;
  const allFound = images.recallable === images.archived && images.intact === images.archived;
  return [
    '## Images (a generated session of 20 screenshots)',
    '',
    `${images.images} user turns, each with one image (${images.formats.join(', ')}; generated: the shared transcripts hold none), compacted with the default policy and a two-message tail (\`strategy: summarize, keepRecent: 2\`), job ${images.status}. Goal: within the clip-archive's budget, and each archived image recallable from its reference.`,
    '',
    '| measure | result | met |',
    '|---|---|---|',
    `| clip-archive tokens (budget ${images.clipBudget}) | ${images.clipTokens} | ${yes(withinBudget)} |`,
    `| newest image the user sent still sent as an image (\`keepImages\` 1) | ${images.newestKept ? 'kept' : 'archived'} | ${yes(images.newestKept)} |`,
    `| archived images found by a search for their reference | ${images.recallable} of ${images.archived} | ${yes(images.recallable === images.archived)} |`,
    `| … with the original's bytes intact in the batch's originals | ${images.intact} of ${images.archived} | ${yes(images.intact === images.archived)} |`,
    `| archived images the clip-archive names by reference (the state lists the newest 5) | ${images.named} of ${images.archived} | – |`,
    '',
    `Goal ${withinBudget && allFound ? 'met' : '**not met**'}.`,
  ].join('\n');
}
