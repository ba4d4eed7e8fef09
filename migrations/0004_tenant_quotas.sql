ALTER TABLE "tenants" ADD COLUMN "max_active_compactions" integer;--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "compactions_per_minute" integer;--> statement-breakpoint
CREATE INDEX "compaction_jobs_tenant_created_idx" ON "compaction_jobs" USING btree ("tenant_id","created_at");