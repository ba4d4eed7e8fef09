import { z } from 'zod';

import type { DbOrTx } from '../../db/client.js';
import { getGatewayAccess, type StoredGatewayAccess } from '../../db/repos/tenant-gateway-access.js';
import { AppError } from '../../lib/errors.js';
import { findModel } from '../../llm/models.js';
import type { GatewayProvider } from './identity.js';
import { usesOperatorKey } from './upstream.js';

/**
 * What a tenant may use through the gateway when compactd's own provider key pays for it
 * (no `x-compactd-upstream-key`): which models, and which provider-side tools (Anthropic
 * server tools such as `web_search_20250305`, billed per use on the operator's account).
 * A request with the tenant's own key is the tenant's business and is not checked.
 */

/** null fields: the defaults (models: the registry's models of the gateway provider; server tools: none). */
export type GatewayAccess = StoredGatewayAccess;

export type ModelAccessVerdict = { ok: true } | { ok: false; field: string; message: string };

/**
 * An entry of the lists: a model id or server tool type as the provider spells it, or a
 * prefix ending in `*` (`claude-sonnet-*`, `web_search_*`), or `*` alone for everything.
 */
const ACCESS_ENTRY = /^(?:\*|[A-Za-z0-9][A-Za-z0-9._:@/-]{0,254}\*?)$/;

const entrySchema = z
  .string()
  .regex(ACCESS_ENTRY, 'must be a model id or tool type (letters, digits, . _ : @ / -), optionally ending in * for a prefix');

/** The body of a change: a list replaces the tenant's, null goes back to the default, absent keeps it. */
export const GatewayAccessPatchSchema = z
  .object({
    models: z.array(entrySchema).max(500, 'at most 500 entries').nullable().optional(),
    serverTools: z.array(entrySchema).max(100, 'at most 100 entries').nullable().optional(),
  })
  .strict();

export type GatewayAccessPatch = z.infer<typeof GatewayAccessPatchSchema>;

/**
 * A snapshot of a listed model: Anthropic `-20251001`, OpenAI `-2024-08-06`, Vertex
 * `@20240620`, and the `-latest` aliases. Anything else after a listed id is another model
 * (`claude-opus-4` does not list `claude-opus-4-5`).
 */
const SNAPSHOT_SUFFIX = /^(?:-\d{8}|-\d{4}-\d{2}-\d{2}|@\d{8}|-latest)$/;

/** Whether a list entry names `value` (case-insensitive): exactly, by prefix (`…*`), or, for models, as one of its snapshots. */
export function entryMatches(entry: string, value: string, kind: 'model' | 'tool'): boolean {
  const wanted = entry.toLowerCase();
  const given = value.toLowerCase();
  if (wanted.endsWith('*')) return given.startsWith(wanted.slice(0, -1));
  if (given === wanted) return true;
  return kind === 'model' && given.startsWith(wanted) && SNAPSHOT_SUFFIX.test(given.slice(wanted.length));
}

/**
 * The default models: those the model registry lists for the gateway provider's own vendor,
 * matched the way the registry matches names (dated snapshots, `vendor/` prefixes). A model of
 * another vendor reached through a compatible base URL (Gemini through the OpenAI gateway)
 * must be listed for the tenant.
 */
export function isDefaultModel(provider: GatewayProvider, model: string): boolean {
  return findModel(model)?.vendor === provider;
}

/** A provider-side capability a request asks for: where it is in the body, and its name in the lists. */
interface ServerTool {
  field: string;
  name: string;
}

/** Tool types that are the client's own functions; any other `type` is run (and billed) by the provider. */
const CLIENT_TOOL_TYPES: Record<GatewayProvider, ReadonlySet<string>> = {
  anthropic: new Set(['custom']),
  // Responses API: `namespace` groups function tools under one name (Codex's sub-agent tools);
  // `local_shell`, `shell` and `apply_patch` calls are run by the client, as a function's are
  openai: new Set(['function', 'custom', 'namespace', 'local_shell', 'shell', 'apply_patch']),
};

/**
 * Body fields that make the provider act outside the model: Anthropic's MCP connector calls
 * the servers it names, OpenAI's `web_search_options` searches the web. Listed by their field
 * name, like a tool type.
 */
