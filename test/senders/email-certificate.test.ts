/**
 * Email in over STARTTLS, left running while its certificate is renewed: the renewed pair is
 * served to the next client without a restart, as certbot renews it (new files, the names moved
 * onto them). A half-renewed pair (a new key, the old certificate) keeps the pair in use and says
 * so once in the log; completing the renewal is then taken.
 */
import { mkdtempSync, renameSync, rmSync } from "node:fs";
import { connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selfSigned } from "../helpers/certificates.ts";
import { freePort } from "../helpers/ports.ts";
import { capturedLog, startServer, type TestServer } from "../helpers/server.ts";

const dir = mkdtempSync(join(tmpdir(), "herald-smtp-renew-"));
const [keyFile, certFile] = [join(dir, "key.pem"), join(dir, "cert.pem")];
const log = capturedLog("info");
let server: TestServer;
let port: number;

/** A new key and a self-signed certificate for `name`, written beside the live files. */
async function newPair(name: string, keyType?: "ecdsa"): Promise<{ key: string; cert: string }> {
  const [key, cert] = [join(dir, `${name}.key`), join(dir, `${name}.crt`)];
  await selfSigned(key, cert, name, keyType);
  return { key, cert };
}

/** The common name of the certificate a STARTTLS client is given now. */
function servedName(): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(port, "127.0.0.1");
    let said = "";
    let step = 0;
    socket.on("error", reject);
    socket.on("data", (chunk) => {
      said += String(chunk);
      if (!said.endsWith("\r\n")) return;
      const last = said.trimEnd().split("\r\n").at(-1) ?? "";
      said = "";
      if (/^\d{3}-/.test(last)) return;
      if (step === 0 && last.startsWith("220 ")) socket.write("EHLO renew.test\r\n");
      else if (step === 1 && last.startsWith("250 ")) socket.write("STARTTLS\r\n");
      else if (step === 2 && last.startsWith("220 ")) {
        socket.removeAllListeners("data");
        const secure = tlsConnect({ socket, rejectUnauthorized: false }, () => {
          resolve(String(secure.getPeerCertificate().subject.CN));
          secure.end();
        });
        secure.on("error", reject);
      } else reject(new Error(`unexpected: ${last}`));
      step += 1;
    });
  });
}

beforeAll(async () => {
  const first = await newPair("first");
  renameSync(first.key, keyFile);
  renameSync(first.cert, certFile);
  port = await freePort();
  server = await startServer(
    { smtp: { port, tls: { keyFile, certFile }, domain: "hooks.example.test" } },
    undefined,
    undefined,
    log.logger,
  );
}, 60_000);
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a STARTTLS certificate renewed while Herald runs", () => {
  it("is served to the next client; a half-renewed pair keeps the one in use", async () => {
    expect(await servedName()).toBe("first");
    const loaded = log.entries().find((e) => e.msg === "email in: STARTTLS certificate loaded");
    expect(Date.parse(String(loaded?.expires)) - Date.now()).toBeGreaterThan(23 * 3600_000);

    const renewed = await newPair("renewed");
    renameSync(renewed.key, keyFile);
    renameSync(renewed.cert, certFile);
    expect(await servedName()).toBe("renewed");
    expect(log.text()).toContain("STARTTLS certificate renewed");

    // Caught between its two moves: the new key does not match the certificate in place.
    const third = await newPair("third");
    renameSync(third.key, keyFile);
    expect(await servedName()).toBe("renewed");
    expect(await servedName()).toBe("renewed");
    const warned = log
      .entries()
      .filter((e) => String(e.msg).includes("cannot be used; the previous pair stays"));
    expect(warned).toHaveLength(1);
    expect(String(warned[0]?.reason)).toMatch(/key values mismatch|mismatch/i);

    renameSync(third.cert, certFile);
    expect(await servedName()).toBe("third");

    // A renewal to ECDSA (certbot 2's default), caught between its moves: TLS takes the ECDSA
    // key beside the RSA certificate without a word, and every handshake then failed.
    const ecdsa = await newPair("ecdsa", "ecdsa");
    renameSync(ecdsa.key, keyFile);
    expect(await servedName()).toBe("third");
    const notItsKey = log.entries().filter((e) => e.reason === "the key is not the certificate's");
    expect(notItsKey).toHaveLength(1);
    renameSync(ecdsa.cert, certFile);
    expect(await servedName()).toBe("ecdsa");
  });
});
