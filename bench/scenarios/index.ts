import type { BenchContext } from '../lib/context.js';
import type { ScenarioResult } from '../lib/result.js';
import { GATEWAY_TITLE, runGateway } from './gateway.js';
import { runIngest } from './ingest.js';
import { INSPECTOR_TITLE, runInspector } from './inspector.js';
import { runLatency } from './latency.js';
import { NATIVE_GATEWAY_TITLE, runNativeGateway } from './native-gateway.js';
import { runOverhead } from './overhead.js';
import { PEERS_TITLE } from './peers-report.js';
import { runScale } from './scale.js';
import { runScaleOut, SCALE_OUT_TITLE } from './scale-out.js';
import { runSessionCost, SESSION_COST_TITLE } from './session-cost/index.js';
import { runThroughput } from './throughput.js';
import { runTokens } from './tokens.js';

/** Every scenario in report order; `ids` name the results one run produces. */
export interface Scenario {
  ids: string[];
  titles: string[];
  run(ctx: BenchContext): Promise<ScenarioResult[]>;
}

export const SCENARIOS: Scenario[] = [
  { ids: ['latency', 'peers'], titles: ['1. Latency vs the LLM critical path', PEERS_TITLE], run: runLatency },
  { ids: ['overhead'], titles: ['3. Overhead: non-LLM time per compaction'], run: runOverhead },
  { ids: ['throughput'], titles: ['4. Throughput: compactions per second, one worker process'], run: runThroughput },
  { ids: ['ingest'], titles: ['5. Ingest: messages per second through the append API'], run: runIngest },
  { ids: ['scale'], titles: ['6. Scale: job time vs conversation size, worker peak RSS'], run: runScale },
  { ids: ['tokens'], titles: ['7. Token economy over repeated compactions'], run: runTokens },
  { ids: ['scale-out'], titles: [SCALE_OUT_TITLE], run: runScaleOut },
  { ids: ['gateway'], titles: [GATEWAY_TITLE], run: runGateway },
  { ids: ['inspector'], titles: [INSPECTOR_TITLE], run: runInspector },
  { ids: ['session-cost'], titles: [SESSION_COST_TITLE], run: runSessionCost },
  { ids: ['native-gateway'], titles: [NATIVE_GATEWAY_TITLE], run: runNativeGateway },
];