const SERVER_FIELDS: Record<GatewayProvider, readonly string[]> = {
  anthropic: ['mcp_servers'],
  openai: ['web_search_options'],
};

function serverToolsOf(provider: GatewayProvider, body: Record<string, unknown>): ServerTool[] {
  const found: ServerTool[] = [];
  const tools = body['tools'];
  if (Array.isArray(tools)) {
    tools.forEach((tool: unknown, index) => {
      const type = typeof tool === 'object' && tool !== null ? (tool as Record<string, unknown>)['type'] : undefined;
      if (type === undefined || type === null || (typeof type === 'string' && CLIENT_TOOL_TYPES[provider].has(type))) return;
      found.push({ field: `body.tools[${index}]`, name: typeof type === 'string' ? type : JSON.stringify(type) });
    });
  }
  for (const field of SERVER_FIELDS[provider]) {
    if (body[field] !== undefined && body[field] !== null) found.push({ field: `body.${field}`, name: field });
  }
  return found;
}

/**
 * Whether a request body sent with compactd's provider key keeps to the tenant's access
 * setting (null: the defaults). The first thing it may not use is named: `body.model`, or the
 * tool (`body.tools[i]`) or field of a server-side capability.
 */
export function checkModelAccess(provider: GatewayProvider, body: unknown, access: GatewayAccess | null): ModelAccessVerdict {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { ok: false, field: 'body', message: 'the body must be a JSON object' };
  const fields = body as Record<string, unknown>;
  const model = fields['model'];
  if (typeof model !== 'string' || model === '') return { ok: false, field: 'body.model', message: 'model: must name a model' };
  const listed = access?.models ?? null;
  const modelAllowed = listed === null ? isDefaultModel(provider, model) : listed.some((entry) => entryMatches(entry, model, 'model'));
  if (!modelAllowed) {
    const which =
      listed === null ? `the ${provider} models of compactd's model registry` : "the models listed in this tenant's gateway access";
    return {
      ok: false,
      field: 'body.model',
      message: `model: ${model} may not be used with compactd's provider key (only ${which}); send your own key in x-compactd-upstream-key to use it`,
    };
  }
  const allowedTools = access?.serverTools ?? [];
  for (const tool of serverToolsOf(provider, fields)) {
    if (!allowedTools.some((entry) => entryMatches(entry, tool.name, 'tool'))) {
      return {
        ok: false,
        field: tool.field,
        message: `${tool.field.replace(/^body\./, '')}: the server tool ${tool.name} may not be used with compactd's provider key (not in this tenant's gateway access); send your own key in x-compactd-upstream-key to use it`,
      };
    }
  }
  return { ok: true };
}

/** The tenant's access setting as stored (null: all defaults). */
export function loadModelAccess(db: DbOrTx, tenantId: string): Promise<GatewayAccess | null> {
  return getGatewayAccess(db, tenantId);
}

/**
 * The gateway's check before it forwards a request: nothing to check when the request brings
 * its own provider key, else the tenant's setting is read and a body it does not allow is a
 * 403 naming the field (the gateway answers it in the provider's error shape).
 */
export async function enforceModelAccess(
  db: DbOrTx,
  tenantId: string,
  provider: GatewayProvider,
  headers: Record<string, string | string[] | undefined>,
  body: unknown,
): Promise<void> {
  if (!usesOperatorKey(headers)) return;
  const verdict = checkModelAccess(provider, body, await loadModelAccess(db, tenantId));
  if (!verdict.ok) throw new AppError('MODEL_NOT_ALLOWED', verdict.message, { status: 403, field: verdict.field });
}

/**
 * Strategy native runs on compactd's provider key (SPEC §5.10): the agent's model asked for
 * with a compaction keeps to the tenant's gateway access, as the gateway's own requests do.
 */
export async function enforceAgentModelAccess(
  db: DbOrTx,
  tenantId: string,
  agent: { provider: GatewayProvider; model: string },
): Promise<void> {
  const verdict = checkModelAccess(agent.provider, { model: agent.model }, await loadModelAccess(db, tenantId));
  if (!verdict.ok)
    throw new AppError('MODEL_NOT_ALLOWED', verdict.message.replace(/^model:/, 'agent.model:'), { status: 403, field: 'body.agent.model' });
}
