import { AppError } from '../lib/errors.js';
import { createTenantSlots } from './tenant-slots.js';

/** Default of COMPACTD_TENANT_MAX_SEARCHES, for a config that does not set it. */
export const DEFAULT_MAX_SEARCHES = 8;
/** A refused search is worth retrying about when a running one ends (well under a second, or its statement timeout). */
const RETRY_AFTER_MS = 1000;

/**
 * The archive searches a tenant runs at once in this process, wherever they come from: the
 * API's search route and the inspector's recall box share one count, so the inspector is not
 * a way around COMPACTD_TENANT_MAX_SEARCHES.
 */
export interface SearchSlots {
  /**
   * Runs `search` holding one of the tenant's slots, given back however it ends (answer,
   * error, or a client gone mid-search: the query still ends, by its statement timeout).
   * Throws a 429 TOO_MANY_SEARCHES at once, before `search` starts, when none is free.
   */
  run<T>(tenantId: string, search: () => Promise<T>): Promise<T>;
}

export function createSearchSlots(maxPerTenant: number = DEFAULT_MAX_SEARCHES): SearchSlots {
  const slots = createTenantSlots(maxPerTenant);
  return {
    run(tenantId, search) {
      const release = slots.tryAcquire(tenantId);
      if (!release) {
        throw new AppError('TOO_MANY_SEARCHES', 'This tenant has too many archive searches running at once; retry shortly.', {
          status: 429,
          retryable: true,
          retryAfterMs: RETRY_AFTER_MS,
        });
      }
      try {
        return search().finally(release);
      } catch (error) {
        release();
        throw error;
      }
    },
  };
}
