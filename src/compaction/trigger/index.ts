/**
 * When a compaction starts (SPEC §5.1): the auto trigger's decision on each append, and the
 * definitions of the agent's `compact` and `recall` tools.
 */

export type { ToolName } from './tool-definitions.js';
export { toolDefinition } from './tool-definitions.js';
export type { TriggerDecision, TriggerState } from './trigger.js';
export { decideAutoCompaction } from './trigger.js';
