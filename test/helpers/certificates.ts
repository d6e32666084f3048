/** A key (RSA, or ECDSA on P-256) and a self-signed certificate made by openssl, valid a day (STARTTLS's tests). */
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

export async function selfSigned(
  keyFile: string,
  certFile: string,
  commonName: string,
  keyType: "rsa" | "ecdsa" = "rsa",
) {
  const newKey = keyType === "rsa" ? ["rsa:2048"] : ["ec", "-pkeyopt", "ec_paramgen_curve:P-256"];
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    ...newKey,
    "-nodes",
    "-keyout",
    keyFile,
    "-out",
    certFile,
    "-days",
    "1",
    "-subj",
    `/CN=${commonName}`,
  ]);
}
