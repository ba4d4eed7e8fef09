/**
 * A reader for the small YAML subset the compose file keeps to (no YAML package is
 * installed): block mappings, block sequences (`- item`, `- key: value`), flow sequences of
 * scalars (`["a", "b"]`), double- or single-quoted and plain scalars, comments. Anything
 * else (anchors, aliases, tags, block scalars, flow mappings, multi-document streams)
 * throws naming the line, so the file can never use a feature this reader would misread.
 */

export type YamlValue = string | number | boolean | null | YamlValue[] | { [key: string]: YamlValue };

interface Line {
  number: number;
  indent: number;
  text: string;
}

export class YamlSubsetError extends Error {
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
  }
}

/** Drops a comment (`#` at the start or after a space) outside quotes. */
function stripComment(raw: string): string {
  let quote: string | null = null;
  for (let i = 0; i < raw.length; i += 1) {
    const c = raw[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '#' && (i === 0 || raw[i - 1] === ' ')) {
      return raw.slice(0, i);
    }
  }
  return raw;
}

function toLines(source: string): Line[] {
  const lines: Line[] = [];
  source.split('\n').forEach((raw, index) => {
    const number = index + 1;
    if (/^\t| \t/.test(raw)) throw new YamlSubsetError(number, 'tabs in indentation');
    const text = stripComment(raw).trimEnd();
    if (text.trim() === '') return;
    if (/^(---|\.\.\.)/.test(text)) throw new YamlSubsetError(number, 'document markers are not supported');
    lines.push({ number, indent: text.length - text.trimStart().length, text: text.trim() });
  });
  return lines;
}

function plainScalar(text: string, line: number): YamlValue {
  if (/^[&*!|>{?%@`]/.test(text)) throw new YamlSubsetError(line, `unsupported YAML syntax: ${text}`);
  if (text === 'null' || text === '~') return null;
  if (text === 'true' || text === 'false') return text === 'true';
  if (/^-?\d+$/.test(text)) return Number(text);
  if (/^-?\d+\.\d+$/.test(text)) return Number(text);
  if (/: |\s#/.test(text)) throw new YamlSubsetError(line, `ambiguous plain scalar (quote it): ${text}`);
  return text;
}

function quotedScalar(text: string, line: number): string {
  if (text.startsWith('"')) {
    if (!text.endsWith('"') || text.length < 2) throw new YamlSubsetError(line, `unterminated string: ${text}`);
    return JSON.parse(text) as string;
  }
  if (!text.endsWith("'") || text.length < 2) throw new YamlSubsetError(line, `unterminated string: ${text}`);
  return text.slice(1, -1).replaceAll("''", "'");
}

/** Splits a flow sequence's items at commas outside quotes. */
function flowItems(inner: string, line: number): string[] {
  const items: string[] = [];
  let current = '';
  let quote: string | null = null;
  for (const c of inner) {
    if (quote) {
      current += c;
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
      current += c;
    } else if (c === ',') {
      items.push(current.trim());
      current = '';
    } else if (c === '[' || c === '{') {
      throw new YamlSubsetError(line, 'nested flow collections are not supported');
    } else {
      current += c;
    }
  }
  if (quote) throw new YamlSubsetError(line, 'unterminated string in flow sequence');
  if (current.trim() !== '' || items.length > 0) items.push(current.trim());
  return items;
}

function scalar(text: string, line: number): YamlValue {
  if (text.startsWith('"') || text.startsWith("'")) return quotedScalar(text, line);
  if (text.startsWith('[')) {
    if (!text.endsWith(']')) throw new YamlSubsetError(line, `unterminated flow sequence: ${text}`);
    return flowItems(text.slice(1, -1), line).map((item) => scalar(item, line));
  }
  return plainScalar(text, line);
}

/** `key: value` or `key:`; keys are plain or quoted. */
function splitKey(text: string, line: number): { key: string; rest: string } | null {
  const match = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^'"\s:][^:]*?)\s*:(?:\s+(.*))?$/.exec(text);
  if (!match) return null;
  const rawKey = match[1] as string;
  const key = rawKey.startsWith('"') || rawKey.startsWith("'") ? quotedScalar(rawKey, line) : rawKey;
  return { key, rest: (match[2] ?? '').trim() };
}

class Reader {
  private index = 0;
  constructor(private readonly lines: Line[]) {}

  parseDocument(): YamlValue {
    if (this.lines.length === 0) return null;
    const value = this.parseBlock(this.lines[0]!.indent);
    const left = this.lines[this.index];
    if (left) throw new YamlSubsetError(left.number, 'unexpected indentation');
    return value;
  }

  private parseBlock(indent: number): YamlValue {
    const first = this.lines[this.index]!;
    return first.text === '-' || first.text.startsWith('- ') ? this.parseSequence(indent) : this.parseMapping(indent);
  }

  /** The value after `key:` or `- ` when nothing follows on the line: a nested block or null. */
  private nested(parentIndent: number): YamlValue {
    const next = this.lines[this.index];
    return next && next.indent > parentIndent ? this.parseBlock(next.indent) : null;
  }

  private parseMapping(indent: number, into: Record<string, YamlValue> = {}): Record<string, YamlValue> {
    while (this.index < this.lines.length) {
      const line = this.lines[this.index]!;
      if (line.indent < indent) break;
      if (line.indent > indent) throw new YamlSubsetError(line.number, 'unexpected indentation');
      const entry = splitKey(line.text, line.number);
      if (!entry) throw new YamlSubsetError(line.number, `expected "key: value", got: ${line.text}`);
      if (Object.hasOwn(into, entry.key)) throw new YamlSubsetError(line.number, `duplicate key ${entry.key}`);
      this.index += 1;
      into[entry.key] = entry.rest === '' ? this.nested(indent) : scalar(entry.rest, line.number);
    }
    return into;
  }

  private parseSequence(indent: number): YamlValue[] {
    const items: YamlValue[] = [];
    while (this.index < this.lines.length) {
      const line = this.lines[this.index]!;
      if (line.indent < indent) break;
      if (line.indent > indent || !(line.text === '-' || line.text.startsWith('- ')))
        throw new YamlSubsetError(line.number, 'expected a "- " sequence item');
      const rest = line.text.slice(1).trim();
      this.index += 1;
      if (rest === '') {
        items.push(this.nested(indent));
        continue;
      }
      const entry = rest.startsWith('"') || rest.startsWith("'") || rest.startsWith('[') ? null : splitKey(rest, line.number);
      if (!entry) {
        items.push(scalar(rest, line.number));
        continue;
      }
      // `- key: value` opens a mapping whose further keys sit two columns right of the dash.
      const mapping: Record<string, YamlValue> = {
        [entry.key]: entry.rest === '' ? this.nested(indent + 2) : scalar(entry.rest, line.number),
      };
      const next = this.lines[this.index];
      items.push(next && next.indent === indent + 2 ? this.parseMapping(indent + 2, mapping) : mapping);
    }
    return items;
  }
}

export function parseYamlSubset(source: string): YamlValue {
  return new Reader(toLines(source)).parseDocument();
}
