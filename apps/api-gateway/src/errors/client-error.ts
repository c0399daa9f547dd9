import { maxHeaderSize, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { AskError, AskErrorCode } from '@ask/ask-errors';

/** The typed answers to requests Node's HTTP parser refuses before any route runs. */
function parserRefusal(code: string | undefined): { status: number; reason: string; error: AskError } {
  if (code === 'HPE_HEADER_OVERFLOW')
    return {
      status: 431,
      reason: 'Request Header Fields Too Large',
      error: new AskError(AskErrorCode.InvalidRequest, {
        status: 431,
        error: 'request header fields too large',
        details: `headers: the request line and headers exceed the ${maxHeaderSize}-byte limit`,
      }),
    };
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return {
      status: 408,
      reason: 'Request Timeout',
      error: new AskError(AskErrorCode.InvalidRequest, {
        status: 408,
        error: 'request timeout',
        details: 'request: the headers or body did not arrive in time',
      }),
    };
  return {
    status: 400,
    reason: 'Bad Request',
    error: new AskError(AskErrorCode.InvalidRequest, {
      error: 'malformed request',
      details: 'request: not a valid HTTP/1.1 request',
    }),
  };
}

/**
 * Answers what Node's HTTP parser refuses (a request line or headers over `http.maxHeaderSize`,
 * 16 KiB unless `--max-http-header-size` changes it: 431; a request
 * that is not HTTP: 400; headers or body too slow: 408) with the typed JSON body every other error
 * has, instead of Node's bare status line, then closes the connection. A socket already reset or
 * half-answered is destroyed. Installed by `createGateway` on the app's HTTP server.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const answered = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (err.code === 'ECONNRESET' || !socket.writable || answered) {
      socket.destroy();
      return;
    }
    const { status, reason, error } = parserRefusal(err.code);
    const body = JSON.stringify(error.toBody());
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
