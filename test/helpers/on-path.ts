import { accessSync, constants } from "node:fs";
import { join } from "node:path";

/** Whether an executable of that name is on PATH. */
export function onPath(command: string): boolean {
  return (process.env.PATH ?? "").split(":").some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
