/**
 * Builds the web console from web/ into web/dist/ (not committed): the app and the service
 * worker bundled with rolldown (TypeScript, the generated clients and connect-web), the page,
 * the stylesheet, the manifest and the icons (PNG ones drawn here, so no image tool is needed).
 * Run by `npm install` (postinstall) and by the test setup; `npm run build:web` by hand.
 */
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { deflateSync } from "node:zlib";
import { build } from "rolldown";

const web = resolve(import.meta.dirname, "../web");
const dist = join(web, "dist");

/** A square PNG icon: a rounded indigo tile with a white bell, drawn pixel by pixel. */
function icon(size: number): Buffer {
  const raw = Buffer.alloc(size * (size * 4 + 1));
  const c = size / 2;
  for (let y = 0; y < size; y++) {
    raw[y * (size * 4 + 1)] = 0;
    for (let x = 0; x < size; x++) {
      const u = (x + 0.5) / size - 0.5;
      const v = (y + 0.5) / size - 0.5;
      const corner = Math.max(Math.abs(u) - 0.3, 0) ** 2 + Math.max(Math.abs(v) - 0.3, 0) ** 2;
      const inTile = corner <= 0.2 ** 2;
      // Bell: a dome and a skirt, a clapper below.
      const dome = u * u + (v + 0.05) ** 2 < 0.2 ** 2 && v < 0.1;
      const skirt = v >= 0.05 && v < 0.18 && Math.abs(u) < 0.2 + (v - 0.05) * 0.8;
      const clapper = u * u + (v - 0.25) ** 2 < 0.055 ** 2;
      const white = dome || skirt || clapper;
      const o = y * (size * 4 + 1) + 1 + x * 4;
      const [r, g, b] = white ? [255, 255, 255] : [79, 70, 229];
      raw[o] = r;
      raw[o + 1] = g;
      raw[o + 2] = b;
      raw[o + 3] = inTile ? 255 : 0;
    }
  }
  void c;
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([len, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

function crc32(data: Buffer): number {
  let c = ~0;
  for (const byte of data) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c >>> 0;
}

export async function buildWeb(): Promise<void> {
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(join(dist, "assets"), { recursive: true });
  await build({
    input: join(web, "src", "main.ts"),
    output: { file: join(dist, "assets", "console.js"), format: "esm", minify: true },
    logLevel: "warn",
  });
  await build({
    input: join(web, "src", "sw.ts"),
    output: { file: join(dist, "sw.js"), format: "iife", minify: true },
    logLevel: "warn",
  });
  for (const f of ["index.html", "manifest.webmanifest", "icon.svg"])
    copyFileSync(join(web, f), join(dist, f));
  copyFileSync(join(web, "console.css"), join(dist, "assets", "console.css"));
  writeFileSync(join(dist, "icon-192.png"), icon(192));
  writeFileSync(join(dist, "icon-512.png"), icon(512));
}

if (import.meta.main) await buildWeb();
