/**
 * GitLab's webhook events (X-Gitlab-Event) as notifications: a pipeline that finished, and a
 * deployment that finished. A failure is high ("✗ …"), a success normal ("✓ …"), a cancelled
 * one low; a pipeline or deployment still under way, and other events, are ignored. The
 * sender's retries send once: the idempotency comes from X-Gitlab-Event-UUID.
 */
import {
  clip,
  type HookCall,
  type HookOutcome,
  HookPayloadError,
  type Json,
  link,
  member,
  objectBody,
  type Priority,
  text,
} from "./event.ts";

const ends: Record<string, { mark: string; word: string; priority: Priority }> = {
  success: { mark: "✓", word: "passed", priority: "normal" },
  failed: { mark: "✗", word: "failed", priority: "high" },
  canceled: { mark: "⊘", word: "was cancelled", priority: "low" },
};

const projectName = (body: Json) =>
  text(body, "project.path_with_namespace") || text(body, "project.name") || "a project";

function pipeline(body: Json, delivery: string | undefined): HookOutcome {
  const attributes = member(body, "object_attributes");
  const status = text(attributes, "status");
  const end = ends[status];
  if (!end) return { ignored: `pipeline ${status || "without a status"}` };
  const id = text(attributes, "id");
  const ref = text(attributes, "ref");
  const web = text(body, "project.web_url");
  const url = link(text(attributes, "url")) ?? link(web && id ? `${web}/-/pipelines/${id}` : web);
  const failedJobs = Array.isArray(body.builds)
    ? (body.builds as Json[])
        .filter((b) => b && b.status === "failed")
        .map((b) => `${text(b, "stage")}: ${text(b, "name")}`)
    : [];
  const lines = [
    text(body, "commit.message").split("\n")[0],
    failedJobs.length > 0 ? `failed: ${failedJobs.join(", ")}` : "",
    text(body, "user.username") && `by ${text(body, "user.username")}`,
  ];
  return {
    publish: {
      title: clip(
        `${end.mark} Pipeline #${id} ${end.word}${ref ? ` on ${ref}` : ""} · ${projectName(body)}`,
        "title",
      ),
      message: clip(lines.filter(Boolean).join("\n"), "message"),
      priority: end.priority,
      clickUrl: url,
      dedupe: delivery,
    },
  };
}

function deployment(body: Json, delivery: string | undefined): HookOutcome {
  const status = text(body, "status");
  const environment = text(body, "environment");
  const where = environment ? ` to ${environment}` : "";
  const url =
    link(text(body, "environment_external_url")) ??
    link(text(body, "deployable_url")) ??
    link(text(body, "project.web_url"));
  const message = clip(
    [text(body, "commit_title"), text(body, "short_sha") && `commit ${text(body, "short_sha")}`]
      .filter(Boolean)
      .join("\n"),
    "message",
  );
  const titles: Record<string, [string, Priority]> = {
    success: [`✓ Deployed ${projectName(body)}${where}`, "normal"],
    failed: [`✗ Deployment of ${projectName(body)}${where} failed`, "high"],
    canceled: [`⊘ Deployment of ${projectName(body)}${where} was cancelled`, "low"],
  };
  const found = titles[status];
  if (!found) return { ignored: `deployment ${status || "without a status"}` };
  const [title, priority] = found;
  return {
    publish: { title: clip(title, "title"), message, priority, clickUrl: url, dedupe: delivery },
  };
}

const mapped: Record<string, (body: Json, delivery: string | undefined) => HookOutcome> = {
  "Pipeline Hook": pipeline,
  "Deployment Hook": deployment,
};

export function readGitLab(call: HookCall): HookOutcome {
  const event = call.event;
  if (!event) throw new HookPayloadError("X-Gitlab-Event", "header is missing");
  const read = mapped[event];
  if (!read) return { ignored: `event ${event} is not mapped` };
  return read(objectBody(call.body), call.delivery);
}
