import { parseArgs } from 'node:util';
import { parseFaultRates, type SimFaults } from '../llm-sim/faults.js';
import { PROFILE_NAMES } from '../llm-sim/profiles.js';
import { startLlmSim, type LlmSimOptions } from '../llm-sim/server.js';

/** `compactd llm-sim`: runs the simulator until SIGTERM/SIGINT, then closes gracefully. */

const USAGE = `usage: compactd llm-sim [options]

Loopback server speaking the Anthropic Messages API and OpenAI Chat Completions
(streaming and not) for tests, the bench and the demo.

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
  --grace-ms N              on SIGTERM, let calls in flight finish for up to N ms (default 5000)

Point the adapters at it:
  ANTHROPIC_BASE_URL=http://HOST:PORT   OPENAI_BASE_URL=http://HOST:PORT/v1
Control: GET /_sim/calls, GET|POST /_sim/config, POST /_sim/reset.
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
    options.overrun = { ...(overrunRate === undefined ? {} : { rate: overrunRate }), ...(overrunFactor === undefined ? {} : { factor: overrunFactor }) };
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
