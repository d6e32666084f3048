/** Who is calling: established by authentication, read by every use case. */
export type Principal =
  | {
      kind: "apiKey";
      credentialId: string;
      accountId: string;
      projectId: string;
      scopes: readonly string[];
    }
  | { kind: "cliToken"; credentialId: string; accountId: string }
  /** A device: `credentialId` is the device's id. */
  | { kind: "device"; credentialId: string; accountId: string };

/**
 * An inbound hook publishing: it acts as a key of its project that may only publish (the hook
 * intake calls nothing but Notify with it), under its own rate bucket (its id) and its account's.
 */
export function hookPrincipal(hook: { id: string; project_id: string; account_id: string }) {
  return {
    kind: "apiKey",
    credentialId: hook.id,
    accountId: hook.account_id,
    projectId: hook.project_id,
    scopes: ["write"],
  } as const satisfies Principal;
}
