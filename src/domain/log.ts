/** The logging the use cases, persistence and delivery need: pino's shape, no transport's type. */
export interface Log {
  debug(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
}
