/** STYLE.md §2: the pure core imports nothing with I/O; shells never import each other; no cycles. */
const IO_MODULES = '^(node:|fs$|net$|http$|https$|child_process$|drizzle-orm|postgres$|bullmq|ioredis|pino|@anthropic-ai|openai$|fastify|@fastify|@bull-board|prom-client|gpt-tokenizer|smol-toml)';

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'core-is-pure',
      comment: 'src/compaction may import only itself, src/lib (no I/O), src/config/policy.ts and zod',
      severity: 'error',
      from: { path: '^src/compaction/' },
      to: { pathNot: ['^src/compaction/', '^src/lib/(errors|result|assert-never)\\.ts$', '^src/config/policy\\.ts$', 'node_modules/zod/'] },
    },
    {
      name: 'core-no-io-builtins',
      severity: 'error',
      from: { path: '^src/(compaction|config|lib)/', pathNot: '^src/lib/count-tokens\\.ts$' },
      to: { dependencyTypes: ['core'] },
    },
    {
      // the tokenizer's wrapper loads the tokenizer on its first count (node:module's
      // createRequire), so a process that never counts does not hold its 66 MB table
      name: 'core-no-io-builtins-but-lazy-tokenizer',
      severity: 'error',
      from: { path: '^src/lib/count-tokens\\.ts$' },
      to: { dependencyTypes: ['core'], pathNot: '^module$' },
    },
    {
      name: 'pure-config-and-lib',
      severity: 'error',
      from: { path: '^src/(config|lib)/', pathNot: '^src/lib/count-tokens\\.ts$' },
      to: { path: IO_MODULES, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'adapters-not-shells',
      severity: 'error',
      from: { path: '^src/(db|queue|llm|importers)/' },
      to: { path: '^src/(api|worker|app)/' },
    },
    { name: 'api-not-worker', severity: 'error', from: { path: '^src/api/' }, to: { path: '^src/(worker|app)/' } },
    { name: 'worker-not-api', severity: 'error', from: { path: '^src/worker/' }, to: { path: '^src/(api|app)/' } },
    {
      name: 'client-standalone',
      comment: 'src/client ships as compactd/client: besides itself it may use only the API schemas, the core data types and the compaction options schema, and those type-only',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { pathNot: ['^src/client/', '^src/api/schemas/', '^src/compaction/types\\.ts$', '^src/queue/job-options\\.ts$', 'node_modules/zod/'] },
    },
    {
      name: 'client-types-only',
      comment: 'at run time the client loads no server code, no zod and no node: builtins (only fetch), so it stays light and portable',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: ['^src/(api|compaction|queue)/', 'node_modules/zod/'], dependencyTypesNot: ['type-only'] },
    },
    { name: 'client-no-builtins', severity: 'error', from: { path: '^src/client/' }, to: { dependencyTypes: ['core'] } },
    {
      name: 'adapters-through-client',
      comment: 'compactd/langchain and compactd/ai-sdk ship beside compactd/client: they reach the service only through the typed client, never server code, and load only their own framework',
      severity: 'error',
      from: { path: '^src/adapters/' },
      to: { pathNot: ['^src/adapters/', '^src/client/', 'node_modules/(langchain|@langchain/core|ai)/'] },
    },
    { name: 'adapters-no-builtins', severity: 'error', from: { path: '^src/adapters/' }, to: { dependencyTypes: ['core'] } },
    { name: 'client-not-adapters', severity: 'error', from: { path: '^src/client/' }, to: { path: '^src/adapters/' } },
    {
      name: 'server-not-client',
      comment: 'the service never goes through its own HTTP client or the framework adapters; only the CLI (app/**) uses the client',
      severity: 'error',
      from: { path: '^src/(api|worker|db|queue|llm|compaction|config|lib|importers|obs|llm-sim)/' },
      to: { path: '^src/(client|adapters)/' },
    },
    {
      name: 'composition-root-only',
      comment: 'only app/** and main.ts wire processes together',
      severity: 'error',
      from: { pathNot: '^src/(app/|main\\.ts)' },
      to: { path: '^src/app/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js', '.mjs', '.json'] },
  },
};
