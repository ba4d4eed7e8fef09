import { CompactdError } from './errors.js';

/**
 * Splits a streamed body into lines and parses each as JSON, yielding as bytes arrive, so
 * an export of 100k messages never sits in memory at once. A final line without a newline
 * still counts; blank lines are skipped.
 */
export async function* readJsonLines<T>(body: ReadableStream<Uint8Array>): AsyncGenerator<T> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffered = '';
  let lineNumber = 0;
  const parse = (line: string): T => {
    lineNumber += 1;
    try {
      return JSON.parse(line) as T;
    } catch (error) {
      throw new CompactdError({
        status: 200,
        code: 'INVALID_RESPONSE',
        title: 'Invalid response',
        detail: `line ${lineNumber} is not JSON: ${line.slice(0, 120)}`,
        cause: error,
      });
    }
  };
  try {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        throw new CompactdError({
          status: 200,
          code: 'CONNECTION_FAILED',
          title: 'Connection failed',
          detail: `the stream broke after ${lineNumber} lines`,
          cause: error,
        });
      }
      const { done, value } = chunk;
      buffered += done ? decoder.decode() : decoder.decode(value, { stream: true });
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line !== '') yield parse(line);
        newline = buffered.indexOf('\n');
      }
      if (done) break;
    }
    if (buffered.trim() !== '') yield parse(buffered.trim());
  } finally {
    // Leaving the loop early (break, throw) must not leave the connection open.
    await reader.cancel().catch(() => {});
  }
}
