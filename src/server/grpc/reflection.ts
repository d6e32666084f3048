/**
 * gRPC server reflection, v1 and v1alpha, so that `grpcurl` and `buf curl` call Herald with no
 * schema at hand. It answers from the descriptors the generated code embeds: the services this
 * router serves and every file they import. HERALD_REFLECTION=0 leaves it out.
 *
 * v1alpha is the same protocol under another package (same field numbers): its messages are
 * translated to v1 through the wire format and answered by one implementation.
 */
import {
  create,
  type DescFile,
  type DescService,
  fromBinary,
  type MessageInitShape,
  toBinary,
} from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  ServerReflection,
  type ServerReflectionRequest,
  ServerReflectionRequestSchema,
  type ServerReflectionResponse,
  ServerReflectionResponseSchema,
} from "../../../gen/grpc/reflection/v1/reflection_pb.ts";
import {
  ServerReflectionRequestSchema as AlphaRequestSchema,
  ServerReflectionResponseSchema as AlphaResponseSchema,
  ServerReflection as ServerReflectionAlpha,
} from "../../../gen/grpc/reflection/v1alpha/reflection_pb.ts";

type Response = MessageInitShape<typeof ServerReflectionResponseSchema>["messageResponse"];

/** What reflection can describe: the served services and the files behind them. */
class Schema {
  readonly files = new Map<string, DescFile>();
  readonly symbols = new Map<string, DescFile>();
  readonly extensions = new Map<string, Map<number, DescFile>>();

  readonly services: readonly DescService[];

  constructor(services: readonly DescService[]) {
    this.services = services;
    for (const s of services) this.add(s.file);
  }

  private add(file: DescFile): void {
    if (this.files.has(file.name)) return;
    this.files.set(file.name, file);
    for (const t of nestedTypes(file)) {
      this.symbols.set(t.typeName, file);
      if (t.kind === "service")
        for (const m of t.methods) this.symbols.set(`${t.typeName}.${m.name}`, file);
      if (t.kind === "extension") {
        const byNumber = this.extensions.get(t.extendee.typeName) ?? new Map<number, DescFile>();
        byNumber.set(t.number, file);
        this.extensions.set(t.extendee.typeName, byNumber);
      }
    }
    for (const dep of file.dependencies) this.add(dep);
  }

  /** The file and everything it imports, serialized, the file first. */
  withImports(file: DescFile): Uint8Array[] {
    const seen = new Set<string>();
    const out: Uint8Array[] = [];
    const visit = (f: DescFile) => {
      if (seen.has(f.name)) return;
      seen.add(f.name);
      out.push(toBinary(FileDescriptorProtoSchema, f.proto));
      for (const dep of f.dependencies) visit(dep);
    };
    visit(file);
    return out;
  }
}

function answer(schema: Schema, req: ServerReflectionRequest["messageRequest"]): Response {
  const files = (file: DescFile | undefined, what: string): Response =>
    file
      ? {
          case: "fileDescriptorResponse",
          value: { fileDescriptorProto: schema.withImports(file) },
        }
      : { case: "errorResponse", value: { errorCode: 5, errorMessage: `${what} not found` } };
  switch (req.case) {
    case "listServices":
      return {
        case: "listServicesResponse",
        value: { service: schema.services.map((s) => ({ name: s.typeName })) },
      };
    case "fileByFilename":
      return files(schema.files.get(req.value), `file ${req.value}`);
    case "fileContainingSymbol":
      return files(schema.symbols.get(req.value), `symbol ${req.value}`);
    case "fileContainingExtension":
      return files(
        schema.extensions.get(req.value.containingType)?.get(req.value.extensionNumber),
        `extension ${req.value.extensionNumber} of ${req.value.containingType}`,
      );
    case "allExtensionNumbersOfType":
      return {
        case: "allExtensionNumbersResponse",
        value: {
          baseTypeName: req.value,
          extensionNumber: [...(schema.extensions.get(req.value)?.keys() ?? [])],
        },
      };
    default:
      return { case: "errorResponse", value: { errorCode: 3, errorMessage: "empty request" } };
  }
}

function respond(schema: Schema, req: ServerReflectionRequest): ServerReflectionResponse {
  return create(ServerReflectionResponseSchema, {
    validHost: req.host,
    originalRequest: req,
    messageResponse: answer(schema, req.messageRequest),
  });
}

/** Registers reflection over `services` (it lists itself too, as grpcurl expects). */
export function registerReflection(router: ConnectRouter, services: readonly DescService[]): void {
  const schema = new Schema([...services, ServerReflection, ServerReflectionAlpha]);
  router.service(ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const req of requests) yield respond(schema, req);
    },
  });
  router.service(ServerReflectionAlpha, {
    async *serverReflectionInfo(requests) {
      for await (const alpha of requests) {
        const req = fromBinary(ServerReflectionRequestSchema, toBinary(AlphaRequestSchema, alpha));
        const res = respond(schema, req);
        yield fromBinary(AlphaResponseSchema, toBinary(ServerReflectionResponseSchema, res));
      }
    },
  });
}
