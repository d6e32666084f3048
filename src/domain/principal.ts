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
