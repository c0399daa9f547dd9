/** `cluster-key-slot` (ioredis' own dependency) ships no types: the Redis Cluster hash slot of a key. */
declare module 'cluster-key-slot' {
  /** The hash slot (0 … 16383) of `key`, honouring `{hash tags}` as Redis Cluster does. */
  function calculateSlot(key: string | Buffer): number;
  export default calculateSlot;
}
