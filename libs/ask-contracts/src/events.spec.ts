import { askStreamKey, TERMINAL_EVENTS } from './events';
import { QueueName } from './queues';

describe('ask contracts', () => {
  it('names the stream of an ask after its id', () => {
    expect(askStreamKey('a1')).toBe('ask:a1:events');
  });
  it('ends a stream only on done or error', () => {
    expect([...TERMINAL_EVENTS].sort()).toEqual(['done', 'error']);
  });
  it('keeps the permanent queue names', () => {
    expect(Object.values(QueueName)).toEqual(['ask-retrieval', 'ask-synthesis', 'ask-ingestion', 'ask-memory']);
  });
});
