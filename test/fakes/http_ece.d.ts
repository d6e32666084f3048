/** The part of http_ece (a dependency of web-push) that the fake Web Push service uses. */
declare module "http_ece" {
  import type { ECDH } from "node:crypto";
  export function decrypt(
    buffer: Buffer,
    params: { version: "aes128gcm"; privateKey: ECDH; authSecret: string },
  ): Buffer;
  const ece: { decrypt: typeof decrypt };
  export default ece;
}
