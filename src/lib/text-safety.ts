import { z } from 'zod';

/**
 * What every string the API stores must satisfy, whatever field it arrives in. Postgres
 * `text` and `jsonb` cannot hold U+0000, and a lone UTF-16 surrogate has no UTF-8 encoding:
 * either one makes the database refuse the row, so they are refused at the door instead.
 */

/** The first character a stored string must not contain, described; null when the text is clean. */
export function textProblem(text: string): string | null {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === 0) return 'must not contain NUL (\\u0000)';
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i += 1;
        continue;
      }
      return 'must not contain an unpaired UTF-16 surrogate';
    }
    if (unit >= 0xdc00 && unit <= 0xdfff) return 'must not contain an unpaired UTF-16 surrogate';
  }
  return null;
}

/** Bounds of free-form JSON (conversation metadata): deep enough for any real document, shallow enough to walk. */
export interface JsonBounds {
  maxDepth: number;
  /** size of the value as JSON text, in UTF-16 code units (a close, cheap bound on bytes/3..bytes) */
  maxChars: number;
  /** check keys and strings with `textProblem` (default true) */
  checkText?: boolean;
}

export const METADATA_BOUNDS: JsonBounds = { maxDepth: 32, maxChars: 64 * 1024 };

/**
 * Messages: size is checked per message (413) and text by normalization (which names the
 * block); only depth is bounded here, so no serializer or walker of a message recurses
 * into a stack overflow. Far deeper than any real tool input.
 */
export const MESSAGE_BOUNDS: JsonBounds = { maxDepth: 100, maxChars: Number.POSITIVE_INFINITY, checkText: false };

/**
 * Nesting any JSON body may have, checked as it is parsed: walkers and serializers past the
 * schemas (the gateway's history keys stringify whole messages) recurse, and a 200,000-deep
 * tool input overflowed the stack into a 500. Far above any real tool input and above what
 * the API's own rules allow (a message's `MESSAGE_BOUNDS.maxDepth` inside a body's few levels
 * of envelope, so those keep naming the message); far below what overflows a stack.
 */
export const JSON_BODY_MAX_DEPTH = 512;

/**
 * Whether `value` nests arrays and objects more than `maxDepth` levels deep (`[]` is one
 * level). Descends at most `maxDepth + 1` levels, so the check itself never overflows.
 */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (maxDepth === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestsDeeperThan(item, maxDepth - 1)) return true;
    return false;
  }
  for (const key in value) if (nestsDeeperThan((value as Record<string, unknown>)[key], maxDepth - 1)) return true;
  return false;
}

/**
 * Checks free-form JSON without recursion (a 5,000-deep document must not exhaust the stack):
 * depth, total size, and every key and string by `textProblem`. Returns the path and the
 * problem of the first violation, or null.
 */
export function jsonProblem(value: unknown, bounds: JsonBounds): { path: string[]; message: string } | null {
  // Parent links instead of path copies: the path is built only for the one node reported.
  interface Node {
    value: unknown;
    key: string;
    parent: Node | null;
    depth: number;
  }
  const pathOf = (node: Node | null, last?: string): string[] => {
    const path = last === undefined ? [] : [last];
    for (let at = node; at !== null && at.parent !== null; at = at.parent) path.unshift(at.key);
    return path;
  };
  const stack: Node[] = [{ value, key: '', parent: null, depth: 0 }];
  let chars = 0;
  const checkText = bounds.checkText ?? true;
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    const current = node.value;
    if (typeof current === 'string') {
      chars += current.length + 2;
      const problem = checkText ? textProblem(current) : null;
      if (problem) return { path: pathOf(node), message: problem };
    } else if (current === null || typeof current !== 'object') {
      chars += String(current).length;
    } else {
      if (node.depth >= bounds.maxDepth) return { path: pathOf(node), message: `must not nest deeper than ${bounds.maxDepth} levels` };
      const entries = Array.isArray(current) ? current.map((v, i) => [String(i), v] as const) : Object.entries(current);
      chars += 2 + entries.length;
      for (const [key, child] of entries) {
        if (!Array.isArray(current)) {
          chars += key.length + 3;
          const problem = checkText ? textProblem(key) : null;
          if (problem) return { path: pathOf(node, key), message: `key ${problem}` };
        }
        stack.push({ value: child, key, parent: node, depth: node.depth + 1 });
      }
    }
    if (chars > bounds.maxChars) return { path: [], message: `must be at most ${bounds.maxChars} characters as JSON` };
  }
  return null;
}

/**
 * The zod rule every string the API takes goes through: bounded length, no NUL, no unpaired
 * surrogate. Still a JSON Schema `string` with min/maxLength in the OpenAPI document.
 */
export function safeText(options: { min?: number; max: number }) {
  let schema = z.string().max(options.max, `must be at most ${options.max} characters`);
  if (options.min !== undefined)
    schema = schema.min(options.min, options.min === 1 ? 'must not be empty' : `must be at least ${options.min} characters`);
  return schema.superRefine((text, ctx) => {
    const problem = textProblem(text);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}
