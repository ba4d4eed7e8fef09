import { readFileSync } from 'node:fs';
import path from 'node:path';

import { listRealTranscripts, loadRealTranscript, type RealTranscript } from '../../../../harness/transcripts.js';
import type { HistoryMessage, NormalizedMessage } from '../../../../src/compaction/types.js';
import { importTranscript } from '../../../../src/importers/index.js';

/**
 * Every conversation of the shared real transcripts (../shared/data/real-transcripts), read
 * through the product's importers the way an import reaches the service, as the history
 * messages the core sees (seq from 1, the meta flag the importers set). The OpenHands
 * fixtures of the repository stand in for an OpenHands run, which the shared set lacks.
 */

export interface RealSession {
  /** `spotter-claude-code/258c7280….jsonl`, `tau-bench/gpt-4o-airline.json#task-3-trial-0` */
  name: string;
  format: RealTranscript['format'] | 'openhands';
  messages: HistoryMessage[];
  /** for mini-swe-agent runs: the files the submitted diff changes */
  submittedFiles?: string[];
}

export function toHistory(messages: readonly NormalizedMessage[]): HistoryMessage[] {
  return messages.map((m, i) => ({
    seq: i + 1,
    role: m.role,
    kind: 'message',
    content: m.content,
    tokens: 0,
    toolUseIds: m.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])),
    toolResultIds: m.content.flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])),
    ...(m.metadata?.['meta'] === true && { meta: true }),
  }));
}

function submittedFiles(file: string): string[] {
  const data = JSON.parse(readFileSync(file, 'utf8')) as { info?: { submission?: string } };
  return [...(data.info?.submission ?? '').matchAll(/^diff --git a\/(\S+)/gm)].map((m) => m[1] as string);
}

const OPENHANDS_FIXTURES = ['openhands-events.json', 'openhands-codeact-output.json'];
const FIXTURES_DIR = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../../fixtures/transcripts');

let cache: RealSession[] | null = null;

export function loadRealSessions(): RealSession[] {
  if (cache) return cache;
  const sessions: RealSession[] = [];
  for (const transcript of listRealTranscripts()) {
    const { conversations } = loadRealTranscript(transcript.path, { format: transcript.format });
    conversations.forEach((conversation, index) => {
      const name = conversations.length > 1 ? `${transcript.name}#${conversation.id ?? index}` : transcript.name;
      const session: RealSession = { name, format: transcript.format, messages: toHistory(conversation.messages) };
      if (transcript.format === 'mini-swe-agent') session.submittedFiles = submittedFiles(transcript.path);
      sessions.push(session);
    });
  }
  for (const fixture of OPENHANDS_FIXTURES) {
    const { conversations } = importTranscript(readFileSync(path.join(FIXTURES_DIR, fixture), 'utf8'), { format: 'openhands' });
    for (const conversation of conversations)
      sessions.push({ name: `fixtures/${fixture}`, format: 'openhands', messages: toHistory(conversation.messages) });
  }
  cache = sessions;
  return sessions;
}
