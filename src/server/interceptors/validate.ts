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

export function createValidateInterceptor(rules: Record<string, DomainRule>): Interceptor {
  const validator = createValidator();
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
    violations.push(...(rules[rpcName(req.method)]?.(req.message, req.header) ?? []));
    if (violations.length > 0) {
      // Every violation in the message too: gRPC tools show the message, the details only as bytes.
      const each = violations.map((v) => `${v.field || "body"} ${v.message}`).join("; ");
      throw heraldError("invalid_argument", `invalid request: ${each}`, { violations });
    }
    return next(req);
  };
}
