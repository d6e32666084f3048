/**
 * Input validation for every surface: the proto's `buf.validate` rules (protovalidate), the
 * domain rules protovalidate cannot express, and what the REST shim found while transcoding,
 * reported together so that a client learns about every bad field in one answer.
 */
import { pathToString } from "@bufbuild/protobuf/reflect";
import { createValidator } from "@bufbuild/protovalidate";
import type { Interceptor } from "@connectrpc/connect";
import { type DomainRule, explainViolation } from "../../domain/notify-rules.ts";
import { type FieldViolation, heraldError } from "../../errors.ts";
import { rpcName } from "../authz.ts";
import { restDecodeKey } from "../context.ts";

/**
 * Herald's `string.pattern` rules with the platform's RegExp instead of protovalidate's default
 * RE2 port (profiled: about 1 µs and 2 KB of garbage per publish for the topic alone). RE2 is
 * there to keep matching linear; the platform's engine is linear too for the patterns Herald
 * writes (anchored, bounded repetition, no repeated group), and only those are accepted: a
 * pattern with unbounded repetition (`*`, `+`) or a repeated group fails, saying so, and a
 * unit test runs every pattern in proto/ through this check.
 */
const compiled = new Map<string, RegExp>();
export function nativeRegexMatch(pattern: string, against: string): boolean {
  let re = compiled.get(pattern);
  if (re === undefined) {
    const bare = pattern.replace(/\\./g, "");
    if (!pattern.startsWith("^") || !pattern.endsWith("$") || /[*+]|\)\{/.test(bare)) {
      throw new Error(
        `pattern ${pattern} is not anchored with bounded repetition: keep RE2 for it`,
      );
    }
    re = new RegExp(pattern, "u");
    compiled.set(pattern, re);
  }
  return re.test(against);
}

export function createValidateInterceptor(rules: Record<string, DomainRule>): Interceptor {
  const validator = createValidator({ regexMatch: nativeRegexMatch });
  return (next) => async (req) => {
    if (req.stream) return next(req);
    const violations: FieldViolation[] = [...(req.contextValues.get(restDecodeKey) ?? [])];
    const reported = new Set(violations.map((v) => v.field));
    const result = validator.validate(req.method.input, req.message);
    if (result.kind === "error") throw result.error;
    for (const v of result.violations ?? []) {
      const field = pathToString(v.field);
      // A field the shim could not decode is absent from the message: do not report it twice.
      if (!reported.has(field)) {
        violations.push({
          field,
          message: explainViolation(field, v.ruleId, v.message, req.message),
        });
      }
    }
    const more = rules[rpcName(req.method)]?.(req.message, req.header) ?? [];
    if (more.length > 0) {
      // A domain rule may say again what a proto rule said (click_url's scheme): said once.
      const said = new Set(violations.map((v) => `${v.field}\n${v.message}`));
      violations.push(...more.filter((v) => !said.has(`${v.field}\n${v.message}`)));
    }
    if (violations.length > 0) {
      // Every violation in the message too: gRPC tools show the message, the details only as bytes.
      const each = violations.map((v) => `${v.field || "body"} ${v.message}`).join("; ");
      throw heraldError("invalid_argument", `invalid request: ${each}`, { violations });
    }
    return next(req);
  };
}
