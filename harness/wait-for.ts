/**
 * Polls `predicate` until it holds (no fixed sleeps in tests); throws after `timeoutMs`, naming
 * `what`. A predicate that throws counts as not yet (a server still starting refuses connections).
 */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  intervalMs = 25,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (
    !(await Promise.resolve()
      .then(predicate)
      .catch(() => false))
  ) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
