/**
 * What the delivery worker's statements would find, asked in one read-only statement. An idle
 * worker used to run each of them every round: about 45 statements (28 transactions) a second
 * per serving process with nothing to do, most of them writes that lock what they find
 * (docs/operations.md, "Database"). Now an idle round asks this first and runs only the
 * statements that have work, and the periodic jobs share one probe instead of one statement
 * each. Each answer is built from its statement's own predicate (one home per rule); a probe may
 * say yes to work another worker then takes first (the statement finds nothing, as before), and
 * never says no to work the statement would take.
 */
import { escalationDueOf, repeatDueOf } from "../notifications/acknowledgements.ts";
import { queuedOf } from "../notifications/fan-out.ts";
import { scheduledDueOf } from "../notifications/schedule.ts";
import { bound, type Db } from "../orm.ts";
import { pushDueOf } from "./claim-due.ts";

/** Which of the worker's statements have work, by the work each takes. */
export interface DueWork {
  /** Scheduled notifications whose time has come (releaseDue). */
  scheduled: boolean;
  /** Repeats of unacknowledged notifications (repeatDue). */
  repeats: boolean;
  /** Escalations of unacknowledged notifications (escalateDue). */
  escalations: boolean;
  /** Clears to send (claimClears). */
  clears: boolean;
  /** Notifications queued for the workers' fan-out (fanOut). */
  queued: boolean;
  /** Push deliveries due and not leased (claimDue). */
  pushes: boolean;
}

const probeStatement = `select
  exists (select 1 from notification n where ${scheduledDueOf("n")}) as scheduled,
  exists (select 1 from notification n where ${repeatDueOf("n")}) as repeats,
  exists (select 1 from notification n where ${escalationDueOf("n")}) as escalations,
  exists (select 1 from clear_push) as clears,
  exists (select 1 from notification n where ${queuedOf("n")}) as queued,
  exists (select 1 from delivery d where ${pushDueOf("d")}) as pushes`;

/**
 * Planned afresh on every call (an unnamed statement: about 0.15 ms of PostgreSQL's time), not
 * prepared once per connection. A plan made while `notification` held a few rows and had no
 * statistics read it whole for the repeats and escalations (no row seemed to need more than the
 * first page), and the kept plan went on doing so as the table grew: 26 ms a probe at 100,000
 * rows, three to five probes a second under load, until autovacuum's first ANALYZE of the
 * table, up to a minute later (BENCHMARKS.md, thirty-fifth session;
 * test/api/probe-plan.test.ts). A fresh plan sees the table's size. Left as it was: while a
 * table without statistics holds notifications that ask for acknowledgement, PostgreSQL may
 * still choose to read it whole, until that ANALYZE.
 */
export async function probeDue(db: Db): Promise<DueWork> {
  const rows = await bound<DueWork & Record<string, boolean>>(db, probeStatement, []);
  return rows[0] as DueWork;
}
