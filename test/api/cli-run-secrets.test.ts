/**
 * `herald run` never sends a secret of its command line or output: not in the title (lock
 * screens and push previews show it), the message, or `metadata.command`. One run per kind of
 * secret, the secret both in the arguments and in the output.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliFor } from "../helpers/cli.ts";
import { secretCases } from "../helpers/secrets.ts";
import { startServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => server.close());
const { cli, loggedIn, get } = cliFor(() => server);

describe("herald run redacts secrets", () => {
  for (const c of secretCases) {
    it(`of the kind ${c.name} in title, message and metadata`, async () => {
      const h = await loggedIn();
      // echo prints its arguments: the secret is in the command line and in the output.
      const r = await cli(["run", "--json", "--", "/bin/echo", ...c.text.split(" ")], { home: h });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(c.secret); // the terminal still shows the real output
      const n = await get(JSON.parse(r.stdout.trim().split("\n").at(-1) as string).id);
      for (const [where, text] of [
        ["title", n.title],
        ["message", n.message],
        ["metadata.command", n.metadata.command],
      ]) {
        expect(text, where).not.toContain(c.secret);
        expect(text, where).toContain("[redacted]");
      }
      // The program's name, not its path; cut at a word, never inside a secret or its mark.
      expect(n.title).toMatch(/^✓ echo .* succeeded$/);
      expect(n.title).not.toMatch(/\[redacted(?!\])/);
    });
  }
});
