/**
 * The server under benchmark, in its own process: the real app on the given database, with its
 * senders pointed at the fake providers the benchmark runs (origins and CA from the environment).
 * Prints one JSON line `{ url, apiKey }` when it listens.
 */
import { readFileSync } from "node:fs";
import { buildApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { openDatabase } from "../../src/db/orm.ts";
import { createApnsSender } from "../../src/delivery/senders/apns.ts";
import { createFcmSender } from "../../src/delivery/senders/fcm.ts";
import { providerSocketsPerOrigin } from "../../src/delivery/senders/sender.ts";
import { createWebPushSender } from "../../src/delivery/senders/web-push.ts";
import { bootstrapIfEmpty } from "../../src/ops/bootstrap.ts";
import { loadPushTokenKeys } from "../../src/ops/push-token-keys.ts";
import { RedirectingAgent } from "../../test/fakes/fcm-server.ts";

const env = process.env;
const need = (name: string) => {
  const v = env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};
const config = loadConfig(env);
const ca = readFileSync(need("BENCH_CA_FILE"), "utf8");
const orm = await openDatabase({
  url: need("DATABASE_URL"),
  poolSize: config.dbPoolSize,
});
const boot = await bootstrapIfEmpty(orm, {
  email: "bench@example.com",
  password: need("BENCH_PASSWORD"),
});
const app = await buildApp({
  config,
  orm,
  tokenKeys: loadPushTokenKeys(config).ring,
  senders: [
    createApnsSender({
      teamId: need("BENCH_APNS_TEAM"),
      keyId: need("BENCH_APNS_KEY_ID"),
      signingKey: readFileSync(need("BENCH_APNS_KEY_FILE"), "utf8"),
      bundleId: "dev.herald.bench",
      sandbox: false,
      endpoint: { origin: need("BENCH_APNS_ORIGIN"), ca },
    }),
    createFcmSender({
      serviceAccountFile: need("BENCH_FCM_SERVICE_ACCOUNT"),
      agent: new RedirectingAgent(Number(need("BENCH_FCM_PORT")), ca, {
        keepAlive: true,
        maxSockets: providerSocketsPerOrigin,
      }),
    }),
    createWebPushSender({
      vapid: {
        publicKey: need("BENCH_VAPID_PUBLIC"),
        privateKey: need("BENCH_VAPID_PRIVATE"),
        subject: "mailto:bench@example.com",
      },
      ca,
      allowPrivate: true,
    }),
  ],
});
await app.listen({ host: "127.0.0.1", port: 0 });
const port = (app.server.address() as { port: number }).port;
process.stdout.write(
  `${JSON.stringify({ url: `http://127.0.0.1:${port}`, apiKey: boot?.apiKey })}\n`,
);
process.once("SIGTERM", async () => {
  await app.close();
  await orm.close();
  process.exit(0);
});
// The benchmark gone without a SIGTERM (it crashed): its stdout pipe breaks; stop with it.
process.stdout.on("error", () => process.exit(1));
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(1);
}, 1_000).unref();
