/**
 * Fastify's options for Herald (src/server/options.ts): Herald's routes carry no JSON Schema, so
 * Fastify's schema compilers are never loaded; a route that declared one fails to register,
 * saying why, instead of being checked by a second validator nobody maintains.
 */
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config.ts";
import { serverOptions } from "../../../src/server/options.ts";

describe("serverOptions", () => {
  it("serves routes without a JSON Schema", async () => {
    const app = Fastify(serverOptions(loadConfig({}), false));
    app.get("/ping", async () => ({ ok: true }));
    const res = await app.inject({ method: "GET", url: "/ping" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    await app.close();
  });

  it("refuses a route that declares a JSON Schema, naming proto/", async () => {
    const app = Fastify(serverOptions(loadConfig({}), false));
    app.post("/typed", { schema: { body: { type: "object" } } }, async () => ({}));
    await expect(app.ready()).rejects.toThrow(
      /declare no JSON Schema: describe the message in proto/,
    );
    await app.close();
  });
});
