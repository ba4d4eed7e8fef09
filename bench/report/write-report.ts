import { writeFileSync } from 'node:fs';
export function writeReport(results: unknown, paths: { markdown: string; svg: string; svgLink: string; jsonLink: string }): void {
  writeFileSync(paths.markdown, `# placeholder\n\n${paths.jsonLink}\n`);
  void results;
}
