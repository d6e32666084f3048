// npm install's first step (preinstall): plain CommonJS, so that it runs on any Node and says in
// one line what to do, instead of a later step failing with "bad option".
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 17)) {
  process.stderr.write(
    `herald needs Node.js 22.17 or newer (this is ${process.version}): install Node 24 from https://nodejs.org or with your version manager (nvm install 24), then run npm install again.\n`,
  );
  process.exit(1);
}
