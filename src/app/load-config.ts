import { type Config, ConfigError, loadConfig } from '../config/env.js';

/** Reads process.env once; on a bad value prints `VARIABLE: message` lines and exits 1. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`compactd: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
