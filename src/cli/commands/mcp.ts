/**
 * `herald mcp`: Herald's tools for a local AI agent, over stdio (the Model Context Protocol).
 * The agent's MCP client starts it; it acts with the publisher credential the CLI finds
 * (--api-key, HERALD_API_KEY, HERALD_TOKEN or the saved login). Standard output carries only the
 * protocol; anything said to a person goes to standard error, and never the credential.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createHeraldMcpServer } from "../../mcp/tools.ts";
import type { Command } from "../command.ts";
import { exit } from "../context.ts";
import { heraldOf } from "./notify.ts";

export const mcp: Command = {
  name: "mcp",
  summary: "serve Herald's tools (notify, ask, …) to an AI agent over stdio (MCP)",
  usage: "herald mcp",
  options: {},
  example: "claude mcp add herald -e HERALD_API_KEY=hk_… -- herald mcp",
  async run(ctx) {
    const server = createHeraldMcpServer(heraldOf(ctx));
    const transport = new StdioServerTransport();
    const closed = new Promise<void>((resolve) => {
      transport.onclose = resolve;
      process.stdin.once("end", resolve);
      ctx.io.signal?.addEventListener("abort", () => resolve(), { once: true });
    });
    await server.connect(transport);
    ctx.io.stderr(`herald mcp: serving ${ctx.url} on stdio (${ctx.credentialSource})\n`);
    await closed;
    await server.close();
    return exit.ok;
  },
};
