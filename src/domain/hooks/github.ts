/**
 * GitHub's webhook events (X-GitHub-Event) as notifications: a finished workflow run, a
 * deployment's final status, a published release, a finished check suite. A failure is high
 * and says so first ("✗ …"); a success is normal ("✓ …"). Anything else (`ping`, events and
 * actions not mapped, runs that were cancelled or skipped) is acknowledged and ignored.
 * The sender's retries send once: the idempotency comes from X-GitHub-Delivery.
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

const failed = new Set(["failure", "timed_out", "startup_failure", "action_required"]);

/** How a conclusion reads: its mark, its words and its priority; undefined when not told. */
function verdict(conclusion: string): { mark: string; word: string; priority: Priority } | null {
  if (conclusion === "success") return { mark: "✓", word: "passed", priority: "normal" };
  if (failed.has(conclusion)) {
    const word = conclusion === "failure" ? "failed" : conclusion.replaceAll("_", " ");
    return { mark: "✗", word, priority: "high" };
  }
  return null;
}

const repoName = (body: Json) => text(body, "repository.full_name") || "a repository";

function workflowRun(body: Json, delivery: string | undefined): HookOutcome {
  if (text(body, "action") !== "completed") return { ignored: "workflow run not completed" };
  const run = member(body, "workflow_run");
  const conclusion = text(run, "conclusion");
  const v = verdict(conclusion);
  if (!v) return { ignored: `workflow run concluded ${conclusion || "without a conclusion"}` };
  const workflow = text(run, "name") || text(body, "workflow.name") || "Workflow";
  const branch = text(run, "head_branch");
  const lines = [
    text(run, "display_title") || text(run, "head_commit.message").split("\n")[0],
    [`#${text(run, "run_number")}`, text(run, "event"), text(run, "actor.login")]
      .filter((s) => s && s !== "#")
      .join(" · "),
  ];
  return {
    publish: {
      title: clip(
        `${v.mark} ${workflow} ${v.word}${branch ? ` on ${branch}` : ""} · ${repoName(body)}`,
        "title",
      ),
      message: clip(lines.filter(Boolean).join("\n"), "message"),
      priority: v.priority,
      clickUrl: link(text(run, "html_url")),
      dedupe: delivery,
    },
  };
}

function deploymentStatus(body: Json, delivery: string | undefined): HookOutcome {
  const status = member(body, "deployment_status");
  const state = text(status, "state");
  const environment = text(status, "environment") || text(body, "deployment.environment");
  const where = environment ? ` to ${environment}` : "";
  const url =
    link(text(status, "environment_url")) ??
    link(text(status, "target_url")) ??
    link(text(status, "log_url")) ??
    link(text(body, "repository.html_url"));
  const ref = text(body, "deployment.ref");
  const message = clip(
    [text(status, "description"), ref && `ref ${ref}`].filter(Boolean).join("\n"),
    "message",
  );
  if (state === "success") {
    const title = `✓ Deployed ${repoName(body)}${where}`;
    return {
      publish: {
        title: clip(title, "title"),
        message,
        priority: "normal",
        clickUrl: url,
        dedupe: delivery,
      },
    };
  }
  if (state === "failure" || state === "error") {
    const title = `✗ Deployment of ${repoName(body)}${where} ${state === "error" ? "errored" : "failed"}`;
    return {
      publish: {
        title: clip(title, "title"),
        message,
        priority: "high",
        clickUrl: url,
        dedupe: delivery,
      },
    };
  }
  return { ignored: `deployment status ${state || "without a state"}` };
}

function release(body: Json, delivery: string | undefined): HookOutcome {
  if (text(body, "action") !== "published") return { ignored: `release ${text(body, "action")}` };
  const r = member(body, "release");
  const tag = text(r, "tag_name");
  const name = text(r, "name");
  const pre = r.prerelease === true ? "pre-release " : "";
  return {
    publish: {
      title: clip(`${repoName(body)} ${pre}${tag || name} released`, "title"),
      message: clip(
        [name && name !== tag ? name : "", text(r, "body")].filter(Boolean).join("\n\n"),
        "message",
      ),
      priority: "normal",
      clickUrl: link(text(r, "html_url")),
      dedupe: delivery,
    },
  };
}

function checkSuite(body: Json, delivery: string | undefined): HookOutcome {
  if (text(body, "action") !== "completed")
    return { ignored: `check suite ${text(body, "action")}` };
  const suite = member(body, "check_suite");
  const conclusion = text(suite, "conclusion");
  const v = verdict(conclusion);
  if (!v) return { ignored: `check suite concluded ${conclusion || "without a conclusion"}` };
  const app = text(suite, "app.name") || "Checks";
  const branch = text(suite, "head_branch");
  const sha = text(suite, "head_sha");
  const repoUrl = text(body, "repository.html_url");
  return {
    publish: {
      title: clip(
        `${v.mark} ${app} ${v.word}${branch ? ` on ${branch}` : ""} · ${repoName(body)}`,
        "title",
      ),
      message: clip(text(suite, "head_commit.message").split("\n")[0] ?? "", "message"),
      priority: v.priority,
      clickUrl: link(repoUrl && sha ? `${repoUrl}/commit/${sha}/checks` : repoUrl),
      dedupe: delivery,
    },
  };
}

const mapped: Record<string, (body: Json, delivery: string | undefined) => HookOutcome> = {
  workflow_run: workflowRun,
  deployment_status: deploymentStatus,
  release,
  check_suite: checkSuite,
};

export function readGitHub(call: HookCall): HookOutcome {
  const event = call.event;
  if (!event) throw new HookPayloadError("X-GitHub-Event", "header is missing");
  if (event === "ping") return { ignored: "ping" };
  const read = mapped[event];
  if (!read) return { ignored: `event ${event} is not mapped` };
  return read(objectBody(call.body), call.delivery);
}
