import { LedgerAccumulator } from './accumulate.js';
import type { Ledger } from './schema.js';

/**
 * Two ledgers as one, exactly (never by an LLM): files, commands, errors and sentences united
 * by key, counts added, the latest event winning; an error still open in one is resolved when
 * the other holds a later success of its command, or of its tool on its target; the newest
 * todo list. Associative, and extractLedger(a ++ b) equals mergeLedgers(extractLedger(a),
 * extractLedger(b)) when the split falls between tool exchanges.
 */
export function mergeLedgers(older: Ledger, newer: Ledger): Ledger {
  return new LedgerAccumulator().addLedger(older).addLedger(newer).ledger();
}

/** Many ledgers, oldest first, as one. */
export function mergeAllLedgers(ledgers: readonly Ledger[]): Ledger {
  const acc = new LedgerAccumulator();
  for (const ledger of ledgers) acc.addLedger(ledger);
  return acc.ledger();
}
