/** A key and a self-signed certificate made by openssl, valid a day (STARTTLS's tests). */
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

export async function selfSigned(keyFile: string, certFile: string, commonName: string) {
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
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
