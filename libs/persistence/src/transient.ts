/**
 * PostgreSQL failures that pass by themselves: the server out of connections (SQLSTATE 53300
 * `too_many_connections`, 53000), shutting down or starting (57P01–57P03), a connection exception
 * (class 08), a refused or dropped socket, "Connection terminated", and pg-pool's "timeout exceeded
 * when trying to connect" (the pool at its cap for DATABASE_CONNECT_TIMEOUT_MS). Checked on the
 * error and on TypeORM's `driverError`.
 */
export function isTransientDbError(exception: unknown): boolean {
  for (
    let error = exception as { code?: string; message?: string; driverError?: unknown } | undefined, depth = 0;
    error && depth < 3;
    depth++
  ) {
    if (typeof error.code === 'string' && TRANSIENT_CODE.test(error.code)) return true;
    if (typeof error.message === 'string' && TRANSIENT_MESSAGE.test(error.message)) return true;
    error = error.driverError as typeof error;
  }
  return false;
}

const TRANSIENT_CODE = /^(53000|53300|57P0[123]|08\d{3}|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH)$/;
const TRANSIENT_MESSAGE = /^(Connection terminated|timeout exceeded when trying to connect)/;

/** How {@link withTransientRetry} retries: attempts in all, and the first wait (doubled each time), ms. */
export interface TransientRetry {
  attempts: number;
  firstDelayMs: number;
}

/**
 * Runs `write` and retries it while it fails with a {@link isTransientDbError} error: 6 attempts,
 * waiting 100, 200, 400, 800 and 1,600 ms between them (3.1 s in all) by default. Other errors, and
 * the last transient one, are thrown. For writes that must not be lost to a saturated pool (the
 * provider-call ledger); `write` must be safe to repeat after a failure.
 */
export async function withTransientRetry<T>(
  write: () => Promise<T>,
  { attempts, firstDelayMs }: TransientRetry = { attempts: 6, firstDelayMs: 100 },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (attempt >= attempts || !isTransientDbError(err)) throw err;
      await new Promise((r) => setTimeout(r, firstDelayMs * 2 ** (attempt - 1)));
    }
  }
}
