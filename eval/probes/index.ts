/** Continuation probes of the eval: derived from the raw span with the eval's own reading, scored on a context's text. */
export { isAnswered, type MissedProbe, prepareContext, type ProbeScore, scoreProbes } from './answer.js';
export { deriveProbes, type Probe, PROBE_KINDS, type ProbeKind, type SpanContext } from './derive.js';
export type { ProbeMessage } from './steps.js';
