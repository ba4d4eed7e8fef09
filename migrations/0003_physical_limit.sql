-- Migration 0003 (hand-written): the closing UPDATE, which sends the jobs planned before it back to
-- the plan step. The rest is drizzle-kit's: a compaction's chunks become rows of
-- compaction_chunks (chunk_results goes), a job keeps its policy (cancel_requested goes), a batch
-- its identifiers, and a conversation has at most one active consolidation beside its one active
-- compaction.
CREATE TABLE "compaction_chunks" (
	"job_id" uuid NOT NULL,
	"idx" integer NOT NULL,
	"seqs" bigint[] NOT NULL,
	"level" integer DEFAULT 0 NOT NULL,
	"absorbed_batch_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL,
	"source_tokens" integer NOT NULL,
	"message_tokens" integer DEFAULT 0 NOT NULL,
	"output_budget" integer NOT NULL,
	"truncated_for_prompt" boolean DEFAULT false NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"draft" text,
	"draft_usage" jsonb,
	"summary" text,
	"provider" text,
	"model" text,
	"usage" jsonb,
	"calls" integer DEFAULT 0 NOT NULL,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"latency_ms" integer DEFAULT 0 NOT NULL,
	"identifiers" text[] DEFAULT '{}'::text[] NOT NULL,
	"identifiers_found" integer DEFAULT 0 NOT NULL,
	"fallback" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "compaction_chunks_job_id_idx_pk" PRIMARY KEY("job_id","idx")
);
--> statement-breakpoint
DROP TABLE "chunk_results" CASCADE;--> statement-breakpoint
DROP INDEX "compaction_jobs_one_active_uq";--> statement-breakpoint
ALTER TABLE "batches" ADD COLUMN "identifiers" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "compaction_jobs" ADD COLUMN "policy" jsonb;--> statement-breakpoint
ALTER TABLE "compaction_chunks" ADD CONSTRAINT "compaction_chunks_job_id_compaction_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."compaction_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "compaction_jobs_one_consolidation_uq" ON "compaction_jobs" USING btree ("conversation_id") WHERE status in ('queued','planning','summarizing','resummarizing','committing') and trigger = 'consolidate';--> statement-breakpoint
CREATE UNIQUE INDEX "compaction_jobs_one_active_uq" ON "compaction_jobs" USING btree ("conversation_id") WHERE status in ('queued','planning','summarizing','resummarizing','committing') and trigger <> 'consolidate';--> statement-breakpoint
ALTER TABLE "compaction_jobs" DROP COLUMN "cancel_requested";--> statement-breakpoint
-- Jobs planned before this migration kept their chunks in the plan jsonb and their results in
-- chunk_results: nothing of theirs was committed, so they start over from the plan step.
UPDATE "compaction_jobs" SET "status" = 'queued', "plan" = NULL, "progress" = '{"chunksDone":0,"chunksTotal":0}'::jsonb
 WHERE "status" in ('planning','summarizing','resummarizing','committing');
