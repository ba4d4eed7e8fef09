import type { Block, Role } from '../../src/compaction/types.js';

/**
 * A transcript read as the steps an agent took, by the eval's own reading (independent of
 * the service's extractors): each tool call with its result, and each shell block an agent
 * wrote in prose (mini-swe-agent) with the observation that answered it.
 */

/** The slice of a message the probes read: imported, stored and active messages all fit. */
export interface ProbeMessage {
  role: Role;
  content: Block[];
  metadata?: Record<string, unknown>;
}

export interface StepResult {
  text: string;
  /** the tool flagged it, a shell reported a non-zero exit code, or the output starts with `Error:` */
  failed: boolean;
  /** the exit code when the result states one */
  exitCode: number | null;
}

export interface Step {
  /** index of the message that made the call */
  messageIndex: number;
  /** tool name; `shell` for a fenced shell block in prose */
  tool: string;
  input: Record<string, unknown>;
  /** the shell command of the step, when it runs one */
  command: string | null;
  result: StepResult | null;
}

const FENCED_SHELL = /```(?:bash|sh|shell)\s*\n([\s\S]*?)```/g;
const RETURN_CODE = /<returncode>\s*(-?\d+)\s*<\/returncode>/;
const EXIT_CODE = /^(?:Exit code|\[Command finished with exit code)\s+(-?\d+)/m;
// a tool that reports its failure in its output (τ-bench: `Error: …`)
const TOOL_ERROR = /^\s*Error:|timed out and has been killed/;
const SHELL_TOOLS = /^(bash|shell|execute_bash|run_command|run_shell|terminal|exec_command|local_shell|container\.exec)$/i;

export function resultText(block: Extract<Block, { type: 'tool_result' }>): string {
  if (typeof block.content === 'string') return block.content;
  return block.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

function messageText(message: ProbeMessage): string {
  return message.content.map((b) => (b.type === 'text' ? b.text : b.type === 'tool_result' ? resultText(b) : '')).join('\n');
}

function asRecord(input: unknown): Record<string, unknown> {
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

/** The shell command a tool call runs: a `command`/`cmd` string, or an argv array (`["bash","-lc","…"]`). */
export function commandOf(tool: string, input: Record<string, unknown>): string | null {
  const value = input['command'] ?? input['cmd'];
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
    const argv = value as string[];
    const shell = argv.length >= 3 && /(^|\/)(ba|z)?sh$/.test(argv[0] ?? '') && /^-l?c$/.test(argv[1] ?? '');
    return shell ? (argv[2] ?? null) : argv.join(' ');
  }
  if (typeof value !== 'string') return null;
  // str_replace_editor and task trackers also name their operation `command`
  return SHELL_TOOLS.test(tool) || tool === 'Bash' ? value : null;
}

function exitCodeOf(text: string): number | null {
  const match = RETURN_CODE.exec(text) ?? EXIT_CODE.exec(text);
  return match ? Number(match[1]) : null;
}

function stepResult(text: string, flagged: boolean): StepResult {
  const exitCode = exitCodeOf(text);
  return { text, failed: flagged || (exitCode !== null && exitCode !== 0) || TOOL_ERROR.test(text), exitCode };
}

// Claude Code's shell mode: `!cmd` is written as a user turn `<bash-input>cmd</bash-input>` (entities for
// `<`, `>`, `&`), its output as `<bash-stdout>…</bash-stdout><bash-stderr>…</bash-stderr>` in the same
// turn or the next (a failure ends stderr with `Exit code N`)
const SHELL_MODE_INPUT = /^\s*<bash-input>([\s\S]*?)<\/bash-input>/;
const SHELL_MODE_OUTPUT = /<bash-std(?:out|err)>/;

function shellModeStep(message: ProbeMessage, next: ProbeMessage | undefined, messageIndex: number): Step | null {
  const text = messageText(message);
  const input = SHELL_MODE_INPUT.exec(text)?.[1];
  if (input === undefined || input.trim().length === 0) return null;
  const command = input.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  const nextText = next?.role === 'user' ? messageText(next) : '';
  const output = SHELL_MODE_OUTPUT.test(text) ? text : SHELL_MODE_OUTPUT.test(nextText) ? nextText : null;
  return { messageIndex, tool: 'bash-input', input: { command }, command, result: output === null ? null : stepResult(output, false) };
}

/** Every step of a transcript in order, each paired with its result when the transcript has one. */
export function transcriptSteps(messages: readonly ProbeMessage[]): Step[] {
  const steps: Step[] = [];
  const byToolId = new Map<string, Step>();
  let pendingProse: Step | null = null;
  messages.forEach((message, messageIndex) => {
    for (const block of message.content) {
      if (block.type === 'tool_use') {
        const input = asRecord(block.input);
        const step: Step = { messageIndex, tool: block.name, input, command: commandOf(block.name, input), result: null };
        steps.push(step);
        byToolId.set(block.id, step);
      } else if (block.type === 'tool_result') {
        const step = byToolId.get(block.tool_use_id);
        if (step) step.result = stepResult(resultText(block), block.is_error === true);
      }
    }
    if (message.role === 'assistant') {
      // mini-swe-agent: one fenced shell block per turn, answered by the next user turn's
      // observation; a turn with several blocks is refused by the harness and none of them runs
      const prose = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
      const blocks = [...prose.matchAll(FENCED_SHELL)].map((match) => (match[1] ?? '').trim()).filter((command) => command.length > 0);
      if (blocks.length === 1) {
        const command = blocks[0] as string;
        pendingProse = { messageIndex, tool: 'shell', input: { command }, command, result: null };
        steps.push(pendingProse);
      }
    } else if (pendingProse && message.role !== 'system') {
      const text = messageText(message);
      if (RETURN_CODE.test(text) || TOOL_ERROR.test(text)) pendingProse.result = stepResult(text, false);
      pendingProse = null;
    }
    if (message.role === 'user') {
      const shell = shellModeStep(message, messages[messageIndex + 1], messageIndex);
      if (shell) steps.push(shell);
    }
  });
  return steps;
}
