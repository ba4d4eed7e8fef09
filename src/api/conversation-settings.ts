import { mergePolicy, type PolicyOverride } from '../config/policy.js';
import type { DbOrTx } from '../db/client.js';
import { getTenantPolicy } from '../db/repos/tenants.js';
import { AppError } from '../lib/errors.js';
import { configuredModels, modelSpecProblem } from '../llm/configured-models.js';
import type { ApiDeps } from './deps.js';

/**
 * Checks made when a conversation's settings are written (create, PATCH), so a contradiction
 * is a 400 naming the field at once, not a failure of every later append or compaction.
 */

/**
 * The policy overrides merged over the tenant policy and the defaults must satisfy the
 * cross-field rules. A broken rule is reported on the fields of it that the request set
 * (all of them when it set none, e.g. a tenant default that clashes).
 */
export async function checkPolicyAsWhole(db: DbOrTx, tenantId: string, override: PolicyOverride, fieldPrefix: string): Promise<void> {
  try {
    mergePolicy(await getTenantPolicy(db, tenantId), override);
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'INVALID_POLICY') throw error;
    const all = error.details ?? [];
    const named = all.filter((detail) => isSet(override, detail.field.split('.')));
    const details = (named.length > 0 ? named : all).map((detail) => ({
      field: `${fieldPrefix}.${detail.field}`,
      message: detail.message,
    }));
    throw new AppError('INVALID_POLICY', details.map((d) => `${d.field}: ${d.message}`).join('; '), { status: 400, details });
  }
}

function isSet(value: unknown, path: readonly string[]): boolean {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object' || !(key in current)) return false;
    current = (current as Record<string, unknown>)[key];
  }
  return current !== undefined;
}

/** A summarizer model must be served by a configured provider: the local fallback is for failures, not for typos. */
export function checkSummarizerModel(config: ApiDeps['config'], spec: string | undefined, field: string): void {
  if (spec === undefined) return;
  const problem = modelSpecProblem(spec, configuredModels(config));
  if (problem !== null)
    throw new AppError('MODEL_UNAVAILABLE', `${field}: ${problem}`, { status: 400, details: [{ field, message: problem }] });
}
