/** STYLE.md §2: the pure core imports nothing with I/O; shells never import each other; no cycles. */
const IO_MODULES =
  '^(node:|fs$|net$|http$|https$|child_process$|drizzle-orm|postgres$|bullmq|ioredis|pino|@anthropic-ai|openai$|fastify|@fastify|@bull-board|prom-client|gpt-tokenizer|smol-toml)';

/**
 * The stage folders of src/compaction/ in pipeline order (SPEC §2.1): a folder imports only
 * the folders before it and the shared files at the root of src/compaction/, and another folder
 * only through its index.ts. The root files import no folder, except the ledger's types.
 */
const CORE_ROOMS = ['trigger', 'ledger', 'context', 'plan', 'summarize', 'local', 'consolidate', 'recall'];

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    {
      name: 'core-is-pure',
      comment: 'src/compaction may import only itself, src/lib (no I/O), src/config/policy.ts, zod and node:crypto (hashing)',
      severity: 'error',
      from: { path: '^src/compaction/' },
      to: {
        pathNot: [
          '^src/compaction/',
          '^src/lib/(errors|result|assert-never)\\.ts$',
          '^src/config/policy\\.ts$',
          'node_modules/zod/',
          '^(node:)?crypto$',
        ],
      },
    },
    {
      name: 'core-no-io-builtins',
      comment: 'no Node built-in but crypto, whose hashes are computation, not I/O (compaction/images.ts names an image by its SHA-256)',
      severity: 'error',
      from: { path: '^src/(compaction|config|lib)/', pathNot: '^src/lib/(count-tokens|o200k-ranks)\\.ts$' },
      to: { dependencyTypes: ['core'], pathNot: '^(node:)?crypto$' },
    },
    {
      // the tokenizer's wrapper loads the tokenizer on its first count, so a process that never
      // counts does not hold its table: the loader reads gpt-tokenizer's data file (node:module
      // finds it, node:fs reads it, node:buffer decodes it) and nothing else
      name: 'core-no-io-builtins-but-lazy-tokenizer',
      severity: 'error',
      from: { path: '^src/lib/(count-tokens|o200k-ranks)\\.ts$' },
      to: { dependencyTypes: ['core'], pathNot: '^(module|fs|buffer)$' },
    },
    {
      name: 'pure-config-and-lib',
      severity: 'error',
      from: { path: '^src/(config|lib)/', pathNot: '^src/lib/(count-tokens|o200k-ranks)\\.ts$' },
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
      comment:
        'src/client ships as compactd/client: besides itself it may use only the API schemas, the core data types and the compaction options schema, and those type-only',
      severity: 'error',
      from: { path: '^src/client/' },
      to: {
        pathNot: ['^src/client/', '^src/api/schemas/', '^src/compaction/types\\.ts$', '^src/queue/job-options\\.ts$', 'node_modules/zod/'],
      },
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
      name: 'integrations-through-client',
      comment:
        'compactd/langchain and compactd/ai-sdk ship beside compactd/client: they reach the service only through the typed client, never server code, and load only their own framework',
      severity: 'error',
      from: { path: '^src/integrations/' },
      to: { pathNot: ['^src/integrations/', '^src/client/', 'node_modules/(langchain|@langchain/core|ai)/'] },
    },
    { name: 'integrations-no-builtins', severity: 'error', from: { path: '^src/integrations/' }, to: { dependencyTypes: ['core'] } },
    { name: 'client-not-integrations', severity: 'error', from: { path: '^src/client/' }, to: { path: '^src/integrations/' } },
    {
      name: 'server-not-client',
      comment: 'the service never goes through its own HTTP client or the framework integrations; only the CLI (app/**) uses the client',
      severity: 'error',
      from: { path: '^src/(api|worker|db|queue|llm|compaction|config|lib|importers|obs|llm-sim)/' },
      to: { path: '^src/(client|integrations)/' },
    },
    {
      name: 'sql-only-in-db',
      comment:
        'SQL lives in src/db: nothing else imports drizzle-orm or the postgres driver, not even as types (db/client.ts names the types callers need)',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/db/' },
      to: { path: '(^|/)node_modules/(drizzle-orm|postgres)/' },
    },
    ...CORE_ROOMS.slice(0, -1).map((room, i) => ({
      name: 'core-rooms-in-order',
      comment: `src/compaction/${room}/ imports no stage after it: ${CORE_ROOMS.slice(i + 1).join(', ')}`,
      severity: 'error',
      from: { path: `^src/compaction/${room}/` },
      to: { path: `^src/compaction/(${CORE_ROOMS.slice(i + 1).join('|')})/` },
    })),
    {
      name: 'core-shared-below-rooms',
      comment: "the shared files at the root of src/compaction/ import no stage folder, except the ledger's types",
      severity: 'error',
      from: { path: '^src/compaction/[^/]+$' },
      to: { path: '^src/compaction/[^/]+/', pathNot: '^src/compaction/ledger/' },
    },
    {
      name: 'core-shared-below-rooms',
      severity: 'error',
      from: { path: '^src/compaction/[^/]+$' },
      to: { path: '^src/compaction/ledger/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'core-rooms-through-index',
      comment: 'code outside a stage folder of src/compaction/ imports it through its index.ts',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/compaction/[^/]+/' },
      to: { path: '^src/compaction/[^/]+/(?!index\\.ts$)' },
    },
    {
      name: 'core-rooms-through-index',
      severity: 'error',
      from: { path: '^src/compaction/([^/]+)/' },
      to: { path: '^src/compaction/[^/]+/(?!index\\.ts$)', pathNot: '^src/compaction/$1/' },
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
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js', '.mjs', '.json'],
    },
  },
};
