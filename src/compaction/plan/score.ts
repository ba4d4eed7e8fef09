import type { Scoring } from '../../config/policy.js';
import { renderBlock, toolNamesOf } from '../render.js';
import type { MessageFeatures, Role } from '../types.js';
import type { Unit } from './units.js';

/**
 * Heuristic importance of a unit (SPEC §5.3): role weight of its lead message, recency by
 * exponential decay, and content signals (questions, tool calls, keywords, length).
 * Low scores are compressed first; high-importance older units survive longest.
 */

export interface ScoreBreakdown {
  role: number;
  recency: number;
  question: number;
  toolCalls: number;
  keywords: number;
  length: number;
  total: number;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Compiles the keyword list once per scoring config. */
export function keywordMatchers(keywords: readonly string[]): RegExp[] {
  return keywords.map((keyword) => {
    const startsWithWordChar = /^\w/.test(keyword);
    return new RegExp(`${startsWithWordChar ? '\\b' : ''}${escapeRegExp(keyword)}`, 'i');
  });
}

function leadRole(unit: Unit): Role {
  // an orphaned result is tool output whatever role carried it
  if (unit.kind === 'orphan_result') return 'tool';
  return unit.messages[0]?.role ?? 'assistant';
}

function unitText(unit: Unit): string {
  const names = toolNamesOf(unit.messages);
  return unit.messages.map((m) => m.content.map((b) => renderBlock(b, names)).join('\n')).join('\n');
}

function hasUserQuestion(unit: Unit): boolean {
  return unit.messages.some((m) => m.role === 'user' && m.content.some((b) => b.type === 'text' && b.text.includes('?')));
}

/** The content signals of a unit: from its messages' precomputed features when every one has them, else from the text. */
function contentSignals(unit: Unit, matchers: readonly RegExp[]): { question: boolean; keywords: number; chars: number } {
  if (unit.messages.every((m) => m.features !== undefined)) {
    // created only for a unit with a keyword: most have none, and a Set per unit was most of what ranking allocated
    let matched: Set<number> | null = null;
    let chars = 0;
    let question = false;
    for (const m of unit.messages) {
      const features = m.features as MessageFeatures;
      for (const k of features.keywords) (matched ??= new Set<number>()).add(k);
      // the rendered unit joins its messages with a newline
      chars += features.chars + 1;
      question ||= m.role === 'user' && features.question;
    }
    return { question, keywords: matched?.size ?? 0, chars: Math.max(0, chars - 1) };
  }
  const text = unitText(unit);
  return { question: hasUserQuestion(unit), keywords: matchers.filter((regex) => regex.test(text)).length, chars: text.length };
}

/**
 * Scores one unit. `age` is how many messages separate the unit's last message from the
 * newest message of the history (0 for the newest).
 */
export function scoreUnit(unit: Unit, age: number, scoring: Scoring, matchers?: RegExp[]): ScoreBreakdown {
  const signals = contentSignals(unit, matchers ?? keywordMatchers(scoring.keywords));
  const role = scoring.roleWeights[leadRole(unit)];
  const recency = scoring.recency.weight * Math.pow(0.5, Math.max(0, age) / scoring.recency.halfLifeMessages);
  const question = signals.question ? scoring.questionBonus : 0;
  const toolCalls = unit.messages.some((m) => m.toolUseIds.length > 0) ? scoring.toolCallBonus : 0;
  const keywords = signals.keywords * scoring.keywordBonus;
  const length = Math.min(scoring.lengthBonusCap, (signals.chars / 100) * scoring.lengthBonusPer100Chars);
  const total = role + recency + question + toolCalls + keywords + length;
  return { role, recency, question, toolCalls, keywords, length, total };
}

export interface RankedUnit {
  unit: Unit;
  score: number;
}

/**
 * Scores units and sorts them ascending (least important first). Equal scores keep
 * chronological order. `lastMessageIndex` is the index of the newest message of the history.
 */
export function rankUnits(units: readonly Unit[], lastMessageIndex: number, scoring: Scoring): RankedUnit[] {
  const matchers = keywordMatchers(scoring.keywords);
  const ranked = units.map((unit) => ({
    unit,
    score: scoreUnit(unit, lastMessageIndex - unit.end, scoring, matchers).total,
  }));
  // Array.prototype.sort is stable (ES2019); the index tie-break makes the intent explicit
  return ranked.sort((a, b) => a.score - b.score || a.unit.index - b.unit.index);
}
