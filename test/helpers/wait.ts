/**
 * Waits for something a test expects to happen (a row written off the request path, a push
 * received), checking every 20 ms: the test goes on as soon as it happened, and fails by its
 * own assertion if it never does within `timeoutMs`.
 */
export async function waitFor(
  happened: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await happened()) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
}
