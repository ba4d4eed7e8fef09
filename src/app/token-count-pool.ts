import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

import type { CountReply, CountRequest } from './token-count-worker.js';

/**
 * Token counting off the event loop. The tokenizer's BPE costs up to ~2 µs per byte on
 * token-dense text (one long line, random CJK, base64): a 2 MB message is ~4 s of CPU, which
 * inline would stall every other request of the API process for that long. A few threads count
 * big texts while the loop keeps serving; the append awaits its counts.
 *
 * Threads start on the first count, so a process that never counts big texts (the worker) never
 * starts one. A thread that dies fails its texts (the caller falls back to counting inline) and
 * is replaced on the next count.
 */
export interface TokenCountPool {
  count(text: string): Promise<number>;
  /** threads at most */
  readonly size: number;
  close(): Promise<void>;
}

interface Task {
  id: number;
  text: string;
  resolve(tokens: number): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  /** the batch the thread is counting; empty when idle */
  tasks: Task[];
}

/**
 * Characters of text sent to a thread in one message at most (the first text always goes):
 * queued texts travel together, one round trip for many, while a batch of the densest text
 * stays well under a second of a thread's CPU, so the work still spreads over the threads.
 */
const BATCH_CHARS = 256 * 1024;

/** One thread by default on a machine of two cores, so the API's own loop keeps a core. */
export const defaultPoolSize = (): number => Math.max(1, Math.min(4, availableParallelism() - 1));

/**
 * The compiled worker (dist/…js); run from the TypeScript sources (the test suite), its .ts twin
 * loaded through tsx's loader, which a thread does not inherit from its parent.
 */
function startWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./token-count-worker.js', import.meta.url));
  const source = new URL('./token-count-worker.ts', import.meta.url).href;
  return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`, { eval: true });
}

export function createTokenCountPool(size = defaultPoolSize()): TokenCountPool {
  const slots: Slot[] = [];
  const queue: Task[] = [];
  let nextId = 1;
  let closed = false;

  function spawn(): Slot {
    const slot: Slot = { worker: startWorker(), tasks: [] };
    // an idle pool never keeps the process alive; a pending count is awaited by a live request
    slot.worker.unref();
    slot.worker.on('message', (replies: CountReply[]) => {
      const byId = new Map(replies.map((reply) => [reply.id, reply]));
      for (const task of slot.tasks.splice(0)) {
        const reply = byId.get(task.id);
        if (reply?.tokens !== undefined) task.resolve(reply.tokens);
        else task.reject(new Error(`token count failed: ${reply?.error ?? 'no answer for the text'}`));
      }
      dispatch();
    });
    const fail = (error: Error) => {
      const index = slots.indexOf(slot);
      if (index >= 0) slots.splice(index, 1);
      for (const task of slot.tasks.splice(0)) task.reject(error);
      if (!closed) dispatch();
    };
    slot.worker.on('error', fail);
    slot.worker.on('exit', (code) => fail(new Error(`token count thread exited with code ${code}`)));
    slots.push(slot);
    return slot;
  }

  let queuedChars = 0;
  const busyCount = () => slots.filter((slot) => slot.tasks.length > 0).length;

  function dispatch(): void {
    while (queue.length > 0) {
      const idle = slots.find((slot) => slot.tasks.length === 0) ?? (slots.length < size ? spawn() : undefined);
      if (!idle) return;
      // an equal share of what is queued for each thread that may take some, within BATCH_CHARS
      const share = Math.min(BATCH_CHARS, Math.ceil(queuedChars / Math.max(1, size - busyCount())));
      let chars = 0;
      while (queue.length > 0 && (idle.tasks.length === 0 || chars + queue[0]!.text.length <= share)) {
        const task = queue.shift()!;
        chars += task.text.length;
        queuedChars -= task.text.length;
        idle.tasks.push(task);
      }
      idle.worker.postMessage(idle.tasks.map((task): CountRequest => ({ id: task.id, text: task.text })));
    }
  }

  return {
    size,
    count(text) {
      if (closed) return Promise.reject(new Error('token count pool is closed'));
      return new Promise<number>((resolve, reject) => {
        queue.push({ id: nextId++, text, resolve, reject });
        queuedChars += text.length;
        dispatch();
      });
    },
    async close() {
      closed = true;
      for (const task of queue.splice(0)) task.reject(new Error('token count pool is closed'));
      queuedChars = 0;
      await Promise.all(slots.splice(0).map((slot) => slot.worker.terminate()));
    },
  };
}
