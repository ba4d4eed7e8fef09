/** Continuation probes of the eval: derived from the raw span with the eval's own reading, scored on a context's text. */
export { deriveProbes, PROBE_KINDS, type Probe, type ProbeKind, type SpanContext } from './derive.js';
export { isAnswered, prepareContext, scoreProbes, type MissedProbe, type ProbeScore } from './answer.js';
export type { ProbeMessage } from './steps.js';
