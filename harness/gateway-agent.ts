/**
 * An agent as the gateway meets it, for the tests and the bench that drive one through it
 * until strategy `auto` asks the provider's own compaction (SPEC §5.10): a system prompt past
 * the providers' minimum cacheable length, one tool in each API's shape, turns of build logs
 * that fill a small window quickly, and requests marked for the prompt cache as Claude Code
 * marks its own.
 */

export const AGENT_SYSTEM = `You are a coding agent. ${'Follow the repository conventions, run the tests before committing. '.repeat(30)}`;

/** The agent's one tool, Anthropic Messages shape. */
export const ANTHROPIC_AGENT_TOOLS = [
  {
    name: 'Bash',
    description: 'Runs a shell command',
    input_schema: { type: 'object' as const, properties: { command: { type: 'string' } } },
  },
];

/** The agent's one tool, Responses API shape. */
export const RESPONSES_AGENT_TOOLS = [
  {
    type: 'function' as const,
    name: 'exec_command',
    strict: false,
    parameters: { type: 'object', properties: { cmd: { type: 'string' } } },
  },
];

/** The user's turn `i`: a ~600-token build log. */
export const buildLogStep = (i: number): string =>
  `Step ${i}: the build log of src/module${i}.ts. ${'error TS2345 at src/module.ts:12, expected string got number. '.repeat(30)}`;

export type AgentTurn = { role: 'user' | 'assistant'; content: Array<Record<string, unknown>> };

/** The agent's request as Claude Code shapes it: a breakpoint on the last block of the last message. */
export function withLastBlockBreakpoint(history: readonly AgentTurn[]): AgentTurn[] {
  return history.map((turn, i) =>
    i === history.length - 1
      ? {
          ...turn,
          content: turn.content.map((b, j) => (j === turn.content.length - 1 ? { ...b, cache_control: { type: 'ephemeral' } } : b)),
        }
      : turn,
  );
}
