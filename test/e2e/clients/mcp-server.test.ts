import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CompactdClient, createClient } from 'compactd/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { agentTurn } from '../../helpers/adapter-turns.js';
import { createStack, type Stack } from '../../helpers/stack.js';

/** `compactd mcp` as a real subprocess, driven by the MCP SDK's own client over stdio and over streamable HTTP. */

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = ['--import', 'tsx', path.join(repoRoot, 'src/main.ts'), 'mcp'];

let stack: Stack;
let url: string;
let compactd: CompactdClient;
const children: ChildProcess[] = [];
beforeAll(async () => {
  stack = await createStack();
  url = await stack.app.listen({ port: 0, host: '127.0.0.1' });
  compactd = createClient({ baseUrl: url, apiKey: stack.key });
});
afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await stack?.close();
});

async function seed(id: string): Promise<void> {
  await compactd.createConversation({ id, policy: { auto: false, keepRecent: 2, toolMinTokens: 200 } });
  const messages = Array.from({ length: 8 }, (_, i) => [
    { role: 'user' as const, content: agentTurn(i) },
    { role: 'assistant' as const, content: `Noted turn ${i}: the resets cluster on one worker.` },
  ]).flat();
  await compactd.appendMessages(id, messages);
}

type ToolText = { content: Array<{ type: string; text?: string }>; isError?: boolean };
const textOf = (result: unknown) => (result as ToolText).content.map((c) => c.text ?? '').join('\n');

/** compact → job_status (waits for the end) → recall, the way an agent would use them. */
async function exercise(client: Client, conversation: Record<string, string>, id: string) {
  const compacted = await client.callTool({ name: 'compact', arguments: { ...conversation, focus: 'the worker ids' } });
  expect((compacted as ToolText).isError ?? false, textOf(compacted)).toBe(false);
  const [job] = (await compactd.listJobs(id)).jobs;
  expect(job).toMatchObject({ trigger: 'tool', options: { focus: 'the worker ids' } });
  expect(textOf(compacted)).toContain(job!.id);

  const status = await client.callTool({ name: 'job_status', arguments: { jobId: job!.id, waitSeconds: 30 } });
  expect(JSON.parse(textOf(status))).toMatchObject({ id: job!.id, status: 'completed', result: { messagesArchived: expect.any(Number) } });

  const recalled = await client.callTool({ name: 'recall', arguments: { ...conversation, query: 'ECONNRESET "request 102"' } });
  // one block per hit: seq, role, tool, batch, then its matching lines
  expect(textOf(recalled)).toMatch(/archived messages? match/);
  expect(textOf(recalled)).toMatch(/^seq \d+ · \w+ · tool .+ · batch .+$/m);
  expect(textOf(recalled)).toContain('102');
}

describe('compactd mcp', () => {
  it('over stdio, scoped to one conversation: the tools compactd defines, answered by the service', async () => {
    await seed('mcp-stdio');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...CLI, '--conversation', 'mcp-stdio', '--url', url, '--key', stack.key],
      cwd: repoRoot,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['compact', 'recall', 'job_status']);
      const served = await compactd.getTool('compact');
      expect(tools[0]).toMatchObject({ description: served.description, inputSchema: served.input_schema });

      await exercise(client, {}, 'mcp-stdio');
      // a refusal is the model's to read, as a tool error
      const again = await client.callTool({ name: 'recall', arguments: { query: '' } });
      expect(again).toMatchObject({ isError: true });
      expect(textOf(again)).toContain('query');
    } finally {
      await client.close();
    }
  });

  it('over streamable HTTP, scoped to the tenant: each call names its conversation', async () => {
    await seed('mcp-http');
    const child = spawn(process.execPath, [...CLI, '--tenant', '--http', '0', '--url', url, '--key', stack.key], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const endpoint = await new Promise<string>((resolve, reject) => {
      let err = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        err += chunk.toString();
        const match = /streamable HTTP at (\S+)/.exec(err);
        if (match) resolve(match[1]!);
      });
      child.on('exit', (code) => reject(new Error(`compactd mcp exited ${code}: ${err}`)));
    });
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
    try {
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === 'compact')!.inputSchema.required).toEqual(['conversationId']);
      await exercise(client, { conversationId: 'mcp-http' }, 'mcp-http');
      const missing = await client.callTool({ name: 'compact', arguments: { conversationId: 'no-such-conversation' } });
      expect(missing).toMatchObject({ isError: true });
      expect(textOf(missing)).toContain('CONVERSATION_NOT_FOUND');
    } finally {
      await client.close();
    }
  });
});
