/**
 * Herald's backup archive: a gzip-compressed tar (POSIX ustar) of plain files, so that an
 * operator can look inside with `tar tzf`. Only what backups need: regular files with short
 * names, written and read as streams (a large table never sits in memory whole).
 */
import { once } from "node:events";
import { createReadStream, createWriteStream, mkdirSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { pipeline } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";

const block = 512;

function header(name: string, size: number): Buffer {
  if (Buffer.byteLength(name) > 100) throw new Error(`archive entry name too long: ${name}`);
  const h = Buffer.alloc(block);
  const field = (offset: number, length: number, value: string) => h.write(value, offset, length);
  const octal = (offset: number, length: number, n: number) =>
    field(offset, length, `${n.toString(8).padStart(length - 1, "0")}\0`);
  field(0, 100, name);
  octal(100, 8, 0o600);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, size);
  octal(136, 12, Math.floor(Date.now() / 1000));
  field(148, 8, " ".repeat(8)); // the checksum counts its own field as spaces
  field(156, 1, "0");
  field(257, 8, "ustar\x0000");
  let sum = 0;
  for (const byte of h) sum += byte;
  field(148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return h;
}

/** Writes the files (name in the archive → path on disk) to `file`, gzip-compressed. */
export async function writeArchive(file: string, entries: [string, string][]): Promise<void> {
  const gzip = createGzip();
  const done = pipeline(gzip, createWriteStream(file, { mode: 0o600 }));
  // A write that fails (a full disk) ends the pipeline at once, while entries are still being
  // read: each wait races it, so the failure ends this call, and the end awaits it. Before, its
  // rejection went unheard and ended the process with a stack.
  done.catch(() => {});
  const write = async (chunk: Buffer) => {
    if (!gzip.write(chunk)) await Promise.race([once(gzip, "drain"), done]);
  };
  for (const [name, path] of entries) {
    const size = statSync(path).size;
    await write(header(name, size));
    for await (const chunk of createReadStream(path)) await write(chunk as Buffer);
    if (size % block !== 0) await write(Buffer.alloc(block - (size % block)));
  }
  await write(Buffer.alloc(block * 2));
  gzip.end();
  await done;
}

/** Extracts an archive made by writeArchive into `dir`; returns the names it held. */
export async function extractArchive(file: string, dir: string): Promise<string[]> {
  const names: string[] = [];
  let pending = Buffer.alloc(0);
  let current: { out: ReturnType<typeof createWriteStream>; left: number; pad: number } | undefined;
  // A file that cannot be written (a full disk) ends the extraction with why, never unheard.
  let failure: Error | undefined;
  for await (const chunk of createReadStream(file).pipe(createGunzip())) {
    if (failure) throw failure;
    pending = Buffer.concat([pending, chunk as Buffer]);
    for (;;) {
      if (current) {
        const take = Math.min(current.left, pending.length);
        if (take > 0 && !current.out.write(pending.subarray(0, take))) {
          await once(current.out, "drain");
        }
        current.left -= take;
        pending = pending.subarray(take);
        if (current.left > 0) break;
        if (pending.length < current.pad) break;
        pending = pending.subarray(current.pad);
        current.out.end();
        await once(current.out, "close");
        if (failure) throw failure;
        current = undefined;
      }
      if (pending.length < block) break;
      const h = pending.subarray(0, block);
      pending = pending.subarray(block);
      const name = h.subarray(0, 100).toString("utf8").replace(/\0.*$/s, "");
      if (name === "") continue; // the end-of-archive blocks
      const size = Number.parseInt(h.subarray(124, 136).toString("utf8").replace(/\0.*$/s, ""), 8);
      const safe = normalize(name);
      if (safe.startsWith("..") || safe.startsWith("/")) throw new Error(`unsafe entry: ${name}`);
      mkdirSync(dirname(join(dir, safe)), { recursive: true });
      names.push(safe);
      const out = createWriteStream(join(dir, safe), { mode: 0o600 });
      out.on("error", (err) => {
        failure ??= err;
      });
      current = { out, left: size, pad: (block - (size % block)) % block };
    }
  }
  if (current) throw new Error("the archive ends in the middle of a file");
  return names;
}
