/**
 * `/mcp`: Herald's MCP tools over Streamable HTTP (stateless: each POST is one exchange, answered
 * as an SSE stream so a long `ask` can report progress). The caller's `Authorization: Bearer`
 * API key or CLI token is verified here (401 without a valid one), then the tools act through the
 * public API on this same server with that credential: the same scopes, limits and rules as any
 * client, and nothing reaches another account's data.
 */
import type { AddressInfo } from "node:net";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { CredentialVerifier } from "../../db/repositories/credential-verifier.ts";
import { parseCredential } from "../../domain/credentials.ts";
import { bearerSecret } from "../interceptors/auth.ts";
import { problemOf } from "../problem.ts";

/** This server, as seen from itself (the tools call the API here). */
function selfUrl(req: FastifyRequest): string {
  const a = req.server.server.address() as AddressInfo;
  const host =
    a.address === "0.0.0.0" || a.address === "::"
      ? "127.0.0.1"
      : a.family === "IPv6"
        ? `[${a.address}]`
        : a.address;
  return `http://${host}:${a.port}`;
}

/**
 * The MCP SDK, zod and the client SDK load with the first exchange (Node keeps them after): a
 * server no agent talks to never pays their memory.
 */
const mcpModules = () =>
  Promise.all([
    import("../../mcp/tools.ts"),
    import("../../sdk/index.ts"),
    import("@modelcontextprotocol/sdk/server/streamableHttp.js"),
  ]);

function refuse(req: FastifyRequest, reply: FastifyReply, detail: string) {
  const p = problemOf("unauthenticated", detail, req.id);
  return reply.code(p.status).headers(p.headers).type("application/problem+json").send(p.body);
}

export function registerMcp(app: FastifyInstance, credentials: CredentialVerifier): void {
  app.post("/mcp", async (req, reply) => {
    const secret = bearerSecret(req.headers.authorization);
    const kind = secret === undefined ? undefined : parseCredential(secret);
    if (secret === undefined) {
      return refuse(
        req,
        reply,
        "missing credential: send Authorization: Bearer <API key or CLI token>",
      );
    }
    if (kind !== "apiKey" && kind !== "cliToken") {
      return refuse(
        req,
        reply,
        "the MCP endpoint takes a project API key (hk_…) or a CLI token (hc_…)",
      );
    }
    if ((await credentials.verify(kind, secret)) === undefined) {
      return refuse(req, reply, "unknown, revoked or expired credential");
    }
    const project = req.headers["herald-project"];
    const [{ createHeraldMcpServer }, { Herald }, { StreamableHTTPServerTransport }] =
      await mcpModules();
    const herald = new Herald({
      ...(kind === "apiKey" ? { apiKey: secret } : { token: secret }),
      baseUrl: selfUrl(req),
      ...(typeof project === "string" && { project }),
      maxRetries: 0,
    });
    const server = createHeraldMcpServer(herald);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    reply.hijack();
    reply.raw.on("close", () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req.raw, reply.raw, req.body);
    } catch (err) {
      // The reply is ours (hijacked): answer what can still be answered, and say why in the log.
      req.log.error({ err }, "the MCP exchange failed");
      if (!reply.raw.headersSent) {
        const p = problemOf("internal", "the MCP exchange failed", req.id);
        reply.raw.writeHead(p.status, { "content-type": "application/problem+json" });
        reply.raw.end(JSON.stringify(p.body));
      } else reply.raw.end();
    }
  });
  // Stateless: no server-initiated stream to open (GET) and no session to end (DELETE).
  const notHere = async (_req: FastifyRequest, reply: FastifyReply) =>
    reply.code(405).header("allow", "POST").send({ error: "POST JSON-RPC messages to /mcp" });
  app.get("/mcp", notHere);
  app.delete("/mcp", notHere);
}
