/** One HTTP answer as a suite inspects it. */
export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: { error?: string; code?: string; details?: string; status?: number; [key: string]: unknown } | undefined;
}

/**
 * Reads a fetch answer into a {@link Reply}. An SSE answer never ends by itself while its ask runs,
 * so its body is read for `sseMs` milliseconds (or to its end) and the request is then aborted with
 * `controller` (the one passed to `fetch`); any other body is read whole. Never throws for a body
 * that is not JSON (`body` is then undefined).
 */
export async function readReply(response: Response, controller: AbortController, sseMs = 300): Promise<Reply> {
  let text: string;
  if (response.headers.get('content-type')?.includes('text/event-stream')) {
    text = await readFor(response, sseMs);
    controller.abort();
  } else {
    text = await response.text();
  }
  let body: Reply['body'];
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/** Reads a body for `ms` milliseconds (or to its end) and returns the text. */
async function readFor(response: Response, ms: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const next = await Promise.race([
      reader.read(),
      new Promise<null>((r) => setTimeout(() => r(null), Math.max(1, deadline - Date.now()))),
    ]);
    if (next === null || next.done) break;
    text += decoder.decode(next.value, { stream: true });
  }
  await reader.cancel().catch(() => undefined);
  return text;
}
