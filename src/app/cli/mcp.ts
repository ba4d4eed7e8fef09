import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import type { CompactdClient } from '../../client/index.js';
import {
  type CliIo,
  connect,
  CONNECTION_OPTIONS,
  CONNECTION_USAGE,
  describeError,
  numberOption,
  processIo,
  resolveConnection,
  UsageError,
} from './common.js';
import { callMcpTool, loadMcpTools, type McpScope, type McpTool } from './mcp-tools.js';

const USAGE = `usage: compactd mcp (--conversation ID | --tenant) [--http PORT [--host HOST]]

An MCP server exposing compactd's agent tools (compact, recall, job_status) backed by a
running compactd. Over stdio by default (an MCP client starts it as a subprocess); with
--http it serves streamable HTTP at http://HOST:PORT/mcp (PORT 0 picks a free one).

  --conversation ID   the tools act on this conversation
  --tenant            the tools act on any conversation of the key's tenant (each names its conversationId)
  --http PORT         serve streamable HTTP instead of stdio
  --host HOST         interface for --http (default 127.0.0.1)
${CONNECTION_USAGE}
`;

const VERSION = '0.1.0';

/** One MCP server over the given tools; a fresh one per HTTP request (stateless) or one for stdio. */
function mcpServer(client: CompactdClient, scope: McpScope, tools: McpTool[]): Server {
  const server = new Server({ name: 'compactd', version: VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, (request) =>
    callMcpTool(client, scope, request.params.name, request.params.arguments ?? {}),
  );
  return server;
}

function parseMcpArgs(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      ...CONNECTION_OPTIONS,
      conversation: { type: 'string' },
      tenant: { type: 'boolean' },
      http: { type: 'string' },
      host: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: false,
  });
  if (values.help) return { help: true as const };
  if ((values.conversation === undefined) === (values.tenant !== true))
    throw new UsageError('give --conversation ID or --tenant (one of them)');
  const scope: McpScope = values.conversation !== undefined ? { conversationId: values.conversation } : { tenant: true };
  const port = numberOption('http', values.http, (n) => Number.isInteger(n) && n >= 0 && n <= 65_535);
  if (values.host !== undefined && port === undefined) throw new UsageError('--host needs --http');
  return { help: false as const, values, scope, port, host: values.host ?? '127.0.0.1' };
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  return raw === '' ? undefined : JSON.parse(raw);
}

function jsonRpcError(response: ServerResponse, status: number, code: number, message: string): void {
  response
    .writeHead(status, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/** Stateless streamable HTTP: every POST /mcp gets its own server and transport; GET and DELETE are 405. */
async function handleHttp(request: IncomingMessage, response: ServerResponse, build: () => Server): Promise<void> {
  const path = new URL(request.url ?? '/', 'http://localhost').pathname;
  if (path !== '/mcp') return jsonRpcError(response, 404, -32_000, 'not found: the MCP endpoint is /mcp');
  if (request.method !== 'POST') return jsonRpcError(response, 405, -32_000, 'method not allowed: this server is stateless, POST only');
  let body: unknown;
  try {
    body = await readBody(request);
  } catch {
    return jsonRpcError(response, 400, -32_700, 'parse error: the body is not JSON');
  }
  const server = build();
  // No session id generator: the stateless mode (the option is read as "absent", hence the cast).
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined } as unknown as ConstructorParameters<
    typeof StreamableHTTPServerTransport
  >[0]);
  response.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request, response, body);
}

/** Starts the HTTP server; resolves with its URL. */
export async function serveMcpHttp(client: CompactdClient, scope: McpScope, tools: McpTool[], options: { port: number; host: string }) {
  const http = createServer((request, response) => {
    handleHttp(request, response, () => mcpServer(client, scope, tools)).catch(() => {
      if (!response.headersSent) jsonRpcError(response, 500, -32_603, 'internal error');
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => resolve());
  });
  const address = http.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return { url: `http://${host}:${port}/mcp`, close: () => new Promise<void>((resolve) => http.close(() => resolve())) };
}

/** `compactd mcp`: stdout belongs to the protocol over stdio, so everything else goes to stderr. */
export async function runMcp(args: string[], io: CliIo = processIo()): Promise<number | undefined> {
  let parsed: ReturnType<typeof parseMcpArgs>;
  try {
    parsed = parseMcpArgs(args);
  } catch (error) {
    io.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return 2;
  }
  if (parsed.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const connection = resolveConnection(parsed.values, io.env);
  const client = connect(connection);
  let tools: McpTool[];
  try {
    tools = await loadMcpTools(client, parsed.scope);
  } catch (error) {
    io.stderr.write(describeError(error, connection));
    return 1;
  }
  if (parsed.port !== undefined) {
    const served = await serveMcpHttp(client, parsed.scope, tools, { port: parsed.port, host: parsed.host });
    io.stderr.write(`compactd mcp: streamable HTTP at ${served.url}\n`);
    const stop = () => void served.close().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return undefined;
  }
  const server = mcpServer(client, parsed.scope, tools);
  await server.connect(new StdioServerTransport());
  return undefined;
}
