// The types of running-builds.mjs (plain JavaScript, for scripts/run.mjs on any Node).
export function holdBuild(build: string): void;
export function buildInUse(build: string): boolean;
