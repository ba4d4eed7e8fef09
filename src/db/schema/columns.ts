import { bigint, timestamp } from 'drizzle-orm/pg-core';

/** Columns every table spells the same way. */
export const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();
export const seqColumn = (name: string) => bigint(name, { mode: 'number' });
