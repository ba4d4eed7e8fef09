-- Migration 0014: a conversation may name its parent (a sub-agent's conversation, linked by the
-- gateway or at create); erasing the parent unlinks its children. GET /v1/conversations lists a
-- tenant's conversations by creation, one index range per page, and filters by parent.
ALTER TABLE "conversations" ADD COLUMN "parent_id" uuid;--> statement-breakpoint
ALTER TABLE "conversations" ADD CONSTRAINT "conversations_parent_id_conversations_id_fk" FOREIGN KEY ("parent_id") REFERENCES "public"."conversations"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "conversations_tenant_created_idx" ON "conversations" USING btree ("tenant_id","created_at","external_id");--> statement-breakpoint
CREATE INDEX "conversations_parent_idx" ON "conversations" USING btree ("parent_id") WHERE parent_id is not null;