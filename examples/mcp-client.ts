/**
 * An MCP client (the SDK's own `Client`) using compactd's agent tools through `compactd mcp`:
 * it fills a conversation, lists the tools, calls `compact`, follows the job with
 * `job_status` and finds an archived detail again with `recall`. By default it starts
 * `compactd mcp --conversation ID` itself over stdio; with MCP_URL it talks streamable HTTP
 * to a `compactd mcp --tenant --http PORT` already running.
 *
 *   COMPACTD_BOOTSTRAP_KEY=dev-key-0123456789abcdef npm start &
 *   COMPACTD_BOOTSTRAP_KEY=dev-key-0123456789abcdef npx tsx examples/mcp-client.ts
 *
 * Optional: COMPACTD_URL, COMPACTD_API_KEY, AGENT_CONVERSATION, MCP_URL
 * (e.g. http://127.0.0.1:8091/mcp after `npx compactd mcp --tenant --http 8091`).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createClient } from 'compactd/client';

import { exampleEnv, scriptedTurn } from './scripted-turns.js';

const env = exampleEnv();
const mcpUrl = process.env['MCP_URL'];
const compactd = createClient({ baseUrl: env.compactdUrl, apiKey: env.apiKey });
const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/compactd.mjs');

// Something to compact: a few turns of a debugging session (the tool's threshold lowered to suit a short one).
await compactd.createConversation({ id: env.conversationId, policy: { auto: false, keepRecent: 2, toolMinTokens: 500 } });
await compactd.appendMessages(
  env.conversationId,
  Array.from({ length: env.turns }, (_, i) => [
    { role: 'user' as const, content: scriptedTurn(i) },
    { role: 'assistant' as const, content: `Noted turn ${i + 1}: the resets cluster on one worker.` },
  ]).flat(),
);
console.log(`conversation ${env.conversationId}`);

const transport = mcpUrl
  ? new StreamableHTTPClientTransport(new URL(mcpUrl))
  : new StdioClientTransport({
      command: process.execPath,
      args: [bin, 'mcp', '--conversation', env.conversationId, '--url', env.compactdUrl, ...(env.apiKey ? ['--key', env.apiKey] : [])],
    });
const client = new Client({ name: 'compactd-example', version: '1.0.0' });
await client.connect(transport);
// scoped to the tenant (over HTTP), every call names the conversation
const scope = mcpUrl ? { conversationId: env.conversationId } : {};
const text = (result: unknown) => (result as { content: Array<{ text?: string }> }).content.map((c) => c.text ?? '').join('\n');
try {
  const { tools } = await client.listTools();
  console.log(`tools: ${tools.map((t) => t.name).join(', ')}`);
  const call = await client.callTool({ name: 'compact', arguments: { ...scope, focus: 'the worker ids' } });
  const compacted = text(call);
  console.log(compacted.split('\n')[0]);
  // a refusal (too few tokens yet) comes back as a tool error, for the model to read
  const jobId = call.isError ? undefined : (JSON.parse(compacted.split('\n')[1] ?? '{}') as { jobId?: string }).jobId;
  if (jobId) {
    const job = JSON.parse(text(await client.callTool({ name: 'job_status', arguments: { jobId, waitSeconds: 30 } }))) as {
      status: string;
      result?: { tokensBefore?: number; tokensAfter?: number };
    };
    console.log(
      `job ${jobId}: ${job.status}${job.result?.tokensBefore ? ` (${job.result.tokensBefore} → ${job.result.tokensAfter} tokens)` : ''}`,
    );
  }
  // recall answers as text: one block per archived message (seq, role, tool, batch, then its matching lines)
  const recalled = text(await client.callTool({ name: 'recall', arguments: { ...scope, query: 'ECONNRESET "request 102"' } }));
  console.log(recalled.split('\n').slice(0, 8).join('\n'));
} finally {
  await client.close();
}
