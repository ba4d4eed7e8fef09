/**
 * Synchronous teardown when this process exits: a private service or a compactd child must
 * not outlive the run that started it, even one interrupted before its own `close()`.
 */

const cleanups = new Set<() => void>();
let exitHookInstalled = false;

/** Runs `cleanup` at exit; the returned function unregisters it (once the thing is closed normally). */
export function onExit(cleanup: () => void): () => void {
  cleanups.add(cleanup);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const run of cleanups) run();
    });
  }
  return () => cleanups.delete(cleanup);
}
