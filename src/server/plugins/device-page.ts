/**
 * Where a device login's verification_uri points: there is no web console yet, so it says how
 * to approve from a signed-in CLI.
 */
import type { FastifyInstance } from "fastify";

export function registerDevicePage(app: FastifyInstance): void {
  app.get("/device", async (req, reply) => {
    const code = (req.query as { user_code?: string }).user_code ?? "<CODE>";
    return reply
      .type("text/plain; charset=utf-8")
      .send(
        `To sign in that device, approve its code from a machine where you are signed in:\n\n` +
          `  herald login --approve ${code}\n\n(or call AuthService.ApproveLogin with your CLI token)\n`,
      );
  });
}
