import { parseArgs } from 'node:util';

import { parseFaultRates, type SimFaults } from '../../llm-sim/faults.js';
import { PROFILE_NAMES } from '../../llm-sim/profiles.js';
import { type LlmSimOptions, startLlmSim } from '../../llm-sim/server.js';

/** `compactd llm-sim`: runs the simulator until SIGTERM/SIGINT, then closes gracefully. */

const USAGE = `usage: compactd llm-sim [options]

Loopback server speaking the Anthropic Messages API, OpenAI Chat Completions and the
OpenAI Responses API (streaming and not) for tests, the bench and the demo.

  --host HOST               listen address (default 127.0.0.1)
  --port N                  listen port (default 8090; 0 = any free port)
  --profile NAME            latency: ${PROFILE_NAMES.join(', ')} (default instant)
  --faults LIST             fault probabilities, e.g. 429=0.1,529=0.05,500=0.02,hang=0.01,
                            empty=0.01,truncated=0.01,malformed=0.01,auth=0
  --retry-after-ms N        wait a 429 asks for (default 1000)
  --seed N                  PRNG seed for faults and identifier loss (default 1)
  --loss-rate R             fraction of input identifiers the summary drops (default 0)
  --summarize-window N      inputs above N tokens get the provider's context-length 400
  --output-ratio R          summary length as a fraction of input tokens (default 0.08),
                            never above the length the request's directive asks for
  --overrun R               share of answers that run past that length, as real models
                            do (default 0); one past max_tokens stops there with
                            stop_reason max_tokens / finish_reason length
  --overrun-factor F        how far an overrunning answer runs: F × its length (default 1.5)
  --cache-ttl-ms N          prompt-cache TTL, refreshed by each hit (default 300000)
  --no-prompt-cache         no prompt caching: every call is billed as uncached input
  --grace-ms N              on SIGTERM, let calls in flight finish for up to N ms (default 5000)

Prompt caching, per API key and model, as the providers price it:
  Anthropic  cache_control {type: "ephemeral", ttl?: "5m"|"1h"} on tools, system or message
             blocks (at most 4; top-level cache_control marks the last block). The prefix
             up to a breakpoint (tools, system, messages) is written when it is at least the
             model's minimum (2,048 tokens for Haiku, 1,024 for Sonnet/Opus):
             cache_creation_input_tokens; a later request with that prefix, at its
             breakpoint or up to 20 blocks before one, reads it: cache_read_input_tokens.
             input_tokens is the rest. An entry is readable once the response writing it
             has begun: parallel requests sent together all write.
  OpenAI     automatic from 1,024 tokens: the longest cached prefix (message boundaries)
             in 128-token steps, usage.prompt_tokens_details.cached_tokens (Responses:
             input_tokens_details.cached_tokens), counted inside prompt_tokens/input_tokens.
Provider compactions (summaries by the sim's summary generator):
  Anthropic on-demand, beta header anthropic-beta: compact-2026-09-04: top-level
    "compaction": {"type": "summarize", "instructions"?} answers one block
    {"type": "compaction", "content", "signature"}, stop_reason "compaction", cost in
    usage.iterations [{"type": "compaction", input_tokens, output_tokens,
    cache_read_input_tokens, cache_creation_input_tokens}]. The block must open
    messages, byte-exact, once, with the beta header, else 400 invalid_request_error
    "compaction_signature_invalid: …" / "compaction_content_mismatch: …" /
    "compaction_block_misplaced: …"; refused with context_management and after an
    unanswered tool call. Streamed: content_block_start {type: compaction, content: null,
    signature}, one compaction_delta {content}, message_delta stop_reason compaction.
  Anthropic threshold: context_management.edits [{"type": "compact_20260112",
    "trigger"?: {"type": "input_tokens", "value": N (default 150000)},
    "pause_after_compaction"?}]: over the trigger the answer opens with
    {"type": "compaction", "content", "encrypted_content"}; a request carrying it at the
    head of an assistant turn counts from it on.
  OpenAI: POST /v1/responses/compact returns the input's user messages then
    {"type": "compaction", "encrypted_content"}; a {"type": "compaction_trigger"} last
    input item on POST /v1/responses answers the same inside a normal response. A
    compaction item the sim did not issue: 400 code invalid_encrypted_content.

Point the adapters at it:
  ANTHROPIC_BASE_URL=http://HOST:PORT   OPENAI_BASE_URL=http://HOST:PORT/v1
Control: GET /_sim/calls (each call's usage {input, cacheRead, cacheWrite, output} and
compaction kind), GET|POST /_sim/config (cache: {enabled, ttlMs}, clockOffsetMs, …),
POST /_sim/reset, GET|POST /_sim/clock {advanceMs} (the clock cache TTLs follow),
GET /_sim/cache, POST /_sim/cache/clear.
`;

