module.exports = {
  ...require('../../jest.preset.js'),
  displayName: 'ask-e2e',
  rootDir: __dirname,
  // Starts the three apps as processes against the real PostgreSQL and Redis.
  // 180 s per test, set in a setup file: `testTimeout` is not a project option (jest warns "Unknown
  // option" when the root config runs this one as a project).
  setupFilesAfterEnv: ['<rootDir>/jest.setup.js'],
};
