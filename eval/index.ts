import { main } from './cli.js';

// `npm run eval`: the CLI's only side effects beyond its files are stderr lines and the exit code.
main(process.argv.slice(2), process.env, (line) => process.stderr.write(`${line}\n`)).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`eval failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
