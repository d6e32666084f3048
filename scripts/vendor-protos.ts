/**
 * Refreshes the committed third-party .proto sources under `third_party/proto/` that come from
 * npm packages (`npm run vendor:protos`; CI runs it and fails if the committed copies differ).
 * They are committed so that the schema builds without Node: a Go or Python team runs `buf`
 * (or `protoc -I proto -I third_party/proto`) on a checkout. See third_party/proto/README.md.
 *
 * - google/api (http annotations) and google/rpc (status, error details) are copied from the npm
 *   package `google-proto-files`.
 * - buf/validate/validate.proto ships in no npm package as source, but `@bufbuild/protovalidate`
 *   embeds its file descriptor. We print `.proto` source from that descriptor. Field options
 *   (the CEL of predefined rules) are left out: `buf` only needs the declarations to compile our
 *   contracts, and at run time protovalidate uses its own embedded descriptor, which has them.
 */
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { isFieldSet } from "@bufbuild/protobuf";
import {
  type DescriptorProto,
  type EnumDescriptorProto,
  type FieldDescriptorProto,
  FieldDescriptorProtoSchema,
  type FileDescriptorProto,
} from "@bufbuild/protobuf/wkt";

const root = join(import.meta.dirname, "..");
const out = join(root, "third_party/proto");
const require = createRequire(import.meta.url);

const copied = [
  "google/api/annotations.proto",
  "google/api/http.proto",
  "google/rpc/error_details.proto",
  "google/rpc/status.proto",
];

/** Scalar field types by FieldDescriptorProto.Type number. */
const scalarNames: Record<number, string> = {
  1: "double",
  2: "float",
  3: "int64",
  4: "uint64",
  5: "int32",
  6: "fixed64",
  7: "fixed32",
  8: "bool",
  9: "string",
  12: "bytes",
  13: "uint32",
  15: "sfixed32",
  16: "sfixed64",
  17: "sint32",
  18: "sint64",
};
const typeMessage = 11;
const typeEnum = 14;
const labelRepeated = 3;
const maxFieldNumber = 536870911;

function fieldType(f: FieldDescriptorProto): string {
  if (f.type === typeMessage || f.type === typeEnum) return f.typeName;
  const name = scalarNames[f.type];
  if (name === undefined) throw new Error(`unsupported field type ${f.type} for ${f.name}`);
  return name;
}

function printField(f: FieldDescriptorProto, indent: string, inOneof: boolean): string {
  const label = inOneof ? "" : f.label === labelRepeated ? "repeated " : "optional ";
  return `${indent}${label}${fieldType(f)} ${f.name} = ${f.number};\n`;
}

function printRange(start: number, endExclusive: number): string {
  const end = endExclusive - 1;
  if (end === start) return `${start}`;
  return `${start} to ${end >= maxFieldNumber ? "max" : end}`;
}

function printEnum(e: EnumDescriptorProto, indent: string): string {
  let s = `${indent}enum ${e.name} {\n`;
  for (const v of e.value) s += `${indent}  ${v.name} = ${v.number};\n`;
  for (const r of e.reservedRange) s += `${indent}  reserved ${printRange(r.start, r.end + 1)};\n`;
  return `${s}${indent}}\n`;
}

function printMessage(m: DescriptorProto, indent: string): string {
  const inner = `${indent}  `;
  let s = `${indent}message ${m.name} {\n`;
  for (const e of m.enumType) s += printEnum(e, inner);
  for (const n of m.nestedType) s += printMessage(n, inner);
  const printedOneofs = new Set<number>();
  const oneofOf = (f: FieldDescriptorProto) =>
    isFieldSet(f, FieldDescriptorProtoSchema.field.oneofIndex) ? f.oneofIndex : undefined;
  for (const f of m.field) {
    const oneofIndex = oneofOf(f);
    if (oneofIndex === undefined) {
      s += printField(f, inner, false);
      continue;
    }
    if (printedOneofs.has(oneofIndex)) continue;
    printedOneofs.add(oneofIndex);
    s += `${inner}oneof ${m.oneofDecl[oneofIndex]?.name} {\n`;
    for (const member of m.field.filter((x) => oneofOf(x) === oneofIndex)) {
      s += printField(member, `${inner}  `, true);
    }
    s += `${inner}}\n`;
  }
  for (const r of m.extensionRange) s += `${inner}extensions ${printRange(r.start, r.end)};\n`;
  for (const r of m.reservedRange) s += `${inner}reserved ${printRange(r.start, r.end)};\n`;
  for (const n of m.reservedName) s += `${inner}reserved "${n}";\n`;
  return `${s}${indent}}\n`;
}

function printFile(p: FileDescriptorProto): string {
  let s = "// Generated at install time by scripts/vendor-protos.ts from the descriptor embedded\n";
  s +=
    "// in @bufbuild/protovalidate (`npm run vendor:protos`). Do not edit. The predefined rules'\n";
  s +=
    "// CEL options are left out: clients need the declarations, the server its own descriptor.\n";
  s += `syntax = "proto2";\n\npackage ${p.package};\n\n`;
  for (const d of p.dependency) s += `import "${d}";\n`;
  s += "\n";
  for (const e of p.enumType) s += printEnum(e, "");
  for (const m of p.messageType) s += printMessage(m, "");
  for (const x of p.extension) {
    s += `extend ${x.extendee} {\n  optional ${x.typeName} ${x.name} = ${x.number};\n}\n`;
  }
  return s;
}

for (const dir of ["google", "buf"]) rmSync(join(out, dir), { recursive: true, force: true });
const googleRoot = dirname(require.resolve("google-proto-files/package.json"));
for (const path of copied) {
  mkdirSync(dirname(join(out, path)), { recursive: true });
  cpSync(join(googleRoot, path), join(out, path));
}
const { file_buf_validate_validate } = await import(
  "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js"
);
mkdirSync(join(out, "buf/validate"), { recursive: true });
writeFileSync(
  join(out, "buf/validate/validate.proto"),
  printFile(file_buf_validate_validate.proto),
);
