-- Migration 0007 (hand-written): the function compactd_notify_job_status and the triggers
-- compaction_jobs_status_notify and compaction_jobs_delete_notify.
-- Every change of a job's status, whoever makes it (worker step, reconciler, cancel, revert,
-- a conversation's deletion cascading to its jobs), is announced on one channel once the
-- change commits, so long-polls wait on that instead of re-reading the row (api/job-waiters.ts).
-- The payload is '<job id>:<new status>' ('<job id>:deleted' when the row goes).
CREATE FUNCTION "compactd_notify_job_status"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('compactd_job_status', OLD.id::text || ':deleted');
  ELSE
    PERFORM pg_notify('compactd_job_status', NEW.id::text || ':' || NEW.status);
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "compaction_jobs_status_notify" AFTER UPDATE OF "status" ON "compaction_jobs"
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION "compactd_notify_job_status"();--> statement-breakpoint
CREATE TRIGGER "compaction_jobs_delete_notify" AFTER DELETE ON "compaction_jobs"
  FOR EACH ROW EXECUTE FUNCTION "compactd_notify_job_status"();
