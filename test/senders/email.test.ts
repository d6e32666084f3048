/**
 * Email in (issue 25, item 2), with real clients: Debian's swaks and Python's smtplib, in clear
 * and over STARTTLS (a certificate made by openssl for the test). Mail to an `email` hook's
 * address becomes a notification (subject → title, text → message, X-Priority → priority); a
 * resend of the same Message-ID sends once; a wrong secret or an unknown address is refused at
 * RCPT TO with 550; a message over the size limit with 552; STARTTLS is offered only with a
 * certificate.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selfSigned } from "../helpers/certificates.ts";
import { sql } from "../helpers/db.ts";
import { freePort } from "../helpers/ports.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "herald-smtp-"));
const python = process.env.HERALD_PYTHON ?? "python3";
let plain: TestServer;
let tls: TestServer;
let plainPort: number;
let tlsPort: number;

beforeAll(async () => {
  const [keyFile, certFile] = [join(dir, "key.pem"), join(dir, "cert.pem")];
  await selfSigned(keyFile, certFile, "localhost");
  plainPort = await freePort();
  plain = await startServer({ smtp: { port: plainPort, tls: undefined, domain: undefined } });
  tlsPort = await freePort();
  tls = await startServer({
    smtp: { port: tlsPort, tls: { keyFile, certFile }, domain: "hooks.example.test" },
  });
}, 60_000);
afterAll(async () => {
  await plain?.close();
  await tls?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function emailHook(server: TestServer, topic = "mail") {
  const res = await fetch(`${server.url}/v1/projects/-/hooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}` },
    body: JSON.stringify({ kind: "email", name: "cron mail", topic }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { hook: { id: string }; secret: string; address: string };
}

const stored = (server: TestServer) =>
  sql<{ title: string; message: string; priority: string; topic: string }>(
    server.databaseUrl,
    "select title, message, priority, topic from notification where project_id = $1 order by id",
    [server.projectId],
  );

function swaks(port: number, to: string, ...more: string[]) {
  return run("swaks", [
    "--server",
    `127.0.0.1:${port}`,
    "--to",
    to,
    "--from",
    "cron@example.com",
    ...more,
  ]).then(
    (r) => ({ code: 0, out: r.stdout }),
    (e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }),
  );
}

describe("email in", () => {
  it("swaks: the subject is the title, the text the message, X-Priority the priority", async () => {
    const { address, secret } = await emailHook(plain);
    // Reached at an IP address: `localhost` (a domain literal is refused by strict parsers).
    expect(address).toMatch(/^[0-9a-f]{32}\.[a-z2-7]{26}@localhost$/);
    expect(address).toContain(secret.slice(4));
    // The same message twice (one Message-ID), as a mail server's retry sends it.
    const backupFailed = () =>
      swaks(
        plainPort,
        address,
        "--header",
        "Subject: Nightly backup failed",
        "--header",
        "X-Priority: 1",
        "--header",
        "Message-Id: <backup-1@cron.example.com>",
        "--body",
        "disk full on db-1",
      );
    const sent = await backupFailed();
    expect(sent.code, sent.out).toBe(0);
    expect(sent.out).toMatch(/<- {2}250/);
    const again = await backupFailed();
    expect(again.code, again.out).toBe(0);
    expect(await stored(plain)).toEqual([
      {
        title: "Nightly backup failed",
        message: "disk full on db-1",
        priority: "high",
        topic: "mail",
      },
    ]);
  });

  it("refuses a wrong secret and an unknown address at RCPT TO, and a message over the limit", async () => {
    const { address } = await emailHook(plain);
    const wrong = address.replace(/\.[a-z2-7]{4}/, ".aaaa");
    const refused = await swaks(plainPort, wrong, "--header", "Subject: x");
    expect(refused.code).not.toBe(0);
    expect(refused.out).toMatch(/<\*\* 550 5\.1\.1/);
    const unknown = await swaks(plainPort, "root@localhost", "--header", "Subject: x");
    expect(unknown.out).toMatch(/<\*\* 550 5\.1\.1/);
    const bigFile = join(dir, "big.txt");
    writeFileSync(bigFile, "x".repeat(1024 * 1024 + 10));
    // -n: swaks does not echo the megabyte it sends.
    const big = await swaks(
      plainPort,
      address,
      "-n",
      "--header",
      "Subject: big",
      "--body",
      `@${bigFile}`,
    );
    expect(big.code).not.toBe(0);
    expect(big.out.slice(-2000)).toMatch(/<\*\* 552/);
    expect(await stored(plain)).not.toContainEqual(expect.objectContaining({ title: "big" }));
    // No STARTTLS without a certificate.
    const ehlo = await swaks(plainPort, address, "--quit-after", "EHLO");
    expect(ehlo.out).not.toContain("STARTTLS");
  });

  it("Python smtplib over STARTTLS; and swaks with --tls", async () => {
    const { address } = await emailHook(tls, "secure");
    expect(address).toMatch(/@hooks\.example\.test$/);
    const program = `
import smtplib, ssl, sys
from email.message import EmailMessage
m = EmailMessage()
m["From"] = "ci@example.com"
m["To"] = sys.argv[2]
m["Subject"] = "Déploiement terminé ✓"
m.set_content("v1.4.2 is live\\n")
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
with smtplib.SMTP("127.0.0.1", int(sys.argv[1])) as s:
    s.starttls(context=ctx)
    s.send_message(m)
print("sent")
`;
    const { stdout } = await run(python, ["-c", program, String(tlsPort), address]);
    expect(stdout.trim()).toBe("sent");
    const sent = await swaks(
      tlsPort,
      address,
      "--tls",
      "--header",
      "Subject: over TLS",
      "--body",
      "hello",
    );
    expect(sent.code, sent.out).toBe(0);
    expect(sent.out).toContain("STARTTLS");
    expect(await stored(tls)).toEqual([
      {
        title: "Déploiement terminé ✓",
        message: "v1.4.2 is live",
        priority: "normal",
        topic: "secure",
      },
      { title: "over TLS", message: "hello", priority: "normal", topic: "secure" },
    ]);
  });
});
