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

export async function probeDue(db: Db): Promise<DueWork> {
  const rows = await bound<DueWork & Record<string, boolean>>(
    db,
    probeStatement,
    [],
    "herald_due_probe",
  );
  return rows[0] as DueWork;
}
