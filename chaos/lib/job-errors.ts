/**
 * What a job's error may say (SPEC §8): a stable code and a short message, never how the
 * database is built. The suites collect the error of every job that failed, as the API
 * shows it, and check it for SQL text, bind parameters and stack frames.
 */

export interface FailedJob {
  scenario: string;
  jobId: string;
  status: string;
  error: { code?: unknown; message?: unknown } | null;
}

/** A table as SQL names it (quoted, snake_case, or followed by a one-letter alias or `where`), not a word of prose. */
const TABLE = String.raw`("\w+"|\w+_\w+|\w+\s+[a-z](?:\s|$)|\w+\s+where\b)`;

const INTERNALS: ReadonlyArray<[string, RegExp]> = [
  [
    'SQL statement',
    new RegExp(
      String.raw`\b(select\b[\s\S]{0,400}?\bfrom|insert\s+into|delete\s+from)\s+${TABLE}|\bupdate\s+("\w+"|\w+)(\s+[a-z])?\s+set\s+"?\w+"?\s*=`,
      'i',
    ),
  ],
  ['failed query', /\bfailed query\b/i],
  ['bind parameter', /\$\d+\b/],
  ['parameters', /\bparams?\s*:/i],
  ['stack frame', /^\s*at\s+\S.*(\(|\s)(file:|node:|\/)\S*:\d+:\d+\)?\s*$/m],
  ['Postgres error field', /\b(sqlstate|severity_local|constraint_name)\b/i],
];

/** The first internal detail the text shows (its kind), or null. */
export function internalsShown(text: string): string | null {
  for (const [kind, pattern] of INTERNALS) if (pattern.test(text)) return kind;
  return null;
}

/** The job's error as text: its code and message, and any other field the API added. */
export function errorText(job: FailedJob): string {
  return job.error === null ? '' : JSON.stringify(job.error);
}

/** GET /v1/jobs/:id for each job; those whose status is `failed` (or that carry an error). */
export async function collectFailedJobs(baseUrl: string, key: string, scenario: string, jobIds: readonly string[]): Promise<FailedJob[]> {
  const out: FailedJob[] = [];
  for (const jobId of jobIds) {
    try {
      const res = await fetch(`${baseUrl}/v1/jobs/${jobId}`, {
        headers: { authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(10_000),
      });
      if (res.status !== 200) continue;
      const job = (await res.json()) as { status: string; error: FailedJob['error'] };
      if (job.status === 'failed' || job.error) out.push({ scenario, jobId, status: job.status, error: job.error });
    } catch {
      // an API that cannot answer is a figure of the scenario that broke it, not of this check
    }
  }
  return out;
}
