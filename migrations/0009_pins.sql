-- Pins (SPEC §5.6a): a pinned message is never archived and stays verbatim in the context.
-- Only the active history carries the flag; the planner protects the unit holding it and
-- finalize refuses to archive a message pinned after its plan was made.
ALTER TABLE "messages" ADD COLUMN "pinned" boolean DEFAULT false NOT NULL;
