/**
 * The REST bindings of an RPC, read from its `google.api.http` annotation: verb, Fastify path,
 * the path's variables, and where the body and the response body go.
 */
import type { HTTPMethods } from "fastify";
import type { HttpRule } from "../../../gen/google/api/http_pb.ts";

export interface Binding {
  verb: HTTPMethods;
  /** Fastify path, e.g. `/v1/notifications/:id`. */
  path: string;
  /** Template variables, each a top-level field of the request. */
  variables: string[];
  body: string;
  responseBody: string;
}

export function bindingsOf(rule: HttpRule): Binding[] {
  const out: Binding[] = [];
  for (const r of [rule, ...rule.additionalBindings]) {
    const p = r.pattern;
    if (p.case === undefined) continue;
    const [verb, template] =
      p.case === "custom"
        ? [p.value.kind.toUpperCase(), p.value.path]
        : [p.case.toUpperCase(), p.value];
    const variables: string[] = [];
    const path = template.replace(/\{([a-z0-9_]+)(=[^}]*)?\}/g, (_, name: string) => {
      variables.push(name);
      return `:${name}`;
    });
    if (path.includes("{")) throw new Error(`unsupported path template ${template}`);
    out.push({
      verb: verb as HTTPMethods,
      path,
      variables,
      body: r.body,
      responseBody: r.responseBody,
    });
  }
  return out;
}
