/**
 * The local summarizer (SPEC §5.6, §7): a summary in the seven sections written from the request
 * itself, without a model; the fallback when a provider fails for good.
 */

export { summarizeLocally } from './local-summarizer.js';
