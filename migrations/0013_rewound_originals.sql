-- A rewound original (the gateway's client no longer sends it) is archived without a job.
ALTER TABLE "archived_messages" ALTER COLUMN "job_id" DROP NOT NULL;