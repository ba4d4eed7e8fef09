import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';

import { toolDefinition, type ToolName } from '../../compaction/trigger/index.js';
import { mergePolicy } from '../../config/policy.js';
import { getTenantPolicy } from '../../db/repos/tenants.js';
import type { ApiDeps } from '../deps.js';
import { errorResponses } from '../schemas/common.js';
import { ToolDefinitionSchema, ToolQuerySchema } from '../schemas/tools.js';

const SUMMARIES: Record<ToolName, string> = {
  compact: "The agent's `compact` tool: asks for a compaction of its own conversation (`focus` names what to preserve)",
  recall: "The agent's `recall` tool: full-text search over the conversation's archived originals",
};

export function toolRoutes(deps: ApiDeps): FastifyPluginAsyncZod {
  return async (app) => {
    for (const name of ['compact', 'recall'] as const) {
      app.get(
        `/v1/tools/${name}`,
        {
          schema: {
            tags: ['tools'],
            summary: SUMMARIES[name],
            querystring: ToolQuerySchema,
            response: { 200: ToolDefinitionSchema, ...errorResponses },
          },
        },
        async (request) => {
          // The description states the refusal threshold the tenant's policy actually applies.
          const policy = mergePolicy(await getTenantPolicy(deps.db, request.tenantId));
          return toolDefinition(name, request.query.format, { minTokens: policy.toolMinTokens });
        },
      );
    }
  };
}
