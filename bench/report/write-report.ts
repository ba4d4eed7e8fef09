import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { type BenchResults, renderMarkdown } from './markdown.js';
import { renderSessionCostChart, SESSION_COST_ID } from './session-cost-svg.js';
import { renderLatencyChart } from './svg.js';

/**
 * Writes the report of one results file: the markdown and the charts it embeds (latency vs
 * size; a session's cost when that scenario was measured). Findings
 * written by hand (what the numbers mean, with evidence) live in bench/findings.md and are
 * included under the targets when the file exists.
 */
export function writeReport(
  results: BenchResults,
  paths: { markdown: string; svg: string; svgLink: string; jsonLink: string; findings?: string },
): void {
  const profile = results.scenarios.find((s) => s.id === 'latency')?.setup['profile'] ?? 'llm-sim';
  writeFileSync(
    paths.svg,
    renderLatencyChart(
      results.chart,
      `llm-sim profile ${String(profile)}; medians; ${results.mode} run of ${results.startedAt.slice(0, 10)}`,
    ),
  );
  // the session-cost chart sits beside the latency chart, named like it
  const costSvg = sessionCostSibling(paths.svg);
  const costLink = sessionCostSibling(paths.svgLink);
  const costChart =
    costSvg && costLink
      ? renderSessionCostChart(
          results.scenarios.find((s) => s.id === SESSION_COST_ID),
          `${results.mode} run of ${results.startedAt.slice(0, 10)}`,
        )
      : null;
  if (costSvg && costChart) writeFileSync(costSvg, costChart);
  const findings = paths.findings && existsSync(paths.findings) ? readFileSync(paths.findings, 'utf8').trim() : undefined;
  writeFileSync(
    paths.markdown,
    renderMarkdown(results, {
      svg: paths.svgLink,
      json: paths.jsonLink,
      ...(findings ? { findings } : {}),
      ...(costChart && costLink ? { sessionCostSvg: costLink } : {}),
    }),
  );
}

/** `…latency-vs-size.svg` → `…session-cost.svg`; null for a path not named so (nothing is overwritten). */
function sessionCostSibling(file: string): string | null {
  const sibling = file.replace(/latency-vs-size\.svg$/, 'session-cost.svg');
  return sibling === file ? null : sibling;
}

// `npx tsx bench/report/write-report.ts <results.json>`: re-renders BENCH.md and the chart.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: write-report.ts <bench/results/DATE.json>');
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const results = JSON.parse(readFileSync(file, 'utf8')) as BenchResults;
  const markdown = path.join(root, 'BENCH.md');
  writeReport(results, {
    markdown,
    svg: path.join(root, 'bench/latency-vs-size.svg'),
    svgLink: 'bench/latency-vs-size.svg',
    jsonLink: path.relative(root, path.resolve(file)),
    findings: path.join(root, 'bench/findings.md'),
  });
  process.stdout.write(`wrote ${markdown}\n`);
}
