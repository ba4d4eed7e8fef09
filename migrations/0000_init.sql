CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"prefix" text NOT NULL,
	"hash" text NOT NULL,
	"name" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_hash_unique" UNIQUE("hash")
);
--> statement-breakpoint
CREATE TABLE "archived_messages" (
	"archive_id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"id" uuid NOT NULL,
	"conversation_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"role" text NOT NULL,
	"kind" text DEFAULT 'message' NOT NULL,
	"content" jsonb NOT NULL,
	"name" text,
	"tokens" integer NOT NULL,
	"tool_use_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"tool_result_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"usage" jsonb,
	"metadata" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"batch_id" uuid,
	"job_id" uuid NOT NULL,
	"reason" text NOT NULL,
	"archived_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "batches" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"conversation_id" uuid NOT NULL,
	"job_id" uuid NOT NULL,
	"level" integer NOT NULL,
	"summary" text NOT NULL,
	"seqs" bigint[] NOT NULL,
	"source_messages" integer NOT NULL,
	"source_tokens" integer NOT NULL,
	"summary_tokens" integer NOT NULL,
	"model" text NOT NULL,
	"input_tokens" integer DEFAULT 0 NOT NULL,
	"output_tokens" integer DEFAULT 0 NOT NULL,
	"cache_read_tokens" integer DEFAULT 0 NOT NULL,
	"cache_write_tokens" integer DEFAULT 0 NOT NULL,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"superseded_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "chunk_results" (
	"job_id" uuid NOT NULL,
	"chunk_key" text NOT NULL,
	"summary" text NOT NULL,
	"model" text NOT NULL,
	"provider" text NOT NULL,
	"usage" jsonb NOT NULL,
	"calls" integer DEFAULT 1 NOT NULL,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"latency_ms" integer DEFAULT 0 NOT NULL,
	"identifiers_found" integer DEFAULT 0 NOT NULL,
	"identifiers_total" integer DEFAULT 0 NOT NULL,
	"fallback" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chunk_results_job_id_chunk_key_pk" PRIMARY KEY("job_id","chunk_key")
);
--> statement-breakpoint
CREATE TABLE "compaction_jobs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"conversation_id" uuid NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"trigger" text NOT NULL,
	"options" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"watermark" bigint,
	"plan" jsonb,
	"progress" jsonb DEFAULT '{"chunksDone":0,"chunksTotal":0}'::jsonb NOT NULL,
	"result" jsonb,
	"error" jsonb,
	"attempts" integer DEFAULT 0 NOT NULL,
	"idempotency_key" text,
	"cancel_requested" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "conversations" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" uuid NOT NULL,
	"external_id" text NOT NULL,
	"model" text,
	"context_limit" integer NOT NULL,
	"policy" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"active_tokens" integer DEFAULT 0 NOT NULL,
	"message_count" integer DEFAULT 0 NOT NULL,
	"next_seq" bigint DEFAULT 1 NOT NULL,
	"compaction_count" integer DEFAULT 0 NOT NULL,
	"reported_input_tokens" integer,
	"warning" boolean DEFAULT false NOT NULL,
	"last_compacted_seq" bigint,
	"auto_paused_until_seq" bigint,
	"last_job_id" uuid,
	"version" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"tenant_id" uuid NOT NULL,
	"key" text NOT NULL,
	"route" text NOT NULL,
	"request_hash" text NOT NULL,
	"status_code" integer,
	"response" jsonb,
	"headers" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "idempotency_keys_tenant_id_key_pk" PRIMARY KEY("tenant_id","key")
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"conversation_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"role" text NOT NULL,
	"kind" text DEFAULT 'message' NOT NULL,
	"content" jsonb NOT NULL,
	"name" text,
	"tokens" integer NOT NULL,
	"tool_use_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"tool_result_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"usage" jsonb,
	"metadata" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tenants" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"policy" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tenants_name_unique" UNIQUE("name")
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "archived_messages" ADD CONSTRAINT "archived_messages_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "batches" ADD CONSTRAINT "batches_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "chunk_results" ADD CONSTRAINT "chunk_results_job_id_compaction_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."compaction_jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "compaction_jobs" ADD CONSTRAINT "compaction_jobs_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "compaction_jobs" ADD CONSTRAINT "compaction_jobs_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_tenant_idx" ON "api_keys" USING btree ("tenant_id");--> statement-breakpoint
CREATE INDEX "archived_conversation_seq_idx" ON "archived_messages" USING btree ("conversation_id","seq");--> statement-breakpoint
CREATE INDEX "archived_batch_idx" ON "archived_messages" USING btree ("batch_id","seq");--> statement-breakpoint
CREATE INDEX "archived_job_idx" ON "archived_messages" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "archived_tool_use_ids_gin" ON "archived_messages" USING gin ("tool_use_ids");--> statement-breakpoint
CREATE INDEX "archived_tool_result_ids_gin" ON "archived_messages" USING gin ("tool_result_ids");--> statement-breakpoint
CREATE INDEX "batches_conversation_idx" ON "batches" USING btree ("conversation_id","level","created_at");--> statement-breakpoint
CREATE INDEX "batches_job_idx" ON "batches" USING btree ("job_id");--> statement-breakpoint
CREATE UNIQUE INDEX "compaction_jobs_one_active_uq" ON "compaction_jobs" USING btree ("conversation_id") WHERE status in ('queued','planning','summarizing','resummarizing','committing');--> statement-breakpoint
CREATE INDEX "compaction_jobs_conversation_idx" ON "compaction_jobs" USING btree ("conversation_id","created_at");--> statement-breakpoint
CREATE INDEX "compaction_jobs_status_idx" ON "compaction_jobs" USING btree ("status");--> statement-breakpoint
CREATE UNIQUE INDEX "conversations_tenant_external_uq" ON "conversations" USING btree ("tenant_id","external_id");--> statement-breakpoint
CREATE UNIQUE INDEX "messages_conversation_seq_uq" ON "messages" USING btree ("conversation_id","seq");--> statement-breakpoint
CREATE INDEX "messages_tool_use_ids_gin" ON "messages" USING gin ("tool_use_ids");--> statement-breakpoint
CREATE INDEX "messages_tool_result_ids_gin" ON "messages" USING gin ("tool_result_ids");