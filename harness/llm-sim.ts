import { type LlmSim, type LlmSimOptions, startLlmSim } from '../src/llm-sim/server.js';

/**
 * An in-process llm-sim on 127.0.0.1, port 0, for tests. `url` is the Anthropic base URL;
 * OpenAI clients take `openaiBaseUrl` (`${url}/v1`). `control` changes faults and profile
 * and reads the call log; `close` ends hanging calls too.
 */
export interface TestLlmSim {
  url: string;
  openaiBaseUrl: string;
  control: LlmSim;
  close(): Promise<void>;
}

export async function startTestLlmSim(options: Omit<LlmSimOptions, 'host' | 'port'> = {}): Promise<TestLlmSim> {
  const control = await startLlmSim({ ...options, host: '127.0.0.1', port: 0 });
  return { url: control.url, openaiBaseUrl: `${control.url}/v1`, control, close: () => control.close() };
}
