/** Reading tool inputs, which arrive as untyped JSON. */

export function stringField(input: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = input[name];
    if (typeof value === 'string' && value.trim().length > 0) return value;
  }
  return undefined;
}

export function charCount(value: unknown): number {
  return typeof value === 'string' ? value.length : 0;
}

/** `120 → 180 chars`: what an edit replaced and with how much. */
export function sizeGist(oldText: unknown, newText: unknown): string {
  return `${charCount(oldText)} → ${charCount(newText)} chars`;
}
