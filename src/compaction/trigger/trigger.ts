import type { Policy } from '../../config/policy.js';

/** What the auto trigger knows about a conversation right after an append (SPEC §5.1). */
export interface TriggerState {
  /** our own count of the active history */
  activeTokens: number;
  /** the provider's last reported input tokens, when the platform posted them */
  reportedInputTokens: number | null;
  contextLimit: number;
  activeMessages: number;
  /** highest seq now */
  lastSeq: number;
  /** watermark of the last completed compaction */
  lastCompactedSeq: number | null;
  /** after a failed or insufficient auto attempt: wait until seq passes this */
  autoPausedUntilSeq: number | null;
  hasActiveJob: boolean;
}

export interface TriggerDecision {
  compact: boolean;
  warning: boolean;
  /** why not, for logs and tests */
  reason: 'threshold' | 'disabled' | 'below_threshold' | 'too_few_messages' | 'cooldown' | 'paused' | 'active_job';
}

/**
 * Auto-compaction decision: provider-reported usage wins over our own count when larger;
 * `triggerRatio` of the window starts a compaction, `warnRatio` raises the warning flag;
 * `minMessages`, the cooldown and the pause after a failed attempt prevent loops.
 */
export function decideAutoCompaction(
  state: TriggerState,
  policy: Pick<Policy, 'auto' | 'triggerRatio' | 'warnRatio' | 'minMessages' | 'cooldownMessages' | 'schedule'>,
): TriggerDecision {
  const tokens = Math.max(state.activeTokens, state.reportedInputTokens ?? 0);
  const warning = tokens >= policy.warnRatio * state.contextLimit;
  const decide = (reason: TriggerDecision['reason']): TriggerDecision => ({ compact: reason === 'threshold', warning, reason });
  if (!policy.auto || policy.schedule === 'idle') return decide('disabled');
  if (tokens < policy.triggerRatio * state.contextLimit) return decide('below_threshold');
  if (state.activeMessages < policy.minMessages) return decide('too_few_messages');
  if (state.lastCompactedSeq !== null && state.lastSeq - state.lastCompactedSeq < policy.cooldownMessages) return decide('cooldown');
  if (state.autoPausedUntilSeq !== null && state.lastSeq <= state.autoPausedUntilSeq) return decide('paused');
  if (state.hasActiveJob) return decide('active_job');
  return decide('threshold');
}
