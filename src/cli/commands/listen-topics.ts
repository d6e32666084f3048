/**
 * The topics a `herald listen` hears. Its `--topic` (or every topic without it) becomes the
 * device's filter as it starts, so the server queues for this machine what it listens for. The
 * device is this machine's, shared by every listen on it: one started later with other topics
 * widens or narrows the filter for all. So a listen also passes over what arrives outside its
 * own topics, unshown, unconfirmed and its place in the stream unmoved: before, `listen --topic
 * deploys --exec deploy.sh` ran its command on every topic once another `listen` on the machine
 * asked for every topic.
 */

import { DeviceService } from "../../../gen/herald/v1/device_service_pb.ts";
import type { Notification } from "../../../gen/herald/v1/notification_pb.ts";
import { ProjectService } from "../../../gen/herald/v1/project_service_pb.ts";
import { namesProjects, topicAdmits } from "../../domain/topic-filter.ts";
import type { Context } from "../context.ts";

/** Sets the device's filter to `topics` (every topic without them); returns what this listen shows. */
export async function listenTopics(
  ctx: Context,
  auth: { headers: Record<string, string> },
  topics: string[] | undefined,
): Promise<(n: Notification) => boolean> {
  // Without --topic, every topic: before, the device kept the filter an earlier listen gave it,
  // and "listening for every topic" heard only that one.
  // The filter as the server stored it (`*` alone as the empty filter, each entry once).
  const { device } = await ctx.client(DeviceService).setTopicFilter({ topics: topics ?? [] }, auth);
  const filter = device?.topics ?? [];
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
