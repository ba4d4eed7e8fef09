/**
 * Appends every value to `target` in place, one at a time. `target.push(...values)` passes each
 * value as an argument on the stack and throws `Maximum call stack size exceeded` past roughly
 * 100k of them: one 1.3 MB message holds ~150k identifiers or error lines.
 */
export function pushAll<T>(target: T[], values: Iterable<T>): T[] {
  for (const value of values) target.push(value);
  return target;
}
