import { main, USAGE } from './cli.js';

// `npm run eval`: the CLI's only side effects beyond its files are stderr lines and the exit code.
main(process.argv.slice(2), process.env, (line) => process.stderr.write(`${line}\n`)).then(
  () => process.exit(0),
  (error: unknown) => {
    const code = (error as { code?: unknown }).code;
    // a bad option is the caller's mistake: say which, show the usage, no stack
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(error as Error).message}\n\n${USAGE}`);
      process.exit(2);
    }
    process.stderr.write(`eval failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
