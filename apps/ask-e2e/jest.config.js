module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'ask-e2e',
  rootDir: __dirname,
  // Starts the three apps as processes against the real PostgreSQL and Redis.
  testTimeout: 180_000,
};
