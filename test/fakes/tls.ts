/**
 * A certificate for 127.0.0.1 and localhost, made once per test file, that the real client
 * libraries are told to trust (verification stays on).
 */
import { generate } from "selfsigned";

let pems: Promise<{ cert: string; key: string }> | undefined;

export function testCertificate(): Promise<{ cert: string; key: string }> {
  pems ??= generate([{ name: "commonName", value: "localhost" }], {
    keyType: "ec",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true },
      { name: "keyUsage", digitalSignature: true, keyCertSign: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "localhost" },
          { type: 2, value: "fcm.googleapis.com" },
          { type: 2, value: "oauth2.googleapis.com" },
          { type: 7, ip: "127.0.0.1" },
        ],
      },
    ],
  }).then((r) => ({ cert: r.cert, key: r.private }));
  return pems;
}