function number(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new Error(`--${name} must be a number, got "${value}"`);
  return parsed;
}

/** Parses `compactd llm-sim` arguments; throws with a message naming the bad option. */
export function parseLlmSimArgs(argv: string[]): (LlmSimOptions & { graceMs: number }) | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      profile: { type: 'string' },
      faults: { type: 'string' },
      'retry-after-ms': { type: 'string' },
      seed: { type: 'string' },
      'loss-rate': { type: 'string' },
      'summarize-window': { type: 'string' },
      'output-ratio': { type: 'string' },
      overrun: { type: 'string' },
      'overrun-factor': { type: 'string' },
      'cache-ttl-ms': { type: 'string' },
      'no-prompt-cache': { type: 'boolean' },
      'grace-ms': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return 'help';
  const faults: SimFaults = {};
  if (values.faults !== undefined) faults.rates = parseFaultRates(values.faults);
  const retryAfterMs = number('retry-after-ms', values['retry-after-ms']);
  if (retryAfterMs !== undefined) faults.retryAfterMs = retryAfterMs;
  const options: LlmSimOptions & { graceMs: number } = {
    host: values.host ?? '127.0.0.1',
    port: number('port', values.port) ?? 8090,
    faults,
    graceMs: number('grace-ms', values['grace-ms']) ?? 5_000,
  };
  if (values.profile !== undefined) options.profile = values.profile;
  const seed = number('seed', values.seed);
  if (seed !== undefined) options.seed = seed;
  const lossRate = number('loss-rate', values['loss-rate']);
  if (lossRate !== undefined) options.lossRate = lossRate;
  const window = number('summarize-window', values['summarize-window']);
  if (window !== undefined) options.summarizeWindow = window;
  const outputRatio = number('output-ratio', values['output-ratio']);
  if (outputRatio !== undefined) options.outputRatio = outputRatio;
  const overrunRate = number('overrun', values.overrun);
  const overrunFactor = number('overrun-factor', values['overrun-factor']);
  if (overrunRate !== undefined || overrunFactor !== undefined) {
    options.overrun = {
      ...(overrunRate === undefined ? {} : { rate: overrunRate }),
      ...(overrunFactor === undefined ? {} : { factor: overrunFactor }),
    };
  }
  const cacheTtlMs = number('cache-ttl-ms', values['cache-ttl-ms']);
  if (cacheTtlMs !== undefined || values['no-prompt-cache'] === true) {
    options.cache = {
      ...(cacheTtlMs === undefined ? {} : { ttlMs: cacheTtlMs }),
      ...(values['no-prompt-cache'] === true ? { enabled: false } : {}),
    };
  }
  return options;
}

export async function runLlmSim(argv: string[]): Promise<void> {
  const parsed = parseLlmSimArgs(argv);
  if (parsed === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  const { graceMs, ...options } = parsed;
  const sim = await startLlmSim(options);
  process.stdout.write(`llm-sim listening on ${sim.url} (ANTHROPIC_BASE_URL=${sim.url} OPENAI_BASE_URL=${sim.url}/v1)\n`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  // A second signal while draining means "now".
  const force = (): void => process.exit(signal === 'SIGINT' ? 130 : 143);
  process.once('SIGTERM', force);
  process.once('SIGINT', force);
  process.stderr.write(`llm-sim: ${signal}, finishing ${sim.inFlight()} call(s) in flight\n`);
  await sim.close(graceMs);
  process.removeListener('SIGTERM', force);
  process.removeListener('SIGINT', force);
  process.stderr.write('llm-sim: closed\n');
}
