import { EventEmitter } from 'node:events';
import { QUEUE_ERROR_LOG_INTERVAL_MS, QueueErrorLog } from './queues.module';

/** A queue stand-in: a name and the `error` events of an EventEmitter (as a BullMQ Queue emits them). */
function queue(name: string): EventEmitter & { name: string } {
  return Object.assign(new EventEmitter(), { name });
}

describe('QueueErrorLog', () => {
  it('takes an error that would otherwise be thrown (an EventEmitter error with no listener)', () => {
    const unheard = queue('ask-memory');
    expect(() => unheard.emit('error', new Error('Connection is closed.'))).toThrow('Connection is closed.');

    const heard = queue('ask-memory');
    const lines: string[] = [];
    new QueueErrorLog(
      [heard],
      (line) => lines.push(line),
      () => 0,
    );
    expect(() => heard.emit('error', new Error('Connection is closed.'))).not.toThrow();
    expect(lines).toEqual(['queue ask-memory: Connection is closed.']);
  });

  it('logs one line per distinct message (digits folded) per interval, with the count since', () => {
    let now = 0;
    const q = queue('ask-synthesis');
    const lines: string[] = [];
    new QueueErrorLog(
      [q],
      (line) => lines.push(line),
      () => now,
    );
    q.emit('error', new Error('connect ECONNREFUSED 127.0.0.1:6390'));
    now = 2_000;
    q.emit('error', new Error('connect ECONNREFUSED 127.0.0.1:6391'));
    now = 4_000;
    q.emit('error', new Error('connect ECONNREFUSED 127.0.0.1:6390'));
    now = QUEUE_ERROR_LOG_INTERVAL_MS + 1;
    q.emit('error', new Error('connect ECONNREFUSED 127.0.0.1:6390'));
    expect(lines).toEqual([
      'queue ask-synthesis: connect ECONNREFUSED 127.0.0.1:6390',
      'queue ask-synthesis: connect ECONNREFUSED 127.0.0.1:6390 (2 more since the last line)',
    ]);
  });
});
