/**
 * What a request costs this machine in Node itself, measured in scenario 7's run and shape: h2load
 * drives a bare Node server (no Herald, no database) with the same requests, 50 HTTP/1.1
 * connections for REST and 10 × 10 h2c streams for gRPC, and the server process's CPU time is
 * divided by its answers. REST's floor is a Fastify route answering the publish's path from
 * memory (the issue's "bare Fastify route"); gRPC's is node:http2 answering one message with its
 * trailers. Herald's CPU per publish is also read as a multiple of it, which the machine's speed
 * at that hour moves less than the µs themselves (BENCHMARKS.md, thirty-third session).
 */
import { spawn } from "node:child_process";
import { log, record, root, secs } from "./context.ts";
import { cpuMeter } from "./cpu-time.ts";
import { h2load } from "./h2load.ts";

/** The bare servers, each printing its URL: the answers are a publish's size, from memory. */
const servers: Record<"rest" | "grpc", string> = {
  rest: `const f=require('fastify')();const a=JSON.stringify({notification:{id:'0',title:'Deploy finished',status:'queued'},replayed:false});
f.post('/v1/notify',async(q,r)=>r.code(202).type('application/json').send(a));
f.listen({port:0,host:'127.0.0.1'}).then(u=>console.log(u))`,
  grpc: `const h=require('node:http2');const m=Buffer.alloc(5+60);m.writeUInt32BE(60,1);
const s=h.createServer();s.on('stream',(t)=>{t.on('data',()=>{});t.on('end',()=>{
t.once('wantTrailers',()=>t.sendTrailers({'grpc-status':'0'}));
t.respond({':status':200,'content-type':'application/grpc'},{waitForTrailers:true});t.end(m);});});
s.listen(0,'127.0.0.1',()=>console.log('http://127.0.0.1:'+s.address().port))`,
};

/** µs of a bare server's CPU per answer over `protocol`, at h2load's maximum; 0 if it failed. */
export async function bareMicrosPerAnswer(protocol: "rest" | "grpc"): Promise<number> {
  const bare = spawn(process.execPath, ["-e", servers[protocol]], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      bare.once("exit", (code) => reject(new Error(`the bare server exited (${code})`)));
      bare.stdout?.once("data", (c: Buffer) => resolve(c.toString().trim()));
    });
    const target = { url, authorization: "Bearer none" };
    await h2load(target, protocol, Math.min(2, secs(2))); // warm-up
    const cpu = cpuMeter(bare.pid as number);
    const run = await h2load(target, protocol, secs(5));
    const micros = Math.round((cpu.seconds() * 1e6) / Math.max(1, run.answered));
    record(
      `CPU per answer of a bare Node server, ${protocol === "rest" ? "REST (Fastify)" : "gRPC (node:http2)"} (h2load, as scenario 7)`,
      `${micros} µs of its process's CPU per answer; ${run.perSecond}/s, errors ${run.errors}`,
      { micros, perSecond: run.perSecond, errors: run.errors },
    );
    return run.errors === 0 ? micros : 0;
  } catch (err) {
    log(`  the bare ${protocol} server failed: ${(err as Error).message}`);
    return 0;
  } finally {
    bare.kill();
  }
}
