/**
 * NotifyService.WatchNotifications, the console's live feed (issue 22, item 10): the project's
 * newest notifications at once, then again as soon as one is published on another serving
 * process (news from the fan-out, not a poll), or withdrawn there; only the caller's
 * project; and the watch counts as a long poll of the account.
 */
import { durationMs } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Notification } from "../../gen/herald/v1/notification_pb.ts";
import { NotifyService } from "../../gen/herald/v1/notify_service_pb.ts";
import {
  addProjectWithKey,
  notify,
  startPeer,
  startServer,
  type TestServer,
} from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let server: TestServer;
let peer: Awaited<ReturnType<typeof startPeer>>;
beforeAll(async () => {
  server = await startServer();
  peer = await startPeer(server);
});
afterAll(async () => {
  await peer.close();
  await server.close();
});

/** Watches over the Connect protocol on HTTP/1.1, as the console does; every page it got. */
function watch(key: string, topic = "", on = server) {
  const client = createClient(
    NotifyService,
    createConnectTransport({ baseUrl: on.url, httpVersion: "1.1" }),
  );
  const abort = new AbortController();
  const pages: { at: number; notifications: Notification[]; refreshMs?: number }[] = [];
  const done = (async () => {
    try {
      for await (const page of client.watchNotifications(
        { topic, pageSize: 5 },
        { headers: { authorization: `Bearer ${key}` }, signal: abort.signal },
      )) {
        const refreshMs = page.refreshInterval && durationMs(page.refreshInterval);
        pages.push({ at: Date.now(), notifications: page.notifications, refreshMs });
      }
    } catch (err) {
      if (!abort.signal.aborted) throw err;
    }
  })();
  return {
    pages,
    latest: () => pages.at(-1)?.notifications.map((n) => n.title) ?? [],
    stop: async () => {
      abort.abort();
      await done;
    },
  };
}

describe("WatchNotifications", () => {
  it("sends the newest at once, then each publish from any process as its fan-out commits", async () => {
    await notify(server, { title: "before", topic: "feed" });
    const w = watch(server.apiKey, "feed");
    await waitFor(() => w.latest().includes("before"));
    const first = w.pages.length;
    // Published on the peer: news reaches this process's watch from the fan-out's NOTIFY.
    const published = Date.now();
    const res = await fetch(`${peer.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}` },
      body: JSON.stringify({ title: "from the peer", topic: "feed" }),
    });
    expect(res.status).toBe(202);
    await waitFor(() => w.latest()[0] === "from the peer");
    const page = w.pages.find((p) => p.notifications[0]?.title === "from the peer");
    // Well inside the 5 s refresh: it came with the news.
    expect((page?.at ?? Infinity) - published).toBeLessThan(2_000);
    expect(w.pages.length).toBeGreaterThan(first);
    // Another topic is not in this feed.
    await notify(server, { title: "elsewhere", topic: "other" });
    await notify(server, { title: "after", topic: "feed" });
    await waitFor(() => w.latest()[0] === "after");
    expect(w.pages.flatMap((p) => p.notifications.map((n) => n.title))).not.toContain("elsewhere");
    await w.stop();
  });

  it("sends the page again when a question is withdrawn on another process, from its news", async () => {
    const res = await notify(server, {
      title: "deploy?",
      topic: "asks",
      actions: [{ id: "yes", label: "Deploy" }],
    });
    const id = res.json.id as string;
    const w = watch(server.apiKey, "asks");
    const statusOf = () => w.pages.at(-1)?.notifications.find((n) => n.id === id)?.status;
    await waitFor(() => statusOf() !== undefined);
    const withdrawn = Date.now();
    const cancel = await fetch(`${peer.url}/v1/notifications/${id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect(cancel.status).toBe(200);
    await waitFor(() => statusOf() === "canceled");
    const page = w.pages.find((p) =>
      p.notifications.some((n) => n.id === id && n.status === "canceled"),
    );
    // Well inside the 5 s refresh: the cancel's statement announced the project.
    expect((page?.at ?? Infinity) - withdrawn).toBeLessThan(2_000);
    await w.stop();
  });

  it("shows only the caller's project", async () => {
    const other = await addProjectWithKey(server, { name: "watch-other" });
    const w = watch(other.apiKey);
    await waitFor(() => w.pages.length > 0);
    await notify(server, { title: "not yours" });
    const mine = await fetch(`${server.url}/v1/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${other.apiKey}` },
      body: JSON.stringify({ title: "yours" }),
    });
    expect(mine.status).toBe(202);
    await waitFor(() => w.latest().includes("yours"));
    expect(w.pages.flatMap((p) => p.notifications.map((n) => n.title))).not.toContain("not yours");
    await w.stop();
  });

  it("says on every page how long until the next, and keeps to it with no news", async () => {
    const w = watch(server.apiKey, "quiet");
    await waitFor(() => w.pages.length > 0);
    // The feed's own refresh, inside the keepalive's 25 s.
    expect(w.pages[0]?.refreshMs).toBe(5_000);
    await w.stop();
    // A shorter keepalive shortens it: a client's watch for a dead stream goes by it.
    const brisk = await startServer({ streamKeepaliveMs: 300 });
    try {
      const b = watch(brisk.apiKey, "quiet", brisk);
      await waitFor(() => b.pages.length >= 4);
      await b.stop();
      expect(b.pages.map((p) => p.refreshMs)).toEqual(b.pages.map(() => 300));
      const gaps = b.pages.slice(1).map((p, i) => p.at - (b.pages[i]?.at ?? 0));
      // The interval, the 100 ms that bursts settle in, and the page's read.
      for (const gap of gaps) expect(gap).toBeLessThan(2_000);
    } finally {
      await brisk.close();
    }
  });
});
