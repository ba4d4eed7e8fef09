import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the old generation grow past what survived the last full collection before
 * collecting again: 1.5×. On a host with much memory V8 picks 4× (its "huge" heap limit), so
 * a worker whose live heap reaches ~120 MB during a 100,000-message job (the plan step's
 * snapshot, finalize's chunk rows) let its heap in use climb to ~420 MB of garbage from the
 * summarize steps before a full collection, the bulk of its peak RSS. 1.5× keeps the heap
 * within half again the live set, at the price of more frequent (short) full collections.
 * `compactd start` applies it too, where the API shares the process with the workers. The flag
 * replaces V8's factor in every mode, so a heap near its limit also grows by 1.5× (V8 would use
 * at most 1.3× there): the limit itself is unchanged.
 */
const HEAP_GROWING_PERCENT = 50;

/**
 * Applies HEAP_GROWING_PERCENT unless the operator set the flag on the command line (Node
 * refuses it in NODE_OPTIONS, so that is the only place it can come from).
 */
export function boundHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  const given = execArgv.some((arg) => /heap[-_]growing[-_]percent/.test(arg));
  if (given) return false;
  // V8 reads this flag each time it sizes the heap after a full collection, so setting it at
  // start-up (before any job) applies to the whole process
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return true;
}
