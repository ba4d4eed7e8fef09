-- Migration 0015: strategy native keeps the provider's compaction item on its chunk until the
-- commit puts it on the clip-archive message (SPEC §5.10).
ALTER TABLE "compaction_chunks" ADD COLUMN "provider_item" jsonb;
