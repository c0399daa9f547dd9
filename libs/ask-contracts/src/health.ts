/**
 * Response header of every app's `GET /health` (the gateway's route and each worker's health port):
 * the answering process's id (`process.pid`, decimal). It lets whoever started the process (the
 * stack in tools/stack) tell its own child from another process listening on the same port: a
 * gateway that died at boot with EADDRINUSE once went unnoticed because another process answered.
 */
export const PROCESS_ID_HEADER = 'x-process-id';
