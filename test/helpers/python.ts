/**
 * The tools the generated-Python-client test needs, from Debian's packages: a Python with grpcio
 * and protobuf (python3-grpcio, python3-protobuf), protoc (protobuf-compiler) and
 * grpc_python_plugin (protobuf-compiler-grpc). HERALD_PYTHON names the Python to use.
 */
import { execFileSync } from "node:child_process";

function works(cmd: string, args: string[]): boolean {
  try {
    execFileSync(cmd, args, { stdio: "ignore", timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/** A Python that imports grpc and protobuf, if protoc and the gRPC plugin are there too. */
export function findPythonClientTools(): string | undefined {
  if (!works("protoc", ["--version"]) || !works("which", ["grpc_python_plugin"])) return undefined;
  const candidates = [process.env.HERALD_PYTHON, "/usr/bin/python3", "python3"];
  return candidates.find(
    (p): p is string => !!p && works(p, ["-c", "import grpc, google.protobuf"]),
  );
}

export const pythonClientPackages =
  "apt-get install protobuf-compiler protobuf-compiler-grpc python3-grpcio python3-protobuf";
