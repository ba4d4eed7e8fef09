import { type AnthropicTool, type CompactdClient, isCompactdError } from '../../client/index.js';
import { renderRecall } from './recall-text.js';

/**
 * The agent tools compactd defines (`compact`, `recall`; GET /v1/tools/:name), plus
 * `job_status`, as MCP tools. The definitions are fetched from the service, so their
 * descriptions state the tenant's real thresholds. Scoped to one conversation, the tools
 * take exactly the input compactd defines; scoped to the tenant, each also names its
 * `conversationId`.
 */

export type McpScope = { conversationId: string } | { tenant: true };

export interface McpTool {
  name: string;
  description: string;
  inputSchema: {
    type: 'object';
    properties: Record<string, Record<string, unknown>>;
    required?: string[] | undefined;
    additionalProperties?: boolean | undefined;
  };
}

export interface McpToolResult {
  content: Array<{ type: 'text'; text: string }>;
  isError?: boolean;
  [key: string]: unknown;
}

const CONVERSATION_ID = { type: 'string', minLength: 1, description: 'The compactd conversation id.' };

const JOB_STATUS: McpTool = {
  name: 'job_status',
  description:
    'The status of a compaction job started by `compact`: queued, running, completed, noop, failed or cancelled, its ' +
    'progress, and once completed the tokens before and after and the number of messages archived. `waitSeconds` waits up ' +
    'to that long for the job to end.',
  inputSchema: {
    type: 'object',
    properties: {
      jobId: { type: 'string', minLength: 1, description: 'The job id `compact` returned.' },
      waitSeconds: {
        type: 'integer',
        minimum: 0,
        maximum: 30,
        description: 'Wait up to this many seconds for the job to end (default 0).',
      },
    },
    required: ['jobId'],
    additionalProperties: false,
  },
};

function scoped(tool: AnthropicTool, scope: McpScope): McpTool {
  const schema = tool.input_schema;
  if ('conversationId' in scope) return { name: tool.name, description: tool.description, inputSchema: schema };
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: {
      ...schema,
      properties: { conversationId: CONVERSATION_ID, ...schema.properties },
      required: ['conversationId', ...(schema.required ?? [])],
    },
  };
}

/** The tool list, fetched once from the service. */
export async function loadMcpTools(client: CompactdClient, scope: McpScope): Promise<McpTool[]> {
  const [compact, recall] = await Promise.all([client.getTool('compact'), client.getTool('recall')]);
  return [scoped(compact, scope), scoped(recall, scope), JOB_STATUS];
}

/** A bad tool input: answered to the model as a tool error naming the field. */
class ToolInputError extends Error {}

function stringField(args: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const value = args[name];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new ToolInputError(`${name}: must be a non-empty string`);
  return value;
}

function intField(args: Record<string, unknown>, name: string, min: number, max: number): number | undefined {
  const value = args[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new ToolInputError(`${name}: must be an integer from ${min} to ${max}`);
  return value;
}

function conversationOf(args: Record<string, unknown>, scope: McpScope): string {
  return 'conversationId' in scope ? scope.conversationId : (stringField(args, 'conversationId', true) as string);
}

const text = (value: unknown, isError = false): McpToolResult => ({
  content: [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value, null, 2) }],
  ...(isError ? { isError: true } : {}),
});

async function runTool(client: CompactdClient, scope: McpScope, name: string, args: Record<string, unknown>): Promise<McpToolResult> {
  switch (name) {
    case 'compact': {
      const conversationId = conversationOf(args, scope);
      const focus = stringField(args, 'focus', false);
      const job = await client.compact(conversationId, { trigger: 'tool', ...(focus ? { focus } : {}) });
      const running = job.deduplicated ? ' (one was already running)' : '';
      return text(
        `Compaction job ${job.id} is ${job.status}${running}. Keep working: the conversation's context is compacted once it ` +
          `completes (job_status tells when).\n${JSON.stringify({ jobId: job.id, status: job.status, deduplicated: job.deduplicated ?? false })}`,
      );
    }
    case 'recall': {
      const conversationId = conversationOf(args, scope);
      const query = stringField(args, 'query', true) as string;
      const limit = intField(args, 'limit', 1, 50);
      const found = await client.searchArchive(conversationId, query, limit === undefined ? {} : { limit });
      return text(renderRecall(query, found));
    }
    case 'job_status': {
      const jobId = stringField(args, 'jobId', true) as string;
      const waitSeconds = intField(args, 'waitSeconds', 0, 30);
      const job = await client.getJob(jobId, { waitSeconds });
      // Scoped to one conversation, the tools see only its jobs.
      if ('conversationId' in scope && job.conversationId !== scope.conversationId)
        return text(`jobId: ${jobId} is not a job of conversation ${scope.conversationId}`, true);
      return text({
        id: job.id,
        conversationId: job.conversationId,
        status: job.status,
        trigger: job.trigger,
        progress: job.progress,
        result: job.result,
        error: job.error,
      });
    }
    default:
      return text(`unknown tool ${name}`, true);
  }
}

/**
 * Answers one tool call. A refusal by the service (a 4xx: too few tokens to compact, an
 * unknown conversation or job) and a bad input are the model's to read, as tool errors;
 * anything else (the service unreachable) is thrown for the MCP layer to report.
 */
export async function callMcpTool(
  client: CompactdClient,
  scope: McpScope,
  name: string,
  args: Record<string, unknown> = {},
): Promise<McpToolResult> {
  try {
    return await runTool(client, scope, name, args);
  } catch (error) {
    if (error instanceof ToolInputError) return text(error.message, true);
    if (isCompactdError(error) && error.status >= 400 && error.status < 500) {
      const fields = error.errors.map((f) => `\n  ${f.field}: ${f.message}`).join('');
      return text(`${error.code}: ${error.detail ?? error.title}${fields}`, true);
    }
    throw error;
  }
}
