/**
 * The topics a `herald listen` hears. Listens on one machine share its device, and a device has
 * one topic filter: so each running listen records its topics (running-listens.ts), and the
 * filter is set to what they all listen for as each starts and ends. Before, the filter was
 * whichever started last: a `--topic deploys` listen started while a plain one ran narrowed the
 * plain one to deploys, and other topics never reached the machine. When none is left running,
 * the filter stays the last one's, so the server queues for this machine what it last listened
 * for, and the next listen catches up on it. A listen passes over what arrives outside its own
 * topics, unshown, unconfirmed and its place in the stream unmoved, so `listen --topic deploys
 * --exec deploy.sh` never runs its command on another topic.
 */

import { create } from "@bufbuild/protobuf";
import { pathToString } from "@bufbuild/protobuf/reflect";
import { createValidator } from "@bufbuild/protovalidate";
import {
  DeviceService,
  SetTopicFilterRequestSchema,
} from "../../../gen/herald/v1/device_service_pb.ts";
import type { Notification } from "../../../gen/herald/v1/notification_pb.ts";
import { ProjectService } from "../../../gen/herald/v1/project_service_pb.ts";
import { explainViolation } from "../../domain/notify-rules.ts";
import { namesProjects, storedTopicFilter, topicAdmits } from "../../domain/topic-filter.ts";
import { CliError, type Context, exit } from "../context.ts";
import { runningListens, unionOf } from "../running-listens.ts";

/**
 * Refuses `--topic`s the server would, by the proto's own rules and in the server's words, before
 * a device is registered for them: before, `listen --topic Deploys` on a new machine registered
 * (and saved) a device, then was refused.
 */
export function checkTopics(topics: string[]): void {
  const request = create(SetTopicFilterRequestSchema, { topics });
  const result = createValidator().validate(SetTopicFilterRequestSchema, request);
  if (result.kind !== "invalid") return;
  const lines = result.violations.map((v) => {
    const field = pathToString(v.field);
    return `  ${field}: ${explainViolation(field, v.ruleId, v.message, request)}`;
  });
  throw new CliError(`invalid request:\n${lines.join("\n")}`, exit.usage);
}

/** How long an ending listen waits to give the device's filter back to the others. */
const leaveMs = 2_000;

/**
 * Records this listen of `topics` (every topic without them) and sets the device's filter for
 * it and the others running; returns what this listen shows, its topics as the server stores
 * them (`own`: none for every topic), and `leave` for its end.
 */
export async function listenTopics(
  ctx: Context,
  device: { id: string; auth: { headers: Record<string, string> } },
  topics: string[] | undefined,
): Promise<{ ours: (n: Notification) => boolean; own: string[]; leave: () => Promise<void> }> {
  // `*` alone is every topic, each entry once: as the server stores it.
  const own = storedTopicFilter(topics ?? []);
  const listens = runningListens(ctx.config.path, device.id);
  listens.enter(own);
  const devices = ctx.client(DeviceService);
  const setFor = async (filters: string[][], options = {}) => {
    const filter = unionOf(filters);
    await devices.setTopicFilter({ topics: filter }, { ...device.auth, ...options });
    return filter.join("\n");
  };
  try {
    const set = await setFor(listens.live());
    // A listen that started meanwhile and set its own: set again with it.
    const now = listens.live();
    if (unionOf(now).join("\n") !== set) await setFor(now);
  } catch (err) {
    listens.leave();
    throw err;
  }
  const leave = async () => {
    listens.leave();
    const others = listens.live();
    // The last one leaves the filter as it is: what the machine catches up on next time.
    if (others.length) await setFor(others, { timeoutMs: leaveMs }).catch(() => undefined);
  };
  return { ours: await admits(ctx, own), own, leave };
}

/** Whether a notification is of `filter`'s topics. */
async function admits(ctx: Context, filter: string[]): Promise<(n: Notification) => boolean> {
  if (filter.length === 0) return () => true;
  // `project/topic` names a project: the account's projects, by id, say which.
  const names = new Map<string, string>();
  if (namesProjects(filter)) {
    const { projects } = await ctx
      .client(ProjectService)
      .listProjects({}, { headers: ctx.headers(ctx.ownerToken) });
    for (const p of projects) names.set(p.id, p.name);
  }
  return (n) => topicAdmits(filter, names.get(n.projectId) ?? "", n.topic);
}
