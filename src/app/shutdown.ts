import type { Logger } from '../obs/logger.js';

export interface ShutdownStep {
  name: string;
  run(): Promise<unknown>;
}

/**
 * Runs every step in order, each in its own try/catch so one failure never skips the rest
 * (BullMQ close()), racing one deadline whose timer is cleared afterwards. Resolves true
 * when every step finished in time.
 */
export async function runShutdown(steps: readonly ShutdownStep[], deadlineMs: number, logger: Logger): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  let clean = true;
  const sequence = (async () => {
    for (const step of steps) {
      try {
        await step.run();
        logger.debug({ step: step.name }, 'shutdown step done');
      } catch (error) {
        clean = false;
        logger.error({ err: error, step: step.name }, 'shutdown step failed');
      }
    }
  })();
  const deadline = new Promise<'deadline'>((resolve) => {
    timer = setTimeout(() => resolve('deadline'), deadlineMs);
    timer.unref();
  });
  const outcome = await Promise.race([sequence.then(() => 'done' as const), deadline]);
  clearTimeout(timer);
  if (outcome === 'deadline') logger.error({ deadlineMs }, 'shutdown deadline passed; exiting with steps unfinished');
  return outcome === 'done' && clean;
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGINT: 2, SIGTERM: 15 };

/**
 * First SIGTERM/SIGINT: ordered shutdown, then exit 128+signo. A second signal (or the
 * deadline) forces the exit.
 */
export function onShutdownSignal(steps: () => readonly ShutdownStep[], deadlineMs: number, logger: Logger): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    const code = 128 + (SIGNAL_NUMBERS[signal] ?? 15);
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(code);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    void runShutdown(steps(), deadlineMs, logger).then(() => process.exit(code));
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
