/** Exhaustiveness guard for switches over tagged unions. */
export function assertNever(value: never, message = 'unexpected value'): never {
  throw new Error(`${message}: ${JSON.stringify(value)}`);
}
