import { parseArgs } from "node:util";
import { describe, expect, it } from "vitest";
import { commands, globalOptions, runCli } from "../../../src/cli/main.ts";

/** An example's words, as a shell splits them (single and double quotes). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3] ?? "");
}

describe("the CLI's help", () => {
  it("describes every flag of every command, and gives each command an example that parses", () => {
    for (const c of commands) {
      for (const flag of Object.keys(c.options)) {
        expect(c.flags?.[flag], `${c.name} --${flag}`).toMatch(/\w{3,}/);
      }
      expect(c.example, c.name).toBeDefined();
      // The command as typed, possibly inside another program's line (an agent's config).
      const all = words(c.example as string);
      const n = c.name.split(" ").length;
      const at = all.findIndex((_, i) => all.slice(i, i + 1 + n).join(" ") === `herald ${c.name}`);
      expect(at, c.name).toBeGreaterThanOrEqual(0);
      const argv = all.slice(at + 1 + n);
      const args = argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv;
      // The example's flags are the command's own (or global ones), as the CLI will parse them.
      expect(() =>
        parseArgs({
          args,
          options: { ...globalOptions, ...c.options },
          allowPositionals: true,
          strict: true,
        }),
      ).not.toThrow();
    }
  });

  it("shows them: herald help COMMAND lists each flag with its description and the example", async () => {
    for (const c of commands) {
      let out = "";
      const code = await runCli(["help", ...c.name.split(" ")], {
        stdout: (s) => {
          out += s;
        },
        stderr: () => {},
        readStdin: async () => undefined,
        isTty: false,
        env: {},
      });
      expect(code, c.name).toBe(0);
      for (const flag of Object.keys(c.options))
        expect(out, `${c.name} --${flag}`).toContain(`--${flag}`);
      expect(out, c.name).toContain(c.example as string);
    }
  });

  it("a command that is not one gets the nearest, or what its group takes, in one line", async () => {
    const said = async (...argv: string[]) => {
      let err = "";
      const code = await runCli(argv, {
        stdout: () => {},
        stderr: (s) => {
          err += s;
        },
        readStdin: async () => undefined,
        isTty: false,
        env: {},
      });
      expect(code).toBe(2);
      return err;
    };
    // Before: `unknown command "notfy hi"`, then the whole help, the line scrolled above it.
    expect(await said("notfy", "hi")).toBe(
      'herald: unknown command "notfy"; did you mean "herald notify"? herald help lists every command\n',
    );
    expect(await said("lisen")).toContain('did you mean "herald listen"?');
    expect(await said("devices", "quiett")).toBe(
      'herald: unknown command "devices quiett"; devices takes: list, rename, quiet, topics, remove, test, pair; did you mean "herald devices quiet"?\n',
    );
    expect(await said("keys")).toBe('herald: "herald keys" needs one of: create, list, revoke\n');
    expect(await said("xyz")).toBe(
      'herald: unknown command "xyz"; herald help lists every command\n',
    );
  });
});
