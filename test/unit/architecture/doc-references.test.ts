import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

/**
 * The code's references to the project's documents resolve. A comment citing the spec or the
 * style guide by section (`SPEC §5.4`, `STYLE §2`, also `STYLE.md §2` and lists such as
 * `SPEC §5.1/§5.6a` or `SPEC §6.1, §7`) names a numbered heading of docs/spec.md or
 * docs/style.md; a README section quoted by name names a heading of README.md or docs/*.md.
 * Links between README.md and docs/*.md point at files and headings that exist, every doc is
 * linked from the README, and the README stays short.
 */
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const thisFile = fileURLToPath(import.meta.url);

const SCANNED_DIRS = ['src', 'bench', 'chaos', 'eval', 'scripts', 'test', 'migrations', 'examples'];
const SCANNED_ROOT_FILES = ['.dependency-cruiser.cjs', 'vitest.config.ts', 'drizzle.config.ts'];
/** generated reports and data, not code */
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'results', 'data']);
const SOURCE_FILE = /\.(ts|mts|cts|js|mjs|cjs|sql|md)$/;
const README_MAX_LINES = 250;

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : walk(full);
    return SOURCE_FILE.test(entry.name) ? [full] : [];
  });
}

const sourceFiles = [
  ...SCANNED_DIRS.flatMap((dir) => walk(path.join(repoRoot, dir))),
  ...SCANNED_ROOT_FILES.map((file) => path.join(repoRoot, file)).filter((file) => existsSync(file)),
].filter((file) => file !== thisFile);

const docsDir = path.join(repoRoot, 'docs');
const readme = path.join(repoRoot, 'README.md');
const docFiles = readdirSync(docsDir)
  .filter((name) => name.endsWith('.md'))
  .map((name) => path.join(docsDir, name));
const read = (file: string): string => readFileSync(file, 'utf8');
const rel = (file: string): string => path.relative(repoRoot, file);

/** Markdown without its fenced code blocks (an example's `## TASK STATE` is no heading). */
function withoutFences(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

function headings(markdown: string): string[] {
  return withoutFences(markdown)
    .split('\n')
    .flatMap((line) => {
      const match = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
      return match ? [match[1] as string] : [];
    });
}

/** The section numbers of a document's numbered headings: `## 5.4 …`, `### 5.6a …`, `## 2. …`. */
function sectionNumbers(file: string): Set<string> {
  return new Set(
    headings(read(file)).flatMap((text) => {
      const match = /^(\d+(?:\.\d+)*[a-z]?)\.?\s/.exec(text);
      return match ? [match[1] as string] : [];
    }),
  );
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const text of headings(read(file))) {
    const base = slug(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

interface Reference {
  doc: 'SPEC' | 'STYLE';
  section: string;
  at: string;
}

const SECTION = String.raw`(\d+(?:\.\d+)*[a-z]?)`;
const FIRST = new RegExp(String.raw`\b(SPEC|STYLE)(?:\.md)? ?§ ?${SECTION}`, 'g');
/** what may follow a reference and still cite the same document: `, §7`, `/§5.6a`, `–5.3`, after `step 4` */
const MORE = new RegExp(
  String.raw`(?: steps? \d+(?: ?[–-] ?\d+)?| \(\d+\))?(?: ?(?:,|/|and|&) ?§ ?${SECTION}| ?[–-] ?§? ?${SECTION})`,
  'y',
);

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

function sectionReferences(file: string): Reference[] {
  const text = read(file);
  const refs: Reference[] = [];
  for (const match of text.matchAll(FIRST)) {
    const doc = match[1] as Reference['doc'];
    const at = `${rel(file)}:${lineOf(text, match.index)}`;
    refs.push({ doc, section: match[2] as string, at });
    MORE.lastIndex = match.index + match[0].length;
    for (let more = MORE.exec(text); more !== null; more = MORE.exec(text)) {
      refs.push({ doc, section: (more[1] ?? more[2]) as string, at });
    }
  }
  return refs;
}

/** `README "Webhooks"`: a section named by its heading; a quote may run on across comment lines. */
function readmeReferences(file: string): Array<{ title: string; at: string }> {
  const text = read(file);
  return [...text.matchAll(/README "([^"]{1,200})"/g)].map((match) => ({
    title: (match[1] as string).replace(/\s*\n\s*(?:\/\/+|\*|--)?\s*/g, ' ').trim(),
    at: `${rel(file)}:${lineOf(text, match.index)}`,
  }));
}

const plainHeading = (text: string): string =>
  text
    .replace(/`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase();

describe('references to the docs', () => {
  const specSections = sectionNumbers(path.join(docsDir, 'spec.md'));
  const styleSections = sectionNumbers(path.join(docsDir, 'style.md'));
  const references = sourceFiles.flatMap(sectionReferences);

  it('finds the references the code makes (the scan itself works)', () => {
    expect(sourceFiles.length).toBeGreaterThan(100);
    expect(references.filter((r) => r.doc === 'SPEC').length).toBeGreaterThan(50);
    expect(references.filter((r) => r.doc === 'STYLE').length).toBeGreaterThan(0);
  });

  it('points every SPEC § and STYLE § reference at a numbered heading of docs/spec.md or docs/style.md', () => {
    const dangling = references
      .filter((r) => !(r.doc === 'SPEC' ? specSections : styleSections).has(r.section))
      .map((r) => `${r.at}: ${r.doc} §${r.section} (no such heading in docs/${r.doc.toLowerCase()}.md)`);
    expect(dangling).toEqual([]);
  });

  it('points every quoted README section at a heading of README.md or docs/*.md', () => {
    const titles = [readme, ...docFiles].flatMap((file) => headings(read(file))).map(plainHeading);
    const dangling = sourceFiles
      .flatMap(readmeReferences)
      .filter((r) => !titles.some((title) => title.startsWith(r.title.toLowerCase())))
      .map((r) => `${r.at}: README "${r.title}" (no heading starts so in README.md or docs/*.md)`);
    expect(dangling).toEqual([]);
  });
});

describe('README and docs/', () => {
  const pages = [readme, ...docFiles];

  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = withoutFences(read(page)).replace(/`[^`\n]*`/g, '');
      for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = match[1] as string;
        if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        const [file = '', anchor] = target.split('#');
        const resolved = file === '' ? page : path.resolve(path.dirname(page), decodeURIComponent(file));
        if (!existsSync(resolved)) {
          broken.push(`${rel(page)}: ${target} (no such file)`);
        } else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) {
          broken.push(`${rel(page)}: ${target} (no such heading in ${rel(resolved)})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('link every doc from the README', () => {
    const text = read(readme);
    const unlinked = docFiles.map(rel).filter((doc) => !text.includes(`](${doc}`));
    expect(unlinked).toEqual([]);
  });

  it(`keep the README within ${README_MAX_LINES} lines`, () => {
    expect(read(readme).split('\n').length).toBeLessThanOrEqual(README_MAX_LINES);
  });
});
