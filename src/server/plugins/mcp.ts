/**
 * `/mcp`: Herald's MCP tools over Streamable HTTP (stateless: each POST is one exchange, answered
 * as an SSE stream so a long `ask` can report progress). The caller's `Authorization: Bearer`
 * API key or CLI token is verified here (401 without a valid one), then the tools act through the
 * public API on this same server with that credential: the same scopes, limits and rules as any
 * client, and nothing reaches another account's data.
 */
import type { AddressInfo } from "node:net";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { CredentialVerifier } from "../../db/index.ts";
import { parseCredential } from "../../domain/credentials.ts";
import type { FailedAuthThrottle } from "../../domain/failed-auth.ts";
import { addressThrottled } from "../../services/password-auth.ts";
import { bearerSecret } from "../interceptors/auth.ts";
import { originAllowed } from "../interceptors/session-cookie.ts";
import { problemFor, problemOf } from "../problem.ts";

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

function answer(reply: FastifyReply, p: ReturnType<typeof problemOf>) {
  return reply.code(p.status).headers(p.headers).type("application/problem+json").send(p.body);
}

const refuse = (req: FastifyRequest, reply: FastifyReply, detail: string) =>
  answer(reply, problemOf("unauthenticated", detail, req.id));

export interface McpOptions {
  credentials: CredentialVerifier;
  failures: FailedAuthThrottle;
  publicUrl: string | undefined;
}

/**
 * The exchange's caller, or the reply that refused it: a browser page of another site (the
 * Streamable HTTP transport's DNS-rebinding rule: 403 on a foreign Origin; a program sends
 * none), a throttled address, or a missing, wrong or unknown credential (counted as a failure).
 */
async function caller(req: FastifyRequest, reply: FastifyReply, o: McpOptions) {
  const origin = req.headers.origin;
  if (origin !== undefined && !originAllowed(origin, req.headers.host, o.publicUrl)) {
    return answer(
      reply,
      problemOf("permission_denied", `origin ${origin} may not use /mcp`, req.id),
    );
  }
  const wait = o.failures.blockedFor(req.ip);
  if (wait !== undefined) return answer(reply, problemFor(addressThrottled(wait), req.id));
  const secret = bearerSecret(req.headers.authorization);
  if (secret === undefined) {
    return refuse(
      req,
      reply,
      "missing credential: send Authorization: Bearer <API key or CLI token>",
    );
  }
  const kind = parseCredential(secret);
  const known = kind === "apiKey" || kind === "cliToken";
  if (!known || (await o.credentials.verify(kind, secret)) === undefined) {
    await o.failures.failed(req.ip);
    return refuse(
      req,
      reply,
      known
        ? "unknown, revoked or expired credential"
        : "the MCP endpoint takes a project API key (hk_…) or a CLI token (hc_…)",
    );
  }
  return { kind, secret };
}

export function registerMcp(app: FastifyInstance, o: McpOptions): void {
  app.post("/mcp", async (req, reply) => {
    const who = await caller(req, reply, o);
    if (!("secret" in who)) return who;
    const { kind, secret } = who;
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
