import fc from 'fast-check';
import { describe, it } from 'vitest';

import { planCompaction } from '../../../../src/compaction/plan/plan.js';
import { mergePolicy } from '../../../../src/config/policy.js';
import { countTokens, makeSnapshot } from '../../../fixtures/builders.js';
import { conversationArb, limitFactorArb, policyArb, requestArb } from '../arbitraries.js';
import { checkPlanInvariants } from '../invariants.js';

const holdsInvariants = fc.property(conversationArb, policyArb, requestArb, limitFactorArb, (conversation, override, request, factor) => {
  const policy = mergePolicy(override);
  const total = conversation.messages.reduce((sum, m) => sum + m.tokens, 0);
  const snapshot = makeSnapshot(conversation.messages, Math.max(1000, Math.ceil(total * factor)), conversation.previousSummaries);
  const result = planCompaction(snapshot, policy, request, countTokens);
  checkPlanInvariants(snapshot, policy, request, result, countTokens);
});

/**
 * A case a run found: the selection overshot an explicit target by 1 token, and the doubled
 * reselection steps (1, 2, … 128 tokens) never reached the next unit, so the plan stayed over a
 * target that summarizing every candidate reaches.
 */
const OVERSHOT_BY_ONE_TOKEN = {
  seed: 351919328,
  path: '323:0:0:0:7:6:6:11:13:13:12:12:13:13:20:20:21:21:28:31:33:30:29:39:36:47:43:58:49:50:59:57:58:57:58:57:66:57:57:57:58:57:28:63:5:9:14:15:15:20:15:18:23:38:35:35:47:50:52:50:51:50:50:58:60:59:67:57:57:58:57:58:66:78:77:75:81:81:91:88:89:100:104:104:104:112:112:110:114:125:120:120:124:127:120:122:133:128:129:137:136:144:141:144:152:149:149:170:174:170:179:170:170:170:171:170:170:178:182:178:178:187:196:198:208:204:213:226:219:219:218:218:226:223:223:229:229:240:235:250:240:253:248:260:254:254:254:255:254:254:260:260:260:260:260:268:265:276:269:282:275:287:289:285:288:293:293:293:302:311:303:303:303:308:312:308:308:312:309:309:308:309:316:321:331:324:330:327:334:330:348:348:348:348:348:348:348:348:353:110:112:111:110:110:110:111:110:110:180:110:116:111:111:149:149:149:153:149:149:186:337:110:112:114:151:154:152:339:110:110:110:110:110:113:112:110:110:207:337:110:110:110:114:112:110:110:336:110:110:115:112:336:110:110:110:116:111:110:110:336:110:117:110:110:336:211:213:212:336:336:263:263:263:270:264:339:110:110:110:126:140:163:163:153:57:61:68:70:70:70:70:70:126:125:136:136:137:136:136:136:137:136:148:148:148:148:149:149:148:148:148:149:149:164:169:176:169:242:134:162:162:162:164:163:162:162:162:162:235:140:77:143:141:139:234:234:234:234:234:234:234:234:240:236:235:244:246:244:245:245:245:244:247:248:248:252:264',
};

describe('planCompaction properties', () => {
  it('holds every invariant on generated conversations, policies and requests', () => {
    fc.assert(holdsInvariants, { numRuns: 400 });
  });

  it('reaches a target that an overshoot of one token once kept it from', () => {
    fc.assert(holdsInvariants, { ...OVERSHOT_BY_ONE_TOKEN, endOnFailure: true });
  });

  it('is deterministic: the same snapshot gives the same plan', () => {
    fc.assert(
      fc.property(conversationArb, policyArb, requestArb, (conversation, override, request) => {
        const policy = mergePolicy(override);
        const snapshot = makeSnapshot(conversation.messages, 20_000, conversation.previousSummaries);
        const first = JSON.stringify(planCompaction(snapshot, policy, request, countTokens));
        const second = JSON.stringify(planCompaction(structuredClone(snapshot), policy, request, countTokens));
        return first === second;
      }),
      { numRuns: 100 },
    );
  });
});
