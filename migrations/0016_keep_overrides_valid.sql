-- Migration 0016 (hand-written): data only. The policy defaults became triggerRatio 0.7,
-- warnRatio 0.6 and targetRatio 0.1 (docs/compaction.md, "Automatic compaction"). A stored
-- override that set warnRatio above 0.7, or targetRatio at 0.7 or above, without a triggerRatio
-- was valid against the old default trigger (0.8) and would now fail the policy's checks on
-- every append: it gets the trigger it was written against, so it keeps behaving as before.
-- A conversation's override is pinned only when its tenant's does not set the trigger.
UPDATE "tenants" SET "policy" = "policy" || '{"triggerRatio": 0.8}'::jsonb
 WHERE NOT ("policy" ? 'triggerRatio')
   AND ((jsonb_typeof("policy" -> 'warnRatio') = 'number' AND ("policy" ->> 'warnRatio')::numeric > 0.7)
     OR (jsonb_typeof("policy" -> 'targetRatio') = 'number' AND ("policy" ->> 'targetRatio')::numeric >= 0.7));--> statement-breakpoint
UPDATE "conversations" c SET "policy" = c."policy" || '{"triggerRatio": 0.8}'::jsonb
  FROM "tenants" t
 WHERE t."id" = c."tenant_id"
   AND NOT (c."policy" ? 'triggerRatio')
   AND NOT (t."policy" ? 'triggerRatio')
   AND ((jsonb_typeof(c."policy" -> 'warnRatio') = 'number' AND (c."policy" ->> 'warnRatio')::numeric > 0.7)
     OR (jsonb_typeof(c."policy" -> 'targetRatio') = 'number' AND (c."policy" ->> 'targetRatio')::numeric >= 0.7));
